// A browser without a screen, for authorization flows that end at the gateway: it opens URL,
// follows redirects with a cookie jar, signs in at oidc-provider's development login page as
// LOGIN (any password) and approves its consent page, and stops after the first page that is
// not a redirect or one of those forms. Prints `{"url", "status", "text"}` of that page.
//
// Usage: node browser.mjs URL LOGIN
const [start, login] = process.argv.slice(2);
const jar = new Map(); // origin -> Map(name -> value)

function cookies(url) {
  const c = jar.get(new URL(url).origin);
  return c ? [...c].map(([k, v]) => `${k}=${v}`).join('; ') : '';
}

function keep(url, res) {
  const origin = new URL(url).origin;
  if (!jar.has(origin)) jar.set(origin, new Map());
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const i = pair.indexOf('=');
    const expired = /max-age=0|expires=thu, 01 jan 1970/i.test(line);
    if (expired) jar.get(origin).delete(pair.slice(0, i).trim());
    else jar.get(origin).set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
  }
}

async function go(url, init = {}) {
  const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...(init.headers || {}), cookie: cookies(url) } });
  keep(url, res);
  return res;
}

// The first form of a page: its action and its inputs' values (the login filled in).
function form(html, base) {
  const f = html.match(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i);
  if (!f) return null;
  const fields = new URLSearchParams();
  for (const input of f[2].matchAll(/<input[^>]*>/gi)) {
    const name = input[0].match(/name="([^"]*)"/i)?.[1];
    if (!name) continue;
    let value = input[0].match(/value="([^"]*)"/i)?.[1] ?? '';
    if (name === 'login') value = login;
    if (name === 'password') value = 'any';
    fields.append(name, value);
  }
  return { action: new URL(f[1].replace(/&amp;/g, '&'), base).href, fields };
}

let url = start;
let res = await go(url);
for (let step = 0; step < 20; step++) {
  const location = res.headers.get('location');
  if (location && res.status >= 300 && res.status < 400) {
    url = new URL(location, url).href;
    res = await go(url);
    continue;
  }
  const text = await res.text();
  const f = /\/interaction\//.test(url) ? form(text, url) : null;
  if (!f) {
    console.log(JSON.stringify({ url, status: res.status, text: text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim() }));
    process.exit(0);
  }
  url = f.action;
  res = await go(url, { method: 'POST', body: f.fields, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}
console.log(JSON.stringify({ url, status: 0, text: 'too many steps' }));
