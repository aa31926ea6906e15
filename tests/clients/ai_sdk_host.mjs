// A real MCP host of another kind against the gateway's own authorization server: the Vercel AI
// SDK's MCP client (`@ai-sdk/mcp`), whose OAuth client is its own code, not the MCP SDKs'. From
// the gateway's 401 it discovers the authorization server, registers itself (RFC 7591) and
// sends the user to the sign-in page (walked by `oauth_host.mjs`); the host then redeems the
// code with `auth()`, as the AI SDK's documentation has an application do at its callback.
//
// Env: PEERS_NODE_MODULES, MCP_URL, PAT (the user's personal access token).
// Prints one JSON line with what happened at each step.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { actAsBrowser, MemoryProvider, signInCallAndRefresh, step } from './oauth_host.mjs';

const { createMCPClient, auth, UnauthorizedError } = await import(
  pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, '@ai-sdk/mcp/dist/index.js')).href
);

const MCP_URL = process.env.MCP_URL;
class Provider extends MemoryProvider {
  constructor() {
    super('AI SDK test host', 'http://127.0.0.1:33419/callback');
    this.back = null;
  }
  state() {
    this.saved.state = crypto.randomUUID();
    return this.saved.state;
  }
  storedState() {
    return this.saved.state;
  }
  async redirectToAuthorization(url) {
    this.signIns += 1;
    this.back = await actAsBrowser(url, process.env.PAT, step, this.name);
  }
}

const provider = new Provider();
const open = () => createMCPClient({ transport: { type: 'http', url: MCP_URL, authProvider: provider } });

async function connect() {
  try {
    return await open();
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !provider.back) throw e;
    const back = provider.back;
    provider.back = null;
    const result = await auth(provider, {
      serverUrl: MCP_URL,
      authorizationCode: back.searchParams.get('code'),
      callbackState: back.searchParams.get('state'),
      callbackIssuer: back.searchParams.get('iss') ?? undefined,
    });
    if (result !== 'AUTHORIZED') throw new Error(`auth() after the callback: ${result}`);
    return await open();
  }
}

// The revision the client settled on (it asks `server/discover` first, 2026-07-28).
await signInCallAndRefresh(connect, provider, (client) => client.protocolVersion);
