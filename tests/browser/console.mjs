// Drives the admin console in a real headless Chromium (playwright-core, Debian's chromium):
// sign in with a PAT, register a stdio upstream, see its tools, call one, find the audit row,
// verify the chain, rank tools in the playground and create a token. Screenshots go to
// $ARTIFACTS. Prints one JSON object with what it saw.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, CONSOLE_URL (the gateway's base URL), CONSOLE_TOKEN,
// UPSTREAM_COMMAND (a stdio MCP server with an `echo` tool), ARTIFACTS.
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
const result = { errors: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => result.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') result.errors.push(m.text()); });
  const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });

  await page.goto(`${base}/admin/`);
  await page.fill('#token', process.env.CONSOLE_TOKEN);
  await page.click('#sign-in');
  await page.waitForSelector('#who:text("signed in")');
  await page.waitForSelector('#overview-cards .card');
  result.overview = await page.textContent('#overview-cards');
  await shot('1-overview');

  await page.click('a[href="#upstreams"]');
  await page.fill('#upstream-form [name=name]', 'every');
  await page.selectOption('#upstream-form [name=transport]', 'stdio');
  await page.fill('#upstream-form [name=command]', process.env.UPSTREAM_COMMAND);
  await page.click('#upstream-save');
  await page.waitForSelector('#message.ok');
  for (let i = 0; i < 60; i++) {
    await page.evaluate(() => { location.hash = '#overview'; });
    await page.evaluate(() => { location.hash = '#upstreams'; });
    if (await page.$('tr[data-upstream="every"] td.status-up')) break;
    await page.waitForTimeout(500);
  }
  result.upstreamStatus = await page.textContent('tr[data-upstream="every"] td:nth-child(4)');
  result.tools = Number(await page.textContent('tr[data-upstream="every"] td.tools'));
  await shot('2-upstreams');

  await page.click('a[href="#catalog"]');
  await page.fill('#catalog-search', 'every__echo');
  await page.click('li[data-tool="every__echo"]');
  await page.fill('#tool-form [name=message]', 'hello from the console');
  await page.click('#tool-call');
  await page.waitForFunction(() => document.querySelector('#tool-result').textContent.includes('hello from the console'));
  result.callResult = await page.textContent('#tool-result');
  await shot('3-call');

  await page.click('a[href="#audit"]');
  const row = '#audit-table tr[data-action="tools/call"][data-target="every__echo"]';
  for (let i = 0; i < 40 && !(await page.$(row)); i++) {
    await page.waitForTimeout(250);
    await page.click('#audit-form button[type=submit]');
  }
  result.auditRow = await page.textContent(row);
  await page.click('#audit-verify');
  await page.waitForFunction(() => document.querySelector('#audit-verdict').textContent.length > 0);
  result.verdict = await page.textContent('#audit-verdict');
  await shot('4-audit');

  await page.click('a[href="#routing"]');
  await page.fill('#route-query', 'echo a message back to me');
  await page.click('#route-form button');
  await page.waitForSelector('#route-table tbody tr[data-tool]');
  result.routed = await page.$$eval('#route-table tbody tr[data-tool]', (rows) => rows.map((r) => r.dataset.tool));
  await shot('5-routing');

  await page.click('a[href="#tokens"]');
  await page.fill('#token-form [name=name]', 'ci');
  await page.fill('#token-form [name=owner]', 'ann');
  await page.click('#token-form button');
  await page.waitForFunction(() => document.querySelector('#new-token').textContent.length > 0);
  result.newToken = await page.textContent('#new-token');
  await shot('6-tokens');

  await page.click('a[href="#roles"]');
  await page.fill('#role-form [name=name]', 'echoers');
  await page.fill('#role-form [name=tools]', 'every__echo');
  await page.waitForFunction(() => document.querySelector('#role-preview').textContent.includes('grants 1 of'));
  result.rolePreview = await page.textContent('#role-preview');
  await page.click('#role-form button');
  await page.waitForSelector('#roles-table td:text-is("echoers")');
  result.roles = await page.textContent('#roles-table');
  await shot('7-roles');

  await page.click('a[href="#virtual-servers"]');
  await page.fill('#vs-form [name=name]', 'quiet');
  await page.fill('#vs-form [name=upstreams]', 'every');
  await page.selectOption('#vs-form [name=mode]', 'search');
  await page.waitForFunction(() => document.querySelector('#vs-preview').textContent.startsWith('offers'));
  result.vsPreview = await page.textContent('#vs-preview');
  await page.click('#vs-form button');
  await page.waitForSelector('#vs-table td:text-is("quiet")');
  result.virtualServers = await page.textContent('#vs-table');
  await shot('8-virtual-servers');

  // Disable the upstream from its row, then enable it again.
  await page.click('a[href="#upstreams"]');
  await page.click('tr[data-upstream="every"] button:text-is("Disable")');
  await page.waitForSelector('tr[data-upstream="every"] td:nth-child(4):text-is("disabled")');
  result.disabled = true;
  await page.click('tr[data-upstream="every"] button:text-is("Enable")');
  await page.waitForSelector('tr[data-upstream="every"] button:text-is("Disable")');
  result.enabledAgain = true;
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
