// A real machine host of the TypeScript SDK against the gateway's authorization server: its
// `ClientCredentialsProvider` takes the gateway's 401, finds the expected issuer through the
// protected resource metadata, and gets a token with its client id and secret (the client
// credentials grant), for itself.
//
// With SECRET `key:PATH` it signs assertions with the private key at PATH instead (ES256,
// `PrivateKeyJwtProvider`, private_key_jwt).
//
// Env: PEERS_NODE_MODULES. Usage: node ts_client_credentials.mjs MCP_URL ISSUER CLIENT_ID SECRET
// Prints {"tools": [...], "text": first text of fx__echo}.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const sdk = (p) =>
  import(pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ClientCredentialsProvider, PrivateKeyJwtProvider } = await sdk('client/auth-extensions.js');

const [url, issuer, clientId, clientSecret] = process.argv.slice(2);
const authProvider = clientSecret.startsWith('key:')
  ? new PrivateKeyJwtProvider({
    clientId, privateKey: fs.readFileSync(clientSecret.slice(4), 'utf8'), algorithm: 'ES256',
    expectedIssuer: issuer,
  })
  : new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: issuer });
const client = new Client({ name: 'ts-machine-host', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
const tools = await client.listTools();
const r = await client.callTool({ name: 'fx__echo', arguments: { message: `from a TypeScript machine (${clientId})` } });
console.log(JSON.stringify({ tools: tools.tools.map((t) => t.name), text: r.content?.[0]?.text ?? '' }));
await client.close();
