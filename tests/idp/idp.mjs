// A real OpenID provider (npm `oidc-provider`) for the gateway's auth tests.
//
// Usage: PEERS_NODE_MODULES=/path/to/node_modules node idp.mjs CLIENTS_JSON [ACCOUNTS_JSON]
//   CLIENTS_JSON: [{"client_id", "client_secret" or "key_file", "scope", "ttl"?}] — client-credentials clients;
//   a client with `redirect_uris` uses the authorization code flow instead (a company IdP that
//   users sign in at): its login page (oidc-provider's own) takes any login with any password.
//   ACCOUNTS_JSON: {"alice": {"groups": ["eng"], "email": "..."}} — the claims of each login,
//   in the ID token (`groups` and `email` scopes).
//   `scope` lists the scopes the client may ask for, `ttl` its access-token lifetime (seconds),
//   `token_exchange: {"accept_audience": URL}` lets it exchange tokens for that audience (RFC 8693);
//   `refresh: true` gives an authorization-code client refresh tokens.
// IDP_REGISTRATION=open opens dynamic client registration (RFC 7591); `GET /test/registrations`
// answers `{"count"}`, how many clients registered.
// Listens on 127.0.0.1 with a free port and prints `issuer http://127.0.0.1:PORT` when ready.
// Access tokens are RS256 JWTs (`at+jwt`) whose `aud` is the `resource` parameter (RFC 8707).
// `POST /test/rotate` replaces the signing key by a new one (the old one leaves the JWKS) and
// answers with the new `kid`. `POST /test/sign {"header": {...}, "payload": {...}}` signs any
// header and claims with the current key (RS256; `kid` and `alg` are set) and answers the compact
// JWT: for tokens the provider itself would never issue (e.g. a `crit` header).
import http from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// The package lives with the other test peers (scripts/install-peers), not next to this file.
const { default: Provider, errors } = await import(
  pathToFileURL(path.join(process.env.PEERS_NODE_MODULES, 'oidc-provider/lib/index.js')).href
);

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const clients = JSON.parse(process.argv[2] || '[]');
const accounts = JSON.parse(process.argv[3] || '{}');
const registration = process.env.IDP_REGISTRATION === 'open';
const interactive = registration || clients.some((c) => c.redirect_uris);
let registrations = 0;
const ttlOf = Object.fromEntries(clients.map((c) => [c.client_id, c.ttl ?? 300]));

function newKey() {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, kid: crypto.randomUUID(), alg: 'RS256', use: 'sig' };
}

function build(issuer, key) {
  const provider = new Provider(issuer, {
    clients: clients.map((c) => c.redirect_uris ? {
      client_id: c.client_id,
      client_secret: c.client_secret,
      grant_types: c.refresh ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
      response_types: ['code'],
      redirect_uris: c.redirect_uris,
      application_type: 'native',
      scope: c.scope,
    } : {
      client_id: c.client_id,
      // A client with `key_file` (a private key's PEM) authenticates with assertions it signs
      // (`private_key_jwt`); the provider knows only the public half.
      ...(c.key_file ? {
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [crypto.createPublicKey(fs.readFileSync(c.key_file)).export({ format: 'jwk' })] },
      } : { client_secret: c.client_secret }),
      grant_types: c.token_exchange ? ['client_credentials', TOKEN_EXCHANGE] : ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      scope: c.scope,
    }),
    scopes: [...new Set(clients.flatMap((c) => c.scope.split(' ')))],
    claims: { openid: ['sub'], groups: ['groups'], email: ['email'] },
    conformIdTokenClaims: false,
    // Clients allowed the refresh_token grant get refresh tokens (no `offline_access` needed).
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    findAccount: async (ctx, id) => ({
      accountId: id,
      claims: async () => ({ sub: id, ...(accounts[id] || {}) }),
    }),
    jwks: { keys: [key] },
    features: {
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      devInteractions: { enabled: interactive },
      registration: { enabled: registration },
      resourceIndicators: {
        enabled: true,
        // Without a `resource` parameter the token is for this made-up API, not the gateway.
        defaultResource: () => 'https://no-resource-given.invalid/',
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => ({
          scope: client.scope,
          audience: resource,
          accessTokenTTL: ttlOf[client.clientId] ?? 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.proxy = true;
  provider.on('registration_create.success', () => registrations++);
  provider.registerGrantType(TOKEN_EXCHANGE, exchange(issuer, key), [
    'subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'audience', 'scope',
  ]);
  return provider;
}

// RFC 8693 token exchange for clients with `token_exchange: {accept_audience}`: a valid access
// token of this issuer whose `aud` is `accept_audience` (the client's own API) is exchanged for one
// whose audience is the requested `resource`, with the same subject and the client as the actor.
function exchange(issuer, key) {
  const publicKey = crypto.createPublicKey({ key, format: 'jwk' });
  return async (ctx) => {
    const client = clients.find((c) => c.client_id === ctx.oidc.client.clientId);
    const { subject_token: token, subject_token_type: type, resource } = ctx.oidc.params;
    if (!client?.token_exchange) throw new errors.UnauthorizedClient('not allowed to exchange tokens');
    if (type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be access_token');
    if (!resource) throw new errors.InvalidTarget('resource is required');
    const [h, p, s] = String(token || '').split('.');
    const valid = h && p && s && crypto.verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'));
    if (!valid) throw new errors.InvalidGrant('subject_token is not a token of this issuer');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const now = Math.floor(Date.now() / 1000);
    if (claims.exp <= now) throw new errors.InvalidGrant('subject_token has expired');
    if (claims.aud !== client.token_exchange.accept_audience) {
      throw new errors.InvalidGrant(`subject_token is for ${claims.aud}, not for this client`);
    }
    const ttl = 300;
    const payload = {
      iss: issuer, sub: claims.sub ?? claims.client_id, aud: resource, client_id: client.client_id,
      act: { sub: client.client_id }, scope: ctx.oidc.params.scope ?? claims.scope,
      iat: now, exp: now + ttl, jti: crypto.randomUUID(),
    };
    const input = `${b64({ alg: 'RS256', typ: 'at+jwt', kid: key.kid })}.${b64(payload)}`;
    const sig = crypto.sign('sha256', Buffer.from(input), crypto.createPrivateKey({ key, format: 'jwk' }));
    ctx.body = {
      access_token: `${input}.${sig.toString('base64url')}`,
      issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: ttl,
    };
  };
}

let handler = null;
let currentKid = null;
let currentKey = null;
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/test/sign') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { header, payload } = JSON.parse(body);
      const input = `${b64({ ...header, alg: 'RS256', kid: currentKid })}.${b64(payload)}`;
      const key = crypto.createPrivateKey({ key: currentKey, format: 'jwk' });
      const sig = crypto.sign('sha256', Buffer.from(input), key).toString('base64url');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ token: `${input}.${sig}` }));
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/test/registrations') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ count: registrations }));
    return;
  }
  if (req.method === 'POST' && req.url === '/test/rotate') {
    const key = newKey();
    handler = build(issuer, key).callback();
    currentKid = key.kid;
    currentKey = key;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ kid: currentKid }));
    return;
  }
  handler(req, res);
});
let issuer;
server.listen(0, '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  const key = newKey();
  currentKid = key.kid;
  currentKey = key;
  handler = build(issuer, key).callback();
  console.log(`issuer ${issuer}`);
  // Nobody reads stdout after that line: the provider's own notices (it prints one at each
  // development sign-in) go to stderr, where a closed pipe cannot kill the process.
  console.log = console.info = console.warn = (...a) => console.error(...a);
});
process.on('SIGTERM', () => process.exit(0));
