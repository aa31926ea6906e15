// The console's Connections tab in a real headless Chromium: a user without the admin right
// signs in, sees only their own connections, disconnects one and makes a link to connect it
// again; then an admin sees everyone's,
// makes the catalog account's connect link and revokes the catalog account's connection (each
// after a confirmation). Prints one JSON object with what it saw.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, CONSOLE_URL, USER_TOKEN, ADMIN_TOKEN, ARTIFACTS.
import { open } from './open.mjs';

const { browser, page, result, shot } = await open();
try {
  const signIn = async (token, who) => {
    await page.fill('#token', token);
    await page.click('#sign-in');
    await page.waitForSelector(`#who:text-is("${who}")`);
  };
  await page.goto(`${process.env.CONSOLE_URL}/admin/`);

  await signIn(process.env.USER_TOKEN, 'signed in (your connections)');
  result.userTabs = await page.$$eval('#tabs a', (as) => as.filter((a) => !a.hidden).map((a) => a.textContent));
  const mine = '#my-connections-table tr[data-upstream="own"]';
  await page.waitForSelector(mine);
  result.myRow = await page.textContent(mine);
  result.everyoneShown = await page.isVisible('#all-connections');
  await shot('1-user-connections');
  await page.click(`${mine} button:text-is("Disconnect")`);
  await page.waitForSelector(mine, { state: 'detached' });
  result.disconnected = true;
  // Disconnected, the upstream is offered to connect again ahead of any call.
  await page.click('#connectable-table tr[data-upstream="own"] button:text-is("Connect")');
  await page.waitForSelector('#connect-link a');
  result.connectLink = await page.getAttribute('#connect-link a', 'href');
  await page.click('#sign-out');
  result.afterSignOut = await page.$$eval('main tbody tr', (rows) => rows.length);

  await signIn(process.env.ADMIN_TOKEN, 'signed in');
  await page.click('a[href="#connections"]');
  const catalog = '#all-connections-table tr[data-holder="catalog"]';
  await page.waitForSelector(catalog);
  result.holders = await page.$$eval('#all-connections-table tr[data-holder]', (rows) => rows.map((r) => r.dataset.holder));
  await page.fill('#catalog-connect-form input[name="upstream"]', 'own');
  await page.click('#catalog-connect-form button');
  await page.waitForSelector('#catalog-connect-link a');
  result.catalogLink = await page.getAttribute('#catalog-connect-link a', 'href');
  await shot('2-admin-connections');
  await page.click(`${catalog} button:text-is("Revoke")`);
  await page.waitForSelector(catalog, { state: 'detached' });
  result.revoked = true;
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
