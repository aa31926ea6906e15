// A real MCP host on the TypeScript SDK's second generation (`@modelcontextprotocol/client`
// 2.x, the package hosts move to from `@modelcontextprotocol/sdk`): its OAuth client discovers
// the gateway's authorization server from the 401, registers itself (RFC 7591), sends the user
// to the sign-in page (walked by `oauth_host.mjs`), and redeems the code with
// `transport.finishAuth(callback params)`, which checks `iss` (RFC 9207); the host checks
// `state` itself, as the SDK says.
//
// Env: PEERS_NODE_MODULES, MCP_URL, PAT (the user's personal access token), NEGOTIATION
// (optional: the client's `versionNegotiation` mode, e.g. `auto`, which asks `server/discover`
// first; the SDK's default is the 2025 handshake).
// Prints one JSON line with what happened at each step.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { actAsBrowser, MemoryProvider, signInCallAndRefresh, step } from './oauth_host.mjs';

const { Client, StreamableHTTPClientTransport, UnauthorizedError } = await import(
  pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, '@modelcontextprotocol/client/dist/index.mjs')).href
);

const MCP_URL = process.env.MCP_URL;
class Provider extends MemoryProvider {
  constructor() {
    super('TypeScript SDK v2 test host', 'http://127.0.0.1:33422/callback');
    this.back = null;
  }
  state() {
    this.saved.state = crypto.randomUUID();
    return this.saved.state;
  }
  async redirectToAuthorization(url) {
    this.signIns += 1;
    this.back = await actAsBrowser(url, process.env.PAT, step, this.name);
  }
}

const provider = new Provider();
const transport = () => new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
const options = process.env.NEGOTIATION ? { versionNegotiation: { mode: process.env.NEGOTIATION } } : {};
const newClient = () => new Client({ name: 'ts-v2-test', version: '1.0.0' }, options);

async function connect() {
  const client = newClient();
  const t = transport();
  try {
    await client.connect(t);
    return client;
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !provider.back) throw e;
    const back = provider.back;
    provider.back = null;
    if (back.searchParams.get('state') !== provider.saved.state) throw new Error('the state came back changed');
    await t.finishAuth(back.searchParams);
    const again = newClient();
    await again.connect(transport());
    return again;
  }
}

await signInCallAndRefresh(connect, provider, (client) => client.getNegotiatedProtocolVersion?.());
