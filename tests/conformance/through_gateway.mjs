// The conformance suite's auth client, played by the gateway: the scenario's server becomes a
// `user_oauth` upstream of a gateway started for it (`catalog = "first_user"`: one user, one
// client, as the scenarios count), and a host's user connects their account, then calls one of
// its tools through the gateway, opening the connect links it is given as a browser would. In
// the client credentials scenarios it is an `oauth` upstream (the gateway's own client).
// Exits 0 when the call came back with a result.
//
// Usage (as the suite's --command): node through_gateway.mjs SERVER_URL
// Env: MCP_GATEWAY_BIN (the gateway binary), MCP_CONFORMANCE_CONTEXT (a pre-registered client
// of the scenario, if any), CLIENT_METADATA_URL (the gateway's client ID metadata document).
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const server = process.argv[2];
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcpgw-through-'));
const log = (...a) => console.error('[through-gateway]', ...a);

// The client credentials and workload identity scenarios (extensions: a machine client, no
// user) are the gateway's own client: `[upstreams.oauth]` with the scenario's client and its
// secret, private key or workload token, and no token endpoint, so that the gateway finds it as
// the spec says.
const machine = /^auth\/(client-credentials|wif)/.test(context.name || '');
let client = '';
if (context.client_id) client += `client_id = ${JSON.stringify(context.client_id)}\n`;
if (context.client_secret) client += 'client_secret = { env = "SCENARIO_CLIENT_SECRET" }\n';
if (context.private_key_pem) {
  fs.writeFileSync(path.join(dir, 'client-key.pem'), context.private_key_pem, { mode: 0o600 });
  client += `private_key = { file = ${JSON.stringify(path.join(dir, 'client-key.pem'))} }\n`;
  if (context.signing_algorithm) client += `private_key_algorithm = ${JSON.stringify(context.signing_algorithm)}\n`;
}
if (context.valid_jwt) client += 'workload_token = { env = "SCENARIO_WORKLOAD_TOKEN" }\n';
if (!machine && process.env.CLIENT_METADATA_URL) client += `client_metadata_url = ${JSON.stringify(process.env.CLIENT_METADATA_URL)}\n`;
const access = machine
  ? `sharing = "shared"\n[upstreams.oauth]\n${client}`
  : `sharing = "per_session"\n[upstreams.user_oauth]\ncatalog = "first_user"\n${client}`;
fs.writeFileSync(path.join(dir, 'gateway.toml'), `
[server]
listen = "127.0.0.1:0"
[database]
url = "sqlite://${dir}/gw.db?mode=rwc"
[routing]
enabled = false
[user_credentials]
key = { env = "CREDENTIALS_KEY" }
[[upstreams]]
name = "scenario"
transport = "http"
url = ${JSON.stringify(server)}
${access}`);

const gw = spawn(process.env.MCP_GATEWAY_BIN, ['--config', path.join(dir, 'gateway.toml')], {
  env: { ...process.env, CREDENTIALS_KEY: crypto.randomBytes(32).toString('base64'),
         SCENARIO_CLIENT_SECRET: context.client_secret || '',
         SCENARIO_WORKLOAD_TOKEN: context.valid_jwt || '', RUST_LOG: 'info' },
  stdio: ['ignore', 'pipe', fs.openSync(path.join(dir, 'gateway.log'), 'w')],
});
const stop = (code) => {
  gw.kill('SIGTERM');
  if (code !== 0) log(fs.readFileSync(path.join(dir, 'gateway.log'), 'utf8').split('\n').slice(-30).join('\n'));
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(code);
};
const mcp = await new Promise((resolve, reject) => {
  let out = '';
  gw.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (\S+)/);
    if (m) resolve(m[1]);
  });
  gw.on('exit', (c) => reject(new Error(`the gateway exited (${c})`)));
  setTimeout(() => reject(new Error('the gateway did not start in 30 s')), 30000);
}).catch((e) => { log(e.message); stop(1); });
const base = mcp.replace(/\/mcp$/, '');

// Opens a link in the headless browser; true when the gateway says "Connected".
function browse(url) {
  const out = execFileSync(process.execPath, [path.join(here, '../idp/browser.mjs'), url, 'conformance-user'], { encoding: 'utf8' });
  const page = JSON.parse(out.trim().split('\n').pop());
  log('browsed', url.split('?')[0], '->', page.status, page.text.slice(0, 120));
  return page.text.includes('Connected');
}

async function health() {
  const h = await (await fetch(`${base}/admin/v1/health`)).json();
  return h.find((u) => u.name === 'scenario');
}

let session = null;
let id = 0;
async function rpc(method, params) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (session) headers['mcp-session-id'] = session;
  const msg = { jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) };
  if (!method.startsWith('notifications/')) msg.id = ++id;
  const r = await fetch(mcp, { method: 'POST', headers, body: JSON.stringify(msg) });
  session = r.headers.get('mcp-session-id') || session;
  const text = await r.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch {}
  const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter(Boolean);
  return JSON.parse(data.pop());
}

// The user connects their account ahead of any call (again, when the upstream asked it for more
// scope while listing) until the upstream is up with tools, a bounded number of times.
async function connectFirst() {
  for (let round = 0; round < 3; round++) {
    const { url } = await (await fetch(`${base}/v1/connections/scenario`, { method: 'POST' })).json();
    if (!browse(url)) throw new Error('the user did not connect');
    let h = await health();
    for (let i = 0; i < 100 && !(h.status === 'up' && h.tools > 0) && !/connects (it )?again/.test(h.last_error || ''); i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await health();
    }
    if (h.status === 'up' && h.tools > 0) return;
    log('catalog:', h.status, h.last_error);
  }
  throw new Error('the upstream lists no tools');
}

// The gateway's own client needs no user: the upstream comes up with the token it fetched.
async function upWithTools() {
  let h = await health();
  for (let i = 0; i < 150 && !(h.status === 'up' && h.tools > 0); i++) {
    await new Promise((r) => setTimeout(r, 100));
    h = await health();
  }
  if (!(h.status === 'up' && h.tools > 0)) throw new Error(`the upstream is ${h.status}: ${h.last_error}`);
}

try {
  await (machine ? upWithTools() : connectFirst());
  await rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'conformance-host', version: '1' } });
  await rpc('notifications/initialized');
  // The scenario's tools (the gateway lists its own search tools too).
  const tools = (await rpc('tools/list', {})).result.tools.filter((t) => t.name.startsWith('scenario'));
  if (!tools.length) throw new Error('no tools of the scenario listed');
  for (let round = 0; round < 4; round++) {
    const r = await rpc('tools/call', { name: tools[0].name, arguments: {} });
    const text = r.result?.content?.[0]?.text ?? '';
    const link = r.result?.isError && text.match(/(http:\/\/\S+\/oauth\/upstream\/connect\S+)/)?.[1];
    if (link) {
      if (!browse(link)) throw new Error('the user did not connect');
      continue;
    }
    if (r.error || r.result?.isError) throw new Error(`the call failed: ${JSON.stringify(r)}`);
    log('called', tools[0].name, '->', JSON.stringify(r.result).slice(0, 200));
    stop(0);
  }
  throw new Error('still asked to connect after 4 rounds');
} catch (e) {
  log(e.message);
  stop(1);
}
