// The authorization server's pages in a real headless Chromium with JavaScript off: the
// sign-in page (a personal access token), the consent page (the client's name and the scopes),
// and the redirect to a native app's loopback callback on a port of its own (RFC 8252), which
// this script listens on. Screenshots go to $ARTIFACTS. Prints one JSON object.
//
// Env: PEERS_NODE_MODULES, CHROMIUM, BASE (the gateway), CLIENT_ID (registered with
// http://127.0.0.1/cb), PAT, RESOURCE, ARTIFACTS. With FEDERATED_LOGIN the user signs in at the
// company provider instead (its own login and consent pages, any password).
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const { chromium } = await import(
  pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, 'playwright-core/index.mjs')).href
);
const out = process.env.ARTIFACTS;
const result = { errors: [], csp: [] };

// The app's callback: whatever port the system gives it.
let got;
const callback = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://127.0.0.1');
  if (u.pathname === '/cb') got = u;
  res.end('signed in; you may close this page');
});
await new Promise((r) => callback.listen(0, '127.0.0.1', r));
const redirect = `http://127.0.0.1:${callback.address().port}/cb`;

const verifier = crypto.randomBytes(32).toString('base64url');
const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
const url = new URL('/oauth/authorize', process.env.BASE);
for (const [k, v] of Object.entries({
  response_type: 'code',
  client_id: process.env.CLIENT_ID,
  redirect_uri: redirect,
  state: 'browser-state',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  resource: process.env.RESOURCE,
  scope: 'mcp',
})) url.searchParams.set(k, v);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM,
  args: ['--no-sandbox', '--disable-dev-shm-usage'],
});
try {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 400, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20000);
  page.on('console', (m) => { if (m.type() === 'error') result.errors.push(m.text()); });
  page.on('response', (r) => { const c = r.headers()['content-security-policy']; if (c) result.csp.push(c); });
  const shot = (name) => page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });

  await page.goto(url.href);
  result.signInTitle = await page.title();
  result.signInText = await page.textContent('body');
  await shot('1-sign-in');
  if (process.env.FEDERATED_LOGIN) {
    result.federatedButton = await page.textContent('#federated');
    await page.click('#federated');
    await page.waitForSelector('input[name=login]');
    result.providerUrl = page.url();
    await shot('1b-provider-login');
    await page.fill('input[name=login]', process.env.FEDERATED_LOGIN);
    await page.fill('input[name=password]', 'any password');
    await page.click('button.login-submit');
    // The provider's own consent, then back to the gateway's.
    await page.waitForSelector('button.login-submit, button[value=allow]');
    if (await page.$('button.login-submit')) await page.click('button.login-submit');
  } else {
    await page.fill('#pat', 'mcpgw_wrong_token');
    await page.click('form[action="/oauth/authorize"] button[type=submit]');
    result.wrongTokenText = await page.textContent('.error');
    await page.fill('#pat', process.env.PAT);
    await page.click('form[action="/oauth/authorize"] button[type=submit]');
  }
  await page.waitForSelector('button[value=allow]');
  result.consentText = await page.textContent('body');
  await shot('2-consent');
  await page.click('button[value=allow]');
  await page.waitForURL((u) => u.href.startsWith(redirect));
  result.landed = await page.textContent('body');
  result.code = got?.searchParams.get('code');
  result.state = got?.searchParams.get('state');
  result.iss = got?.searchParams.get('iss');
  result.verifier = verifier;
  result.redirect = redirect;
  // Wider than the viewport means something overflows at 400 px.
  await page.goto(url.href);
  result.scrollWidth = await page.evaluate('document.documentElement.scrollWidth').catch(() => null);
} catch (e) {
  result.failure = String(e?.stack || e);
  const pages = browser.contexts().flatMap((c) => c.pages());
  for (const p of pages) {
    result.failedAt = p.url();
    result.failedText = (await p.textContent('body').catch(() => '')).slice(0, 2000);
  }
} finally {
  await browser.close();
  callback.close();
}
console.log(JSON.stringify(result));
