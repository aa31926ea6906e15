// An MCP server behind its own authorization server (the remote GitHub or Linear kind): every
// request must carry an access token of ISSUER whose audience is this server, and each tool
// call is recorded with the user (`sub`) and the token (`jti`) it came with.
//
// Usage: PEERS_NODE_MODULES=/path/to/node_modules node own_accounts.mjs ISSUER
// Prints `listening on http://127.0.0.1:PORT/mcp` when ready. Serves its protected resource
// metadata (RFC 9728) and answers 401 with a challenge naming it.
// Test hooks: `GET /test/calls` lists the recorded calls, `GET /test/lists` the user of each
// tools/list, `GET /test/presented` the audience and user of every token presented (valid or
// not: a token for another server must never reach this one); `POST /test/refuse?sub=alice` makes
// it refuse every token of that user issued until now (as a server does after a password
// change), so that only a new one is taken.
import http from 'node:http';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const sdk = (p) => import(pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { McpServer } = await sdk('server/mcp.js');
const { StreamableHTTPServerTransport } = await sdk('server/streamableHttp.js');

const issuer = process.argv[2];
const calls = [];
const lists = []; // the user of each tools/list
const presented = []; // {aud, sub} of every token presented, read without checking it
const seen = {}; // sub -> the jtis of its tokens seen so far
const refused = new Set();
let keys = null;

async function jwks() {
  if (!keys) {
    const conf = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
    keys = (await (await fetch(conf.jwks_uri)).json()).keys;
  }
  return keys;
}

// The token's claims, if it is a valid access token of the issuer for `resource`.
async function verify(token, resource) {
  const [h, p, s] = String(token || '').split('.');
  if (!h || !p || !s) return null;
  const header = JSON.parse(Buffer.from(h, 'base64url'));
  const jwk = (await jwks()).find((k) => k.kid === header.kid);
  if (!jwk) return null;
  const key = crypto.createPublicKey({ key: jwk, format: 'jwk' });
  if (!crypto.verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'))) return null;
  const claims = JSON.parse(Buffer.from(p, 'base64url'));
  const now = Math.floor(Date.now() / 1000);
  const aud = [].concat(claims.aud);
  if (claims.iss !== issuer || claims.exp <= now || !aud.includes(resource)) return null;
  if (refused.has(claims.jti)) return null;
  (seen[claims.sub] ??= new Set()).add(claims.jti);
  return claims;
}

function server(claims) {
  const s = new McpServer({ name: 'own-accounts', version: '1.0.0' });
  s.tool('whoami', 'Who this server sees calling', async () => {
    calls.push({ sub: claims.sub, jti: claims.jti });
    return { content: [{ type: 'text', text: `you are ${claims.sub}` }] };
  });
  return s;
}

async function handle(req, res) {
  const base = `http://127.0.0.1:${httpServer.address().port}`;
  const resource = `${base}/mcp`;
  const url = new URL(req.url, base);
  const json = (status, body) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
    return json(200, { resource, authorization_servers: [issuer], scopes_supported: ['openid', 'tools'] });
  }
  if (url.pathname === '/test/calls') return json(200, calls);
  if (url.pathname === '/test/lists') return json(200, lists);
  if (url.pathname === '/test/presented') return json(200, presented);
  if (url.pathname === '/test/refuse' && req.method === 'POST') {
    for (const jti of seen[url.searchParams.get('sub')] ?? []) refused.add(jti);
    return json(200, {});
  }
  if (url.pathname !== '/mcp') return json(404, { error: 'not found' });
  const token = (req.headers.authorization || '').replace(/^Bearer /, '');
  try {
    const c = JSON.parse(Buffer.from(token.split('.')[1], 'base64url'));
    presented.push({ aud: c.aud, sub: c.sub });
  } catch {
    // Not a JWT (or none): nothing to record.
  }
  const claims = await verify(token, resource).catch(() => null);
  if (!claims) {
    res.writeHead(401, {
      'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="openid tools"`,
      'content-type': 'application/json',
    });
    return res.end(JSON.stringify({ error: 'invalid_token' }));
  }
  let body;
  if (req.method === 'POST') {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    body = JSON.parse(raw);
    if (body.method === 'tools/list') lists.push({ sub: claims.sub });
  }
  // Stateless: a server and a transport per request, as the user the token names.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => transport.close());
  await server(claims).connect(transport);
  await transport.handleRequest(req, res, body);
}

// A request its client gave up on (a gateway stopped while it sent a body) ends here, not the
// server.
const httpServer = http.createServer((req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(400);
    res.end();
  });
});
httpServer.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
});
process.on('SIGTERM', () => process.exit(0));
