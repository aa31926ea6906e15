// What every console script starts with: Chromium launched headless (Debian's, through
// playwright-core), one 1280×900 page that records script errors and answers every dialog
// (accepting it unless `dismiss()` says otherwise), and `shot(name)` for a full-page screenshot
// under ARTIFACTS.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, ARTIFACTS.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export async function open() {
  const { chromium } = await import(
    pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, 'playwright-core/index.mjs')).href
  );
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  const result = { errors: [], dialogs: [] };
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(20000);
  page.on('pageerror', (e) => result.errors.push(String(e)));
  page.on('dialog', (d) => { result.dialogs.push(d.message()); d.accept(); });
  const shot = (name) => page.screenshot({ path: path.join(process.env.ARTIFACTS, `${name}.png`), fullPage: true });
  return { browser, page, result, shot };
}
