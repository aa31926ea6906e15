// The console's Sign-ins tab in a real headless Chromium: the authorization server's clients and
// grants, a grant revoked and a client blocked from their rows (each after a confirmation).
// Prints one JSON object with what it saw.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, CONSOLE_URL, CONSOLE_TOKEN, GRANT_ID, CLIENT_ID, ARTIFACTS.
import { open } from './open.mjs';

const base = process.env.CONSOLE_URL;
const { browser, page, result, shot } = await open();
try {
  await page.goto(`${base}/admin/`);
  await page.fill('#token', process.env.CONSOLE_TOKEN);
  await page.click('#sign-in');
  await page.waitForSelector('#who:text("signed in")');
  await page.click('a[href="#sign-ins"]');
  const grant = `#oauth-grants-table tr[data-grant="${process.env.GRANT_ID}"]`;
  await page.waitForSelector(grant);
  result.grantRow = await page.textContent(grant);
  result.clientRow = await page.textContent(`#oauth-clients-table tr[data-client="${process.env.CLIENT_ID}"]`);
  await shot('1-sign-ins');
  await page.click(`${grant} button:text-is("Revoke")`);
  await page.waitForSelector(`${grant} td:nth-child(7):not(:empty)`);
  result.revoked = true;
  const client = `#oauth-clients-table tr[data-client="${process.env.CLIENT_ID}"]`;
  await page.click(`${client} button:text-is("Block")`);
  await page.waitForSelector(`${client} button:text-is("Unblock")`);
  result.blocked = true;
  await shot('2-revoked-and-blocked');
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
