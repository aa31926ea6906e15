// A real MCP host's OAuth flow against the gateway's own authorization server: the TypeScript
// SDK's `StreamableHTTPClientTransport` with an `OAuthClientProvider`, which discovers the
// authorization server from the gateway's 401, registers itself (RFC 7591), and sends the user
// to the sign-in page. The "user" here is this script acting as a browser on the pages
// (`oauth_host.mjs`).
//
// Env: PEERS_NODE_MODULES, MCP_URL, PAT (the user's personal access token), ADMIN_URL and
// ADMIN_TOKEN (to revoke the grant), REPLICA_MCP_URL (optional: another replica, same store),
// CLIENT_METADATA_URL (optional: the host's client ID metadata document, instead of DCR),
// REPLAY_WAIT_MS (optional: how long the replay of a spent refresh token waits),
// ONLY_CONNECT (optional: stop after the first call), CONCURRENT_CALLS (optional: then N calls at
// once with a spoilt access token, as a host whose requests all meet the expiry together, and
// stop).
// Prints one JSON line with what happened at each step.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { actAsBrowser, MemoryProvider } from './oauth_host.mjs';

const sdk = (p) =>
  import(pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { UnauthorizedError } = await sdk('client/auth.js');

const MCP_URL = process.env.MCP_URL;
const out = { steps: [] };
const step = (name, value) => out.steps.push({ name, ...value });

class Provider extends MemoryProvider {
  constructor() {
    super('SDK test host', 'http://127.0.0.1:33418/callback');
    this.code = null;
  }
  // With CLIENT_METADATA_URL the host is named by its metadata document instead of registering.
  get clientMetadataUrl() {
    return process.env.CLIENT_METADATA_URL || undefined;
  }
  // The browser: the sign-in page, then the consent page, then the redirect with the code.
  async redirectToAuthorization(url) {
    this.signIns += 1;
    this.code = (await actAsBrowser(url, process.env.PAT, step, this.name)).searchParams.get('code');
  }
}

const provider = new Provider();
async function connect() {
  const client = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  try {
    await client.connect(transport);
    return client;
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !provider.code) throw e;
    await transport.finishAuth(provider.code);
    provider.code = null;
    const again = new Client({ name: 'oauth-sdk-test', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider }));
    return again;
  }
}

async function attempt(name, f) {
  try {
    step(name, { ok: true, ...(await f()) });
  } catch (e) {
    step(name, { ok: false, error: String(e?.message || e), unauthorized: e instanceof UnauthorizedError || /401|nauthorized/.test(String(e)) });
  }
}

let client;
await attempt('connect', async () => {
  client = await connect();
  return { clientId: provider.saved.client?.client_id };
});
await attempt('list', async () => ({ tools: (await client.listTools()).tools.map((t) => t.name) }));
await attempt('call', async () => {
  const r = await client.callTool({ name: 'fx__echo', arguments: { message: 'hello' } });
  return { text: r.content?.[0]?.text };
});

if (process.env.CONCURRENT_CALLS) {
  // Every request meets the expired token at once: each gets a 401 and refreshes.
  const spent = provider.saved.tokens?.refresh_token;
  provider.saved.tokens = { ...provider.saved.tokens, access_token: 'spoilt.' + provider.saved.tokens?.access_token };
  const signIns = provider.signIns;
  const calls = await Promise.allSettled(
    Array.from({ length: Number(process.env.CONCURRENT_CALLS) }, (_, i) =>
      client.callTool({ name: 'fx__echo', arguments: { message: `c${i}` } })),
  );
  step('concurrent', {
    texts: calls.map((c) => (c.status === 'fulfilled' ? c.value.content?.[0]?.text : `error: ${c.reason?.message || c.reason}`)),
    signedInAgain: provider.signIns !== signIns,
    refreshed: provider.saved.tokens?.refresh_token !== spent,
  });
  await attempt('after', async () => {
    const r = await client.callTool({ name: 'fx__echo', arguments: { message: 'after' } });
    return { text: r.content?.[0]?.text, signedInAgain: provider.signIns !== signIns };
  });
  console.log(JSON.stringify(out));
  process.exit(0);
}

if (process.env.ONLY_CONNECT) {
  console.log(JSON.stringify(out));
  process.exit(0);
}

// A spoilt access token: the SDK gets 401 and refreshes with its refresh token.
const firstRefresh = provider.saved.tokens?.refresh_token;
const firstAccess = provider.saved.tokens?.access_token;
provider.saved.tokens = { ...provider.saved.tokens, access_token: 'spoilt.' + firstAccess };
await attempt('refreshed', async () => {
  const c = await connect();
  const r = await c.callTool({ name: 'fx__echo', arguments: { message: 'again' } });
  client = c;
  return {
    text: r.content?.[0]?.text,
    newRefresh: provider.saved.tokens?.refresh_token !== firstRefresh,
    newAccess: provider.saved.tokens?.access_token !== firstAccess,
  };
});

// A raw MCP request with the current access token, at this gateway or another replica.
async function rawStatus(url) {
  const r = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${provider.saved.tokens.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
  });
  return { status: r.status, challenge: r.headers.get('www-authenticate') };
}

// An administrator revokes the grant: the next call is refused here and on the other replica.
await attempt('revoked', async () => {
  const replicaBefore = process.env.REPLICA_MCP_URL ? (await rawStatus(process.env.REPLICA_MCP_URL)).status : null;
  const admin = (p, method = 'GET') =>
    fetch(process.env.ADMIN_URL + p, { method, headers: { authorization: `Bearer ${process.env.ADMIN_TOKEN}` } });
  const grants = await (await admin('/admin/v1/oauth/grants')).json();
  const live = grants.filter((g) => !g.revoked_at);
  const del = await admin(`/admin/v1/oauth/grants/${live[0].id}`, 'DELETE');
  const here = await rawStatus(MCP_URL);
  const replica = process.env.REPLICA_MCP_URL ? await rawStatus(process.env.REPLICA_MCP_URL) : null;
  return { grants: live.length, subject: live[0].subject, deleteStatus: del.status, here, replicaBefore, replica };
});

// Signed in again; then the spent refresh token of the new grant used again: refused, and the
// whole grant with it.
await attempt('replay', async () => {
  provider.saved.tokens = undefined;
  client = await connect();
  const spent = provider.saved.tokens.refresh_token;
  const meta = await (await fetch(new URL('/.well-known/oauth-authorization-server', MCP_URL))).json();
  const refresh = (token) =>
    fetch(meta.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: provider.saved.client.client_id }),
    });
  const first = await refresh(spent);
  const fresh = await first.json();
  provider.saved.tokens = fresh;
  const before = await rawStatus(MCP_URL);
  // Past the gateway's reuse interval (REPLAY_WAIT_MS), where a use again is a replay.
  await new Promise((r) => setTimeout(r, Number(process.env.REPLAY_WAIT_MS || 0)));
  const again = await refresh(spent);
  const body = await again.json();
  const after = await rawStatus(MCP_URL);
  return { firstStatus: first.status, beforeStatus: before.status, status: again.status, error: body.error, after };
});

console.log(JSON.stringify(out));
process.exit(0);
