// Tool pinning in the console, in headless Chromium: the changes waiting for review are shown
// as a line diff of the approved and the listed definition (upstream text as text: the pulled
// description carries markup that must not run); the held `add` change is approved and the
// new `steal` tool rejected, each after a confirmation. Prints one JSON object with what it saw.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, CONSOLE_URL, ARTIFACTS.
import { open } from './open.mjs';

const { browser, page, result, shot } = await open();
try {
  // The gateway runs without authentication: signing in with no token.
  await page.goto(`${process.env.CONSOLE_URL}/admin/#upstreams`);
  await page.click('#sign-in');
  const block = (u, t) => `#pending-tools .pending[data-upstream="${u}"][data-tool="${t}"]`;
  await page.waitForSelector(block('held', 'steal'));
  result.blocks = await page.$$eval('#pending-tools .pending', (ps) => ps.map((p) => `${p.dataset.upstream}/${p.dataset.tool}`));
  result.removed = await page.$$eval(`${block('held', 'add')} .del`, (s) => s.map((x) => x.textContent));
  result.added = await page.$$eval(`${block('held', 'add')} .add`, (s) => s.map((x) => x.textContent));
  result.newTitle = await page.textContent(`${block('held', 'steal')} h4`);
  result.images = await page.$$eval('#pending-tools img', (i) => i.length);
  result.pwned = await page.evaluate(() => window.__pwned === 1);
  await shot('pending-tool-changes');
  await page.click(`${block('held', 'add')} button:text-is("Approve")`);
  await page.waitForSelector(block('held', 'add'), { state: 'detached' });
  await page.click(`${block('held', 'steal')} button:text-is("Reject")`);
  await page.waitForSelector(block('held', 'steal'), { state: 'detached' });
  result.left = await page.$$eval('#pending-tools .pending', (ps) => ps.map((p) => `${p.dataset.upstream}/${p.dataset.tool}`));
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
