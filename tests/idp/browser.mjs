// A browser without a screen, for authorization flows that end at the gateway: it opens URL,
// follows redirects with a cookie jar, signs in at oidc-provider's development login page as
// LOGIN (any password) and approves its consent page, and stops after the first page that is
// not a redirect or one of those forms. Given a PAT, it also signs in to the gateway with it
// where a gateway page asks for one (the form with a `pat` field; PAT `federated`: the button
// of the company's provider instead) and follows the page's "continue" link after it. Prints `{"url", "status",
// "text"}` of that page.
//
// With STOP_AT, a redirect to a URL that starts with it is not followed: it prints `{"url"}`
// (an authorization's answer to a client that listens nowhere).
//
// Usage: node browser.mjs URL LOGIN [PAT]
const [start, login, pat] = process.argv.slice(2);
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

// The first form of a page (or the first with a field named `field`): its action and its
// inputs' values (the login, password and PAT filled in).
function form(html, base, field) {
  const f = [...html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/gi)]
    .find((m) => !field || m[2].includes(`name="${field}"`));
  if (!f) return null;
  const fields = new URLSearchParams();
  for (const input of f[2].matchAll(/<input[^>]*>/gi)) {
    const name = input[0].match(/name="([^"]*)"/i)?.[1];
    if (!name) continue;
    let value = input[0].match(/value="([^"]*)"/i)?.[1] ?? '';
    if (name === 'login') value = login;
    if (name === 'password') value = 'any';
    if (name === 'pat') value = pat;
    fields.append(name, value);
  }
  return { action: new URL(f[1].replace(/&amp;/g, '&'), base).href, fields };
}

let url = start;
let signedIn = false;
let res = await go(url);
for (let step = 0; step < 20; step++) {
  const location = res.headers.get('location');
  if (location && res.status >= 300 && res.status < 400) {
    url = new URL(location, url).href;
    if (process.env.STOP_AT && url.startsWith(process.env.STOP_AT)) {
      console.log(JSON.stringify({ url }));
      process.exit(0);
    }
    res = await go(url);
    continue;
  }
  const text = await res.text();
  const f = /\/interaction\//.test(url)
    ? form(text, url)
    : pat && !signedIn && /name="(pat|way)"/.test(text)
      ? form(text, url, pat === 'federated' ? 'way' : 'pat')
      : null;
  // The gateway's sign-in is filled in once: a page that asks again says why, and is the end.
  if (f && !/\/interaction\//.test(url)) signedIn = true;
  // After it, a link goes on (a form's redirect may not leave for another site).
  const next = !f && text.match(/<a id="continue" href="([^"]*)"/);
  if (next) {
    url = new URL(next[1].replace(/&amp;/g, '&'), url).href;
    res = await go(url);
    continue;
  }
  if (!f) {
    console.log(JSON.stringify({ url, status: res.status, text: text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim() }));
    process.exit(0);
  }
  url = f.action;
  res = await go(url, { method: 'POST', body: f.fields, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}
console.log(JSON.stringify({ url, status: 0, text: 'too many steps' }));
