// A host whose access token is bound to its key (DPoP, RFC 9449), tried against a resource:
// it asks the provider for a client-credentials token with a proof, then posts `initialize` to
// the resource as a bearer token (a copied token, without the key), with the DPoP scheme and a
// fresh proof, with that proof again (a replay), and with a proof of another key. Prints
// `{"tokenType", "bound", "bearer", "dpop", "replayed", "otherKey", "challenge"}` (the statuses,
// and the challenge of the bearer try).
//
// With FORM (a JSON object) the token request sends that form instead, as a public client when
// SECRET is `-` (a code redeemed at the gateway's own authorization server); a refresh token in
// the answer is then tried without a proof, with a proof of another key, and with one of the
// key (`refreshNoProof`, `refreshOtherKey`, `refreshed`: statuses; `refreshedType`).
//
// With ALSO_AT (the URL of another replica of the same resource) the proof the resource took is
// sent there too, right after (`elsewhere`: its status).
//
// Usage: node dpop_client.mjs TOKEN_ENDPOINT CLIENT_ID SECRET SCOPE RESOURCE [FORM]
import crypto from 'node:crypto';

const [tokenEndpoint, clientId, secret, scope, resource, form] = process.argv.slice(2);
const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

function keyPair() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  return { privateKey, jwk: { kty, crv, x, y } };
}

function proof(key, htm, htu, token) {
  const header = { typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk };
  const claims = { jti: crypto.randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000) };
  if (token) claims.ath = crypto.createHash('sha256').update(token).digest('base64url');
  const input = `${b64(header)}.${b64(claims)}`;
  const sig = crypto.sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${sig.toString('base64url')}`;
}

const key = keyPair();
function tokenRequest(body, dpop) {
  const headers = { 'content-type': 'application/x-www-form-urlencoded' };
  if (secret !== '-') headers.authorization = `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
  if (dpop) headers.dpop = dpop;
  return fetch(tokenEndpoint, { method: 'POST', headers, body: new URLSearchParams(body) });
}
const tokenResp = await tokenRequest(
  form ? JSON.parse(form) : { grant_type: 'client_credentials', scope, resource },
  proof(key, 'POST', tokenEndpoint),
);
const tokens = await tokenResp.json();
if (!tokens.access_token) {
  console.log(JSON.stringify({ failure: tokens }));
  process.exit(0);
}
const token = tokens.access_token;
const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url'));

const initialize = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'dpop-host', version: '1' } },
});
async function post(authorization, dpop, at = resource) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization };
  if (dpop) headers.dpop = dpop;
  const r = await fetch(at, { method: 'POST', headers, body: initialize });
  await r.text();
  return r;
}
const bearer = await post(`Bearer ${token}`);
const fresh = proof(key, 'POST', resource, token);
const dpop = await post(`DPoP ${token}`, fresh);
const elsewhere = process.env.ALSO_AT ? { elsewhere: (await post(`DPoP ${token}`, fresh, process.env.ALSO_AT)).status } : {};
const replayed = await post(`DPoP ${token}`, fresh);
const otherKey = await post(`DPoP ${token}`, proof(keyPair(), 'POST', resource, token));
const refresh = {};
if (tokens.refresh_token) {
  const body = { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId };
  refresh.refreshNoProof = (await tokenRequest(body)).status;
  refresh.refreshOtherKey = (await tokenRequest(body, proof(keyPair(), 'POST', tokenEndpoint))).status;
  const r = await tokenRequest(body, proof(key, 'POST', tokenEndpoint));
  refresh.refreshed = r.status;
  refresh.refreshedType = (await r.json()).token_type;
}
console.log(JSON.stringify({
  ...refresh,
  ...elsewhere,
  tokenType: tokens.token_type,
  bound: claims.cnf?.jkt ?? null,
  bearer: bearer.status,
  challenge: bearer.headers.get('www-authenticate'),
  dpop: dpop.status,
  replayed: replayed.status,
  otherKey: otherKey.status,
}));
