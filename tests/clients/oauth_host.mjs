// What the scripts of real hosts that sign in through the gateway share: an OAuth client
// provider that keeps everything in memory, and the gateway's sign-in pages walked as a user's
// browser would (plain HTML forms: the sign-in form with a personal access token, then the
// consent form), keeping the pages' cookie.

// The provider's storage and client metadata, as both the MCP TypeScript SDK's and the AI SDK's
// `OAuthClientProvider` ask for them: a public client named `name`, sent back to `redirect`.
// A host adds `redirectToAuthorization`.
export class MemoryProvider {
  constructor(name, redirect) {
    this.name = name;
    this.redirect = redirect;
    this.saved = {};
    this.tokenSaves = 0;
    this.signIns = 0;
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.tokenSaves += 1;
    this.saved.tokens = tokens;
  }
  saveCodeVerifier(v) {
    this.saved.verifier = v;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

function hidden(html, name) {
  const m = html.match(new RegExp(`name="${name}" value="([^"]*)"`));
  if (!m) throw new Error(`no ${name} field in: ${html.slice(0, 300)}`);
  return m[1].replaceAll('&quot;', '"').replaceAll('&amp;', '&');
}

// Opens the authorization `url`, signs in with `pat`, allows, and returns the redirect back to
// the host (a URL with `code`, `state` and `iss`). `step(name, value)` records what the pages
// showed: `pages` (the policy, the statuses, whether the consent names `clientName`) and
// `redirect`.
export async function actAsBrowser(url, pat, step, clientName) {
  const page = await fetch(url);
  const cookie = (page.headers.get('set-cookie') || '').split(';')[0];
  const csp = page.headers.get('content-security-policy') || '';
  const signIn = await page.text();
  if (page.status !== 200) throw new Error(`sign-in page: ${page.status} ${signIn}`);
  const origin = new URL(url).origin;
  const post = (p, form) =>
    fetch(origin + p, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams(form),
      redirect: 'manual',
    });
  const consentPage = await post('/oauth/authorize', { ticket: hidden(signIn, 'ticket'), pat });
  const consent = await consentPage.text();
  step('pages', { csp, signInStatus: page.status, consentStatus: consentPage.status, namesClient: consent.includes(clientName) });
  const back = await post('/oauth/consent', { ticket: hidden(consent, 'ticket'), decision: 'allow' });
  const location = new URL(back.headers.get('location'));
  step('redirect', { status: back.status, to: location.origin + location.pathname, iss: location.searchParams.get('iss') });
  return location;
}

// What a host script prints: one JSON line of named steps.
export const out = { steps: [] };
export const step = (name, value) => out.steps.push({ name, ...value });

// Runs `f` as the step `name`: its fields with `ok: true`, or the error (and its cause).
export async function attempt(name, f) {
  try {
    step(name, { ok: true, ...(await f()) });
  } catch (e) {
    step(name, { ok: false, error: String(e?.message || e), cause: String(e?.cause?.message || e?.cause || '') });
  }
}

// The session every signing-in host script runs, then prints and exits: `connect()` (which
// signs in through `provider`; `revisionOf(client)` is the protocol revision it settled on),
// the tools listed, `fx__echo` called, and, its access token spoilt, called again: the next
// request gets 401 and the host refreshes without the user.
export async function signInCallAndRefresh(connect, provider, revisionOf) {
  let client;
  await attempt('connect', async () => {
    client = await connect();
    return { clientId: provider.saved.client?.client_id, signIns: provider.signIns, revision: revisionOf(client) };
  });
  await attempt('list', async () => ({ tools: (await client.listTools()).tools.map((t) => t.name) }));
  await attempt('call', async () => {
    const r = await client.callTool({ name: 'fx__echo', arguments: { message: 'hello' } });
    return { text: r.content?.[0]?.text };
  });
  const firstRefresh = provider.saved.tokens?.refresh_token;
  const firstAccess = provider.saved.tokens?.access_token;
  provider.saved.tokens = { ...provider.saved.tokens, access_token: 'spoilt.' + firstAccess };
  await attempt('refreshed', async () => {
    const r = await client.callTool({ name: 'fx__echo', arguments: { message: 'again' } });
    return {
      text: r.content?.[0]?.text,
      signIns: provider.signIns,
      newRefresh: provider.saved.tokens?.refresh_token !== firstRefresh,
      newAccess: provider.saved.tokens?.access_token !== firstAccess,
    };
  });
  await client?.close().catch(() => {});
  console.log(JSON.stringify(out));
  process.exit(0);
}
