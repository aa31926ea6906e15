// Issue 37: console edits keep what the form does not show, deletes ask first, and what the
// config file defines offers no edit or delete. Drives the console in headless Chromium and
// prints one JSON object with what it saw; the Rust test then reads the API.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, CONSOLE_URL, CONSOLE_TOKEN, ARTIFACTS.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const { chromium } = await import(
  pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, 'playwright-core/index.mjs')).href
);
const base = process.env.CONSOLE_URL;
const out = process.env.ARTIFACTS;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
const result = { errors: [], dialogs: [] };
let acceptDialogs = false;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => result.errors.push(String(e)));
  page.on('dialog', (d) => {
    result.dialogs.push(d.message());
    return acceptDialogs ? d.accept() : d.dismiss();
  });
  const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  const show = async (hash) => {
    await page.evaluate(() => { location.hash = '#overview'; });
    await page.click(`a[href="#${hash}"]`);
  };

  await page.goto(`${base}/admin/`);
  await page.fill('#token', process.env.CONSOLE_TOKEN);
  await page.click('#sign-in');
  await page.waitForSelector('#who:text("signed in")');

  // Edit only the tool curation of three upstreams.
  await show('upstreams');
  await page.waitForSelector('tr[data-upstream="remote"]');
  for (const name of ['remote', 'local', 'people']) {
    await page.click(`tr[data-upstream="${name}"] button:text-is("Edit")`);
    await page.fill('#upstream-form [name=include]', 'echo');
    await page.click('#upstream-save');
    await page.waitForSelector('#message.ok');
    await page.evaluate(() => { document.querySelector('#message').className = ''; });
  }
  result.configUpstreamCell = await page.textContent('tr[data-upstream="fx"] td:last-child');
  // Its history may be looked at; nothing offers to change it.
  result.configUpstreamButtons = await page.$$eval('tr[data-upstream="fx"] button', (b) => b.filter((x) => x.textContent !== 'History').length);
  await shot('edits-1-upstreams');

  // A role's grants edited in the form: its description stays.
  await show('roles');
  await page.waitForSelector('tr[data-role="oncall"]');
  await page.click('tr[data-role="oncall"] button:text-is("Edit")');
  await page.fill('#role-form [name=tools]', 'fx__echo');
  await page.click('#role-form button[type=submit]');
  await page.waitForSelector('#message.ok');
  await page.evaluate(() => { document.querySelector('#message').className = ''; });

  // A delete dismissed at its question deletes nothing; accepted, it deletes.
  await show('roles');
  await page.waitForSelector('tr[data-role="scratch"]');
  result.configRoleButtons = await page.$$eval('tr[data-role="admin"] button', (b) => b.length);
  await page.click('tr[data-role="scratch"] button:text-is("Delete")');
  await show('roles');
  await page.waitForSelector('tr[data-role="scratch"]');
  result.roleKeptAfterCancel = true;
  await show('tokens');
  await page.waitForSelector('#tokens-table button:text-is("Revoke")');
  result.revokeButtons = await page.$$eval('#tokens-table button', (b) => b.length);
  await page.click('#tokens-table tr:has(td:text-is("spare")) button:text-is("Revoke")');
  await show('virtual-servers');
  await page.waitForSelector('#vs-table td:text-is("quiet")');
  await page.click('#vs-table button:text-is("Delete")');
  await show('virtual-servers');
  await page.waitForSelector('#vs-table td:text-is("quiet")');
  result.vsKeptAfterCancel = true;

  acceptDialogs = true;
  await show('roles');
  await page.click('tr[data-role="scratch"] button:text-is("Delete")');
  await page.waitForSelector('tr[data-role="scratch"]', { state: 'detached' });
  result.roleDeletedAfterYes = true;
  await shot('edits-2-roles');
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
