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
//   `refresh: true` gives an authorization-code client refresh tokens (`rotate: true`: a new one
//   at each refresh, the spent one used again revoking the grant);
//   `id_jag: {"client_id"}` lets an authorization-code client exchange its users' ID tokens for
//   identity assertion grants (ID-JAG, enterprise-managed authorization) naming that client of
//   the resource's authorization server; the provider's policy refuses accounts with
//   `no_id_jag: true`; a grant carries the account's `groups`. `POST /test/id-jag-client
//   {"client", "client_id"}` changes that client's `id_jag.client_id`. `jwt_bearer: true` lets a client redeem such grants here (RFC 7523) when
//   IDP_TRUST names the provider that issues them.
// IDP_ID_TOKEN_TTL: the ID tokens' lifetime in seconds (default 3600). `GET /test/grants`
// answers how many token requests of each grant type succeeded (`id-jag` for the exchanges that
// issued a grant).
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
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const ID_JAG_TYPE = 'urn:ietf:params:oauth:token-type:id-jag';
const trust = process.env.IDP_TRUST;
const idTokenTtl = Number(process.env.IDP_ID_TOKEN_TTL || 3600);
const grants = {};
const count = (g) => { grants[g] = (grants[g] ?? 0) + 1; };
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
      grant_types: [
        'authorization_code', ...(c.refresh ? ['refresh_token'] : []),
        ...(c.id_jag ? [TOKEN_EXCHANGE] : []),
      ],
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
      grant_types: [
        'client_credentials', ...(c.token_exchange ? [TOKEN_EXCHANGE] : []),
        ...(c.jwt_bearer ? [JWT_BEARER] : []),
      ],
      response_types: [],
      redirect_uris: [],
      scope: c.scope,
    }),
    scopes: [...new Set(clients.flatMap((c) => c.scope.split(' ')))],
    claims: { openid: ['sub'], groups: ['groups'], email: ['email'] },
    conformIdTokenClaims: false,
    ttl: { IdToken: idTokenTtl },
    // Clients allowed the refresh_token grant get refresh tokens (no `offline_access` needed).
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    // `rotate: true`: each refresh gives a new refresh token, and the spent one used again
    // revokes the grant (as Auth0 or Okta with rotation do); otherwise the provider's default.
    rotateRefreshToken: (ctx) => {
      const { Client: client, RefreshToken: token } = ctx.oidc.entities;
      if (clients.find((c) => c.client_id === client.clientId)?.rotate) return true;
      if (client.clientAuthMethod === 'none' && !token.isSenderConstrained()) return true;
      return token.ttlPercentagePassed() >= 70;
    },
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
  // Why a grant was refused, which the answer keeps to itself (`error_detail`).
  provider.on('grant.error', (ctx, err) => console.error('grant.error', err.error_detail || err.message));
  provider.registerGrantType(TOKEN_EXCHANGE, exchange(issuer, key), [
    'subject_token', 'subject_token_type', 'requested_token_type', 'resource', 'audience', 'scope',
  ]);
  if (trust) provider.registerGrantType(JWT_BEARER, redeemGrant(issuer, key), ['assertion', 'resource', 'scope']);
  provider.use(async (ctx, next) => {
    await next();
    const g = ctx.oidc?.params?.grant_type;
    if (ctx.path === '/token' && ctx.status === 200 && g) {
      count(ctx.oidc.params.requested_token_type === ID_JAG_TYPE ? 'id-jag' : g);
    }
  });
  return provider;
}

const sign = (key, header, payload) => {
  const input = `${b64({ alg: 'RS256', kid: key.kid, ...header })}.${b64(payload)}`;
  const sig = crypto.sign('sha256', Buffer.from(input), crypto.createPrivateKey({ key, format: 'jwk' }));
  return `${input}.${sig.toString('base64url')}`;
};

// The claims of a JWT signed by one of `keys` (a JWKS's), or null.
function verified(token, keys) {
  const [h, p, s] = String(token || '').split('.');
  if (!h || !p || !s) return null;
  const header = JSON.parse(Buffer.from(h, 'base64url'));
  const jwk = keys.find((k) => k.kid === header.kid);
  if (!jwk) return null;
  const publicKey = crypto.createPublicKey({ key: jwk, format: 'jwk' });
  if (!crypto.verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'))) return null;
  return { header, claims: JSON.parse(Buffer.from(p, 'base64url')) };
}

// Enterprise-managed authorization, the provider's half: one of its ID tokens, issued to the
// asking client, exchanged for an identity assertion grant for `audience` (the resource's
// authorization server), unless the provider's policy refuses that user.
function idJag(ctx, issuer, key, client) {
  const { subject_token: token, subject_token_type: type, audience, resource, scope } = ctx.oidc.params;
  if (!client?.id_jag) throw new errors.UnauthorizedClient('not allowed to ask for identity assertion grants');
  if (type !== ID_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be id_token');
  if (!audience) throw new errors.InvalidRequest('audience is required');
  const { kid, ...pub } = key;
  const v = verified(token, [{ kid, n: pub.n, e: pub.e, kty: pub.kty }]);
  const now = Math.floor(Date.now() / 1000);
  if (!v || v.claims.iss !== issuer || v.claims.exp <= now) throw new errors.InvalidGrant('subject_token is not a valid ID token of this issuer');
  if (v.claims.aud !== client.client_id) throw new errors.InvalidGrant('subject_token was issued to another client');
  if (accounts[v.claims.sub]?.no_id_jag) throw new errors.AccessDenied(`policy: ${v.claims.sub} may not use ${audience}`);
  const ttl = 300;
  const grant = sign(key, { typ: 'oauth-id-jag+jwt' }, {
    iss: issuer, sub: v.claims.sub, aud: audience, resource, client_id: client.id_jag.client_id,
    ...(accounts[v.claims.sub]?.groups ? { groups: accounts[v.claims.sub].groups } : {}),
    ...(scope ? { scope } : {}), iat: now, exp: now + ttl, jti: crypto.randomUUID(),
  });
  ctx.body = { access_token: grant, issued_token_type: ID_JAG_TYPE, token_type: 'N_A', expires_in: ttl, ...(scope ? { scope } : {}) };
}

// Enterprise-managed authorization, the resource authorization server's half: a grant of the
// trusted provider's, for this server and the authenticated client, once, becomes an access
// token for its resource with its subject.
const spent = new Set();
let trustKeys = null;
function redeemGrant(issuer, key) {
  return async (ctx) => {
    const client = clients.find((c) => c.client_id === ctx.oidc.client.clientId);
    if (!client?.jwt_bearer) throw new errors.UnauthorizedClient('not allowed to redeem grants');
    if (!trustKeys) {
      const conf = await (await fetch(`${trust}/.well-known/openid-configuration`)).json();
      trustKeys = (await (await fetch(conf.jwks_uri)).json()).keys;
    }
    const v = verified(ctx.oidc.params.assertion, trustKeys);
    const now = Math.floor(Date.now() / 1000);
    if (!v || v.header.typ !== 'oauth-id-jag+jwt') throw new errors.InvalidGrant('the assertion is not an identity assertion grant of a trusted provider');
    const c = v.claims;
    if (c.iss !== trust || c.aud !== issuer || c.exp <= now) throw new errors.InvalidGrant('the grant is not for this server, or has expired');
    if (c.client_id !== client.client_id) throw new errors.InvalidGrant('the grant names another client');
    if (spent.has(c.jti)) throw new errors.InvalidGrant('the grant was used before');
    spent.add(c.jti);
    const ttl = ttlOf[client.client_id] ?? 300;
    const access = sign(key, { typ: 'at+jwt' }, {
      iss: issuer, sub: c.sub, aud: c.resource, client_id: client.client_id,
      ...(c.scope ? { scope: c.scope } : {}), iat: now, exp: now + ttl, jti: crypto.randomUUID(),
    });
    ctx.body = { access_token: access, token_type: 'Bearer', expires_in: ttl, ...(c.scope ? { scope: c.scope } : {}) };
  };
}

// RFC 8693 token exchange for clients with `token_exchange: {accept_audience}`: a valid access
// token of this issuer whose `aud` is `accept_audience` (the client's own API) is exchanged for one
// whose audience is the requested `resource`, with the same subject and the client as the actor.
function exchange(issuer, key) {
  const publicKey = crypto.createPublicKey({ key, format: 'jwk' });
  return async (ctx) => {
    const client = clients.find((c) => c.client_id === ctx.oidc.client.clientId);
    if (ctx.oidc.params.requested_token_type === ID_JAG_TYPE) return idJag(ctx, issuer, key, client);
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
// `POST /test/outage` makes every other request fail with 503 (an outage of the provider) until
// `POST /test/outage-over`.
let outage = false;
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
  if (req.method === 'POST' && req.url === '/test/id-jag-client') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { client, client_id } = JSON.parse(body);
      clients.find((c) => c.client_id === client).id_jag.client_id = client_id;
      res.end('{}');
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/test/grants') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(grants));
    return;
  }
  if (req.method === 'GET' && req.url === '/test/registrations') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ count: registrations }));
    return;
  }
  if (req.method === 'POST' && (req.url === '/test/outage' || req.url === '/test/outage-over')) {
    outage = req.url === '/test/outage';
    res.end('{}');
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
  if (outage) {
    res.statusCode = 503;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'down for a test' }));
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
