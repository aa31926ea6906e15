// A connect link (`/oauth/upstream/connect`) in a real headless Chromium with JavaScript off:
// the gateway's page asks who opens it, the user signs in with their personal access token,
// follows "Continue" to the upstream's authorization server (oidc-provider: its own login and
// consent pages, any password), and comes back to the gateway's "Connected" page. Every page's
// Content-Security-Policy applies as in any browser: a violation shows as a console error
// (`csp`).
// Screenshots go to $ARTIFACTS. Prints one JSON object.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, LINK, PAT, LOGIN (at the provider), ARTIFACTS.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const { chromium } = await import(
  pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, 'playwright-core/index.mjs')).href
);
const out = process.env.ARTIFACTS;
const result = { errors: [], csp: [] };

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
try {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 400, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  // The provider's development pages ask for fonts off the network: errors, but not ours.
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    result.errors.push(`${m.location()?.url || page.url()}: ${m.text()}`);
    if (/Content Security Policy/i.test(m.text())) result.csp.push(m.text());
  });
  const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });

  await page.goto(process.env.LINK);
  result.askTitle = await page.title();
  result.askText = await page.textContent('body');
  await shot('1-who-opens');
  await page.fill('#pat', process.env.PAT);
  await page.click('form button[type=submit]');
  await page.waitForSelector('#continue');
  result.signedInText = await page.textContent('body');
  await shot('2-signed-in');
  await page.click('#continue');
  await page.waitForSelector('input[name=login]');
  result.providerUrl = page.url();
  await page.fill('input[name=login]', process.env.LOGIN);
  await page.fill('input[name=password]', 'any password');
  await page.click('button.login-submit');
  // The provider's consent, then back to the gateway.
  await page.waitForSelector('button.login-submit, h1');
  if (await page.$('button.login-submit')) await page.click('button.login-submit');
  await page.waitForURL((u) => u.pathname === '/oauth/upstream/callback');
  result.landed = await page.textContent('body');
  await shot('3-connected');
} catch (e) {
  result.failure = String(e?.stack || e);
  const pages = browser.contexts().flatMap((c) => c.pages());
  for (const p of pages) {
    result.failedAt = p.url();
    result.failedText = (await p.textContent('body').catch(() => '')).slice(0, 2000);
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
