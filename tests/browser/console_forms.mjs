// The console's forms in headless Chromium (issue 41): an upstream made with the form (a header
// secret as a variable reference; a bad timeout refused beside its field, in the API's words),
// its tool curation edited in the per-tool table (a tool hidden, one renamed, the names hosts
// will see shown before saving), the JSON view, a role with a preview of what it grants, the
// catalog's other kinds, the playground's score bars, a tab that updates by itself, who is
// signed in, times with their zone, an upstream's last hour as charts, every tab at 400 px, and
// sign-out emptying every view.
// Prints one JSON object with what it saw.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, CONSOLE_URL, CONSOLE_TOKEN, FIXTURE_COMMAND, UPSTREAM_COMMAND
// (server-everything, which has prompts and resources), ARTIFACTS.
import { open } from './open.mjs';

const { browser, page, result, shot: screenshot } = await open();
Object.assign(result, { widths: {} });
const shot = (name) => screenshot(`forms-${name}`);
try {
  const show = async (hash) => {
    await page.evaluate(() => { location.hash = '#overview'; });
    await page.click(`a[href="#${hash}"]`);
  };
  const api = (method, p, body) => page.evaluate(async ([method, p, body, token]) => {
    const r = await fetch(p, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    return { status: r.status, body: await r.text() };
  }, [method, p, body, process.env.CONSOLE_TOKEN]);

  await page.goto(`${process.env.CONSOLE_URL}/admin/`);
  await page.fill('#token', process.env.CONSOLE_TOKEN);
  await page.click('#sign-in');
  await page.waitForSelector('#whoami:not(:empty)');
  result.whoami = await page.textContent('#whoami');

  // An http upstream through the form: the header's secret as a variable; a zero timeout is
  // refused beside its field.
  await show('upstreams');
  const f = '#upstream-form';
  await page.fill(`${f} [name=name]`, 'api');
  await page.selectOption(`${f} [name=transport]`, 'http');
  await page.fill(`${f} [name=url]`, 'http://127.0.0.1:9/mcp');
  await page.click('#upstream-add-header');
  await page.fill('#upstream-headers .pair [name=key]', 'Authorization');
  result.headerKind = await page.inputValue('#upstream-headers .pair [name=kind]');
  await page.fill('#upstream-headers .pair [name=value]', 'API_TOKEN');
  await page.fill(`${f} [name=timeout_secs]`, '0');
  await page.click('#upstream-save');
  await page.waitForSelector(`${f} .field-error[data-for="timeout_secs"]:not(:empty)`);
  result.timeoutError = await page.textContent(`${f} .field-error[data-for="timeout_secs"]`);
  await shot('1-field-error');
  await page.fill(`${f} [name=timeout_secs]`, '30');
  await page.click('#upstream-save');
  await page.waitForSelector('tr[data-upstream="api"]');

  // The fixture's last hour: calls with a failure, and a restart in its health.
  await page.click('tr[data-upstream="fx"] button:text-is("History")');
  await page.waitForSelector('#upstream-history svg.chart rect[data-series="calls"]');
  result.history = await page.evaluate(() => ({
    calls: document.querySelectorAll('#upstream-history rect[data-series="calls"]').length,
    failed: document.querySelectorAll('#upstream-history rect[data-series="failed"]').length,
    statuses: [...document.querySelectorAll('#upstream-history svg.strip rect')].map((r) => r.dataset.status),
    summary: document.querySelector('#upstream-history p').textContent,
    changes: [...document.querySelectorAll('#upstream-history li')].map((l) => l.dataset.status),
  }));
  await shot('0-history');

  // A stdio upstream, then its curation in the per-tool table.
  await page.fill(`${f} [name=name]`, 'local');
  await page.selectOption(`${f} [name=transport]`, 'stdio');
  await page.fill(`${f} [name=command]`, process.env.FIXTURE_COMMAND);
  await page.click('#upstream-save');
  await page.waitForSelector('tr[data-upstream="local"] td.status-up', { timeout: 30000 });
  await page.click('tr[data-upstream="local"] button:text-is("Edit")');
  await page.waitForSelector('#curation-table tr[data-tool="echo"]');
  result.effectiveBefore = await page.textContent('#curation-table tr[data-tool="echo"] .effective');
  await page.fill('#curation-table tr[data-tool="echo"] [name=rename]', 'say');
  await page.fill('#curation-table tr[data-tool="echo"] [name=description]', 'Says it back');
  await page.uncheck('#curation-table tr[data-tool="crash"] [name=shown]');
  result.effectiveAfter = await page.textContent('#curation-table tr[data-tool="echo"] .effective');
  result.crashShown = await page.textContent('#curation-table tr[data-tool="crash"] .effective');
  result.exclude = await page.inputValue(`${f} [name=exclude]`);
  await page.click('#upstream-json summary');
  await page.waitForFunction(() => document.querySelector('#upstream-form [name=json]').value.length > 0);
  result.json = JSON.parse(await page.inputValue(`${f} [name=json]`));
  await shot('2-curation');
  await page.click('#upstream-save');
  await page.waitForSelector('#message.ok');

  // The table stays current: an upstream added elsewhere appears without a reload.
  const added = await api('POST', '/admin/v1/upstreams', { name: 'every', transport: 'stdio', command: process.env.UPSTREAM_COMMAND });
  result.addedElsewhere = added.status;
  await page.waitForSelector('tr[data-upstream="every"] td.status-up', { timeout: 30000 });

  // A role with the preview of what it grants.
  await show('roles');
  await page.fill('#role-form [name=name]', 'sayers');
  await page.fill('#role-form [name=tools]', 'local__say');
  await page.waitForFunction(() => document.querySelector('#role-preview').textContent.startsWith('grants 1 of'));
  result.rolePreview = await page.textContent('#role-preview');
  await page.click('#role-form button[type=submit]');
  await page.waitForSelector('#roles-table tr[data-role="sayers"]');

  // The catalog's other kinds; the playground's bars.
  await show('catalog');
  await page.waitForSelector('li[data-tool="local__say"]');
  for (const kind of ['prompt', 'resource', 'resource_template']) {
    await page.selectOption('#catalog-kind', kind);
    await page.waitForFunction(() => !document.querySelector('li[data-tool="local__say"]')
      && document.querySelector('#catalog-list li[data-tool]'));
    result[`${kind}s`] = await page.$$eval('#catalog-list li[data-tool]', (l) => l.map((x) => x.dataset.tool));
  }
  await page.click('#catalog-list li[data-tool]');
  result.entryShown = await page.textContent('#tool-schema');
  await show('routing');
  await page.fill('#route-query', 'say something back');
  await page.click('#route-form button');
  await page.waitForSelector('#route-table meter');
  result.bars = await page.$$eval('#route-table meter', (m) => m.length);

  // Times carry their zone.
  await show('audit');
  await page.waitForSelector('#audit-table tbody tr td:nth-child(2)');
  result.auditTime = await page.textContent('#audit-table tbody tr td:nth-child(2)');

  // 400 px: nothing wider than the screen, on every tab.
  await page.setViewportSize({ width: 400, height: 800 });
  for (const tab of ['overview', 'upstreams', 'catalog', 'routing', 'virtual-servers', 'tokens', 'sign-ins', 'connections', 'roles', 'audit']) {
    await show(tab);
    await page.waitForTimeout(300);
    result.widths[tab] = await page.evaluate(() => document.documentElement.scrollWidth);
    if (tab === 'upstreams' || tab === 'overview') await shot(`3-narrow-${tab}`);
  }

  // Sign-out empties every view.
  await page.click('#sign-out');
  result.afterSignOut = await page.evaluate(() => ({
    rows: document.querySelectorAll('main tbody tr').length,
    live: [...document.querySelectorAll('main .live, #whoami')].map((e) => e.textContent).join(''),
    pending: document.querySelector('#pending-tools').textContent,
  }));
} catch (e) {
  result.failure = String(e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
