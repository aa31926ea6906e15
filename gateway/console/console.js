// The admin console: plain JavaScript over the admin API and the MCP endpoint, with the bearer
// token the operator signs in with (kept for this tab only). No build step, no third-party code.
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);
const TOKEN_KEY = "mcp-gateway-console-token";
let token = sessionStorage.getItem(TOKEN_KEY) || "";

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(c ?? ""));
  return node;
}

/// A form's control by name (`form.name` and `form.action` are the form's own properties).
const field = (form, name) => form.elements.namedItem(name);

function say(text, kind = "ok") {
  const m = $("#message");
  m.textContent = text;
  m.className = text ? kind : "";
}

/// A time with its zone: UTC, as the audit log and the API keep it.
const when = (ms) => (ms ? `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC` : "");

function authHeaders(extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

/// A call to the admin API (or /v1/route); throws with the server's own message.
async function api(method, path, body) {
  const headers = authHeaders({ Accept: "application/json" });
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let data = text;
  try { data = text ? JSON.parse(text) : null; } catch { /* plain text */ }
  if (!r.ok) {
    const msg = data && data.error ? data.error.message || data.error.code : text;
    throw new Error(`${r.status}: ${msg}`);
  }
  return data;
}

// MCP over Streamable HTTP (2025-06-18), so tool calls go through the same path, auth, RBAC and
// audit log as any host's.
const mcp = { session: null, id: 0 };

async function mcpPost(message) {
  const headers = authHeaders({
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
  });
  if (mcp.session) headers["Mcp-Session-Id"] = mcp.session;
  const r = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(message) });
  const session = r.headers.get("Mcp-Session-Id");
  if (session) mcp.session = session;
  if (r.status === 202) return null;
  const type = r.headers.get("Content-Type") || "";
  const text = await r.text();
  if (type.includes("text/event-stream")) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (!data) continue;
      const m = JSON.parse(data);
      if (m.id === message.id) return m;
    }
    throw new Error("the answer was not in the stream");
  }
  let m;
  try { m = JSON.parse(text); } catch { throw new Error(`${r.status}: ${text}`); }
  if (r.status === 404 && mcp.session) { mcp.session = null; m.expired = true; }
  return m;
}

async function mcpRequest(method, params, retried = false) {
  if (!mcp.session) {
    const init = await mcpPost({
      jsonrpc: "2.0", id: ++mcp.id, method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "mcp-gateway-console", version: "1" } },
    });
    if (!init || init.error) throw new Error(init ? init.error.message : "no answer to initialize");
    await mcpPost({ jsonrpc: "2.0", method: "notifications/initialized" });
  }
  const m = await mcpPost({ jsonrpc: "2.0", id: ++mcp.id, method, params });
  if (m.expired && !retried) return mcpRequest(method, params, true);
  if (m.error) throw new Error(m.error.message);
  return m.result;
}

const PAGE = 100;

/// A table's rows, a page at a time: past the first page a row offers the next one.
function fill(tbody, rows, shown = PAGE) {
  tbody.replaceChildren(...rows.slice(0, shown));
  if (!rows.length) tbody.append(el("tr", {}, el("td", { colspan: 20 }, "none")));
  if (rows.length > shown) {
    tbody.append(el("tr", { class: "more" }, el("td", { colspan: 20 },
      el("button", { type: "button", onclick: () => fill(tbody, rows, shown + PAGE) },
        `Show ${Math.min(PAGE, rows.length - shown)} more (${rows.length - shown} not shown)`))));
  }
}

async function guarded(work) {
  try { await work(); } catch (e) { say(e.message, "error"); }
}

// ---- overview

async function showOverview() {
  const health = await api("GET", "/admin/v1/health");
  const up = health.filter((h) => h.status === "up").length;
  const tools = health.reduce((n, h) => n + (h.tools || 0), 0);
  const cards = [["upstreams up", `${up} / ${health.length}`], ["tools", tools]];
  try {
    const text = await (await fetch("/metrics")).text();
    const metric = (name) => {
      const line = text.split("\n").find((l) => l.startsWith(name + " ") || l.startsWith(name + "{"));
      return line ? Number(line.split(" ").pop()) : null;
    };
    const rss = metric("mcp_gateway_process_resident_memory_bytes");
    const sessions = metric("mcp_gateway_sessions_active");
    if (rss) cards.push(["resident memory", `${Math.round(rss / 1048576)} MiB`]);
    if (sessions !== null) cards.push(["sessions", sessions]);
  } catch { /* metrics may live on the ops port */ }
  $("#overview-cards").replaceChildren(...cards.map(([k, v]) => el("div", { class: "card" }, el("b", {}, String(v)), k)));
  $("#routing-status").textContent = JSON.stringify(await api("GET", "/admin/v1/routing"), null, 2);
}

// ---- upstreams

let upstreams = [];

async function showUpstreams() {
  upstreams = await api("GET", "/admin/v1/upstreams");
  fill($("#upstreams-table tbody"), upstreams.map((u) => {
    const h = u.health || {};
    return el("tr", { dataset: { upstream: u.name } },
      el("td", {}, u.name), el("td", {}, u.transport), el("td", {}, u.source),
      el("td", { class: `status-${h.status}` }, u.enabled === false ? "disabled" : h.status || ""),
      el("td", { class: "tools" }, String(h.tools ?? "")), el("td", {}, String(h.restarts ?? "")),
      el("td", { class: "error" }, h.last_error || ""),
      // What the config file defines is changed there: the API refuses it (409).
      u.source === "config" ? el("td", { class: "note" }, "config file ",
        el("button", { type: "button", onclick: () => guarded(() => showHistory(u.name)) }, "History")) : el("td", {},
        el("button", { type: "button", onclick: () => guarded(() => showHistory(u.name)) }, "History"), " ",
        el("button", { type: "button", onclick: () => editUpstream(u) }, "Edit"), " ",
        el("button", { type: "button", onclick: () => guarded(() => toggleUpstream(u)) }, u.enabled === false ? "Enable" : "Disable"), " ",
        el("button", { type: "button", class: "danger", onclick: () => guarded(() => deleteUpstream(u.name)) }, "Delete")));
  }));
  await showPendingTools();
  // The charts shown stay current with the table.
  const shown = $("#upstream-history").dataset.upstream;
  if (shown && $("#upstream-history").childElementCount) await showHistory(shown);
}

// ---- tool pinning: changes waiting for review, as a line diff of the two definitions

/// The lines of `a` and `b` as [kind, text] with kind " " (both), "-" (only a) or "+" (only b):
/// a longest-common-subsequence diff (definitions are short).
function lineDiff(a, b) {
  const n = a.length, m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push([" ", a[i]]); i++; j++; }
    else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) out.push(["+", b[j++]]);
    else out.push(["-", a[i++]]);
  }
  return out;
}

async function showPendingTools() {
  const pending = await api("GET", "/admin/v1/pins/pending");
  const jsonLines = (d) => (d ? JSON.stringify(d, null, 2).split("\n") : []);
  $("#pending-tools").replaceChildren(...(pending.length ? pending.map((p) => {
    const review = (verdict) => guarded(async () => {
      if (!confirm(`${verdict === "approve" ? "Approve" : "Reject"} this definition of ${p.tool} (${p.upstream})?`)) return;
      await api("POST", `/admin/v1/pins/${encodeURIComponent(p.upstream)}/${encodeURIComponent(p.tool)}/${verdict}`, { hash: p.hash });
      say(`${p.upstream} / ${p.tool}: ${verdict === "approve" ? "approved" : "rejected"}`);
      await showUpstreams();
    });
    const diff = lineDiff(jsonLines(p.approved), jsonLines(p.listed));
    return el("div", { class: "pending", dataset: { upstream: p.upstream, tool: p.tool } },
      el("h4", {}, `${p.upstream} / ${p.tool} — ${p.status === "new" ? "new tool" : "changed"}`),
      el("pre", { class: "diff" }, ...diff.map(([k, t]) => el("span", { class: { "+": "add", "-": "del", " ": "same" }[k] }, `${k} ${t}\n`))),
      el("button", { type: "button", onclick: () => review("approve") }, "Approve"), " ",
      el("button", { type: "button", class: "danger", onclick: () => review("reject") }, "Reject"));
  }) : [el("p", { class: "note" }, "none")]));
}

async function toggleUpstream(u) {
  await api("PUT", `/admin/v1/upstreams/${encodeURIComponent(u.name)}`, { ...specOf(u), enabled: u.enabled === false });
  await showUpstreams();
}

async function deleteUpstream(name) {
  if (!confirm(`Delete upstream ${name}?`)) return;
  await api("DELETE", `/admin/v1/upstreams/${encodeURIComponent(name)}`);
  say(`deleted ${name}`);
  await showUpstreams();
}

// ---- catalog and tool calls

let catalog = [];

async function showCatalog() {
  catalog = await api("GET", `/admin/v1/catalog?kind=${$("#catalog-kind").value}`);
  renderCatalog();
}

let catalogShown = PAGE;

function renderCatalog() {
  const q = $("#catalog-search").value.trim().toLowerCase();
  const shown = catalog.filter((t) => !q || t.exposed.toLowerCase().includes(q)
    || String(t.definition.description || "").toLowerCase().includes(q));
  const items = shown.slice(0, catalogShown).map((t) => el("li", { dataset: { tool: t.exposed }, onclick: () => showEntry(t) },
    t.exposed, el("small", {}, String(t.definition.description || t.definition.name || "").slice(0, 120))));
  if (shown.length > catalogShown) {
    items.push(el("li", { class: "more", onclick: () => { catalogShown += PAGE; renderCatalog(); } },
      `Show more (${shown.length - catalogShown} not shown)`));
  }
  if (!items.length) items.push(el("li", { class: "more" }, "none"));
  $("#catalog-list").replaceChildren(...items);
}

/// A tool gets a form to call it; a resource, template or prompt shows its definition.
function showEntry(t) {
  if (t.kind === "tool") return showTool(t);
  for (const li of document.querySelectorAll("#catalog-list li")) li.classList.toggle("selected", li.dataset.tool === t.exposed);
  $("#tool-name").textContent = t.exposed;
  $("#tool-description").textContent = t.definition.description || "";
  $("#tool-schema").textContent = JSON.stringify(t.definition, null, 2);
  $("#tool-form").replaceChildren();
  $("#tool-result").textContent = "";
}

function showTool(t) {
  for (const li of document.querySelectorAll("#catalog-list li")) li.classList.toggle("selected", li.dataset.tool === t.exposed);
  const def = t.definition;
  $("#tool-name").textContent = t.exposed;
  $("#tool-description").textContent = def.description || "";
  $("#tool-schema").textContent = JSON.stringify(def.inputSchema || {}, null, 2);
  $("#tool-result").textContent = "";
  const props = (def.inputSchema && def.inputSchema.properties) || {};
  const required = new Set((def.inputSchema && def.inputSchema.required) || []);
  const form = $("#tool-form");
  form.replaceChildren(...Object.entries(props).map(([name, s]) => {
    const label = `${name}${required.has(name) ? " *" : ""}${s.description ? ` — ${s.description}` : ""}`;
    let input;
    if (s.type === "boolean") input = el("input", { type: "checkbox", name });
    else if (s.type === "number" || s.type === "integer") input = el("input", { type: "number", name, step: "any" });
    else if (s.type === "string" || !s.type) input = el("input", { name });
    else input = el("textarea", { name, rows: 3, placeholder: "JSON" });
    input.dataset.type = s.type || "string";
    return el("label", {}, label, input);
  }), el("button", { type: "submit", id: "tool-call" }, "Call"));
  form.onsubmit = (event) => { event.preventDefault(); guarded(() => callTool(t.exposed, form)); };
}

async function callTool(name, form) {
  const args = {};
  for (const input of form.querySelectorAll("input, textarea")) {
    const type = input.dataset.type;
    if (type === "boolean") { args[input.name] = input.checked; continue; }
    if (input.value === "") continue;
    if (type === "number" || type === "integer") args[input.name] = Number(input.value);
    else if (type === "string") args[input.name] = input.value;
    else args[input.name] = JSON.parse(input.value);
  }
  $("#tool-result").textContent = "calling…";
  const result = await mcpRequest("tools/call", { name, arguments: args });
  const texts = (result.content || []).filter((c) => c.type === "text").map((c) => c.text);
  $("#tool-result").textContent = (result.isError ? "tool error:\n" : "") + (texts.length ? texts.join("\n") : JSON.stringify(result, null, 2));
}

// ---- routing playground

async function rank(event) {
  event.preventDefault();
  const query = $("#route-query").value.trim();
  if (!query) return;
  const r = await api("POST", "/v1/route", { query, k: Number($("#route-k").value) || 5 });
  $("#route-summary").textContent = `mode ${r.mode}` + (r.nothing_fits ? " — nothing fits well" : "");
  const top = Math.max(...r.tools.map((t) => t.score), 1e-9);
  fill($("#route-table tbody"), r.tools.map((t, i) => el("tr", { dataset: { tool: t.name } },
    el("td", {}, String(i + 1)), el("td", {}, t.name),
    el("td", { class: "score" }, el("meter", { min: 0, max: top, value: t.score, title: t.score.toFixed(3) }), ` ${t.score.toFixed(3)}`),
    el("td", {}, t.similarity == null ? "" : t.similarity.toFixed(3)), el("td", {}, t.step || ""),
    el("td", {}, String(t.description || "").slice(0, 160)))));
}

// ---- virtual servers

async function showVirtualServers() {
  const list = await api("GET", "/admin/v1/virtual-servers");
  fill($("#vs-table tbody"), list.map((v) => {
    const settings = { ...v };
    delete settings.name;
    return el("tr", {}, el("td", {}, v.name), el("td", {}, `/mcp/v/${v.name}`), el("td", {}, v.mode || "all"),
      el("td", {}, el("code", {}, JSON.stringify(settings))),
      el("td", {}, el("button", { type: "button", onclick: () => editVirtualServer(v) }, "Edit"), " ",
        el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
        if (!confirm(`Delete virtual server ${v.name}?`)) return;
        await api("DELETE", `/admin/v1/virtual-servers/${encodeURIComponent(v.name)}`);
        await showVirtualServers();
      }) }, "Delete")));
  }));
}

// ---- tokens

async function showTokens() {
  const list = await api("GET", "/admin/v1/tokens");
  fill($("#tokens-table tbody"), list.map((t) => el("tr", {},
    el("td", {}, t.id), el("td", {}, t.name), el("td", {}, t.owner), el("td", {}, (t.roles || []).join(", ")),
    el("td", {}, when(t.created_at)), el("td", {}, when(t.expires_at)), el("td", {}, when(t.last_used_at)), el("td", {}, when(t.revoked_at)),
    el("td", {}, t.revoked_at ? "" : el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
      if (!confirm(`Revoke token ${t.name} (${t.id}) of ${t.owner}?`)) return;
      await api("DELETE", `/admin/v1/tokens/${encodeURIComponent(t.id)}`);
      await showTokens();
    }) }, "Revoke")))));
}

async function createToken(event) {
  event.preventDefault();
  const f = event.target;
  const body = {
    name: field(f, "name").value.trim(),
    owner: field(f, "owner").value.trim(),
    roles: field(f, "roles").value.split(",").map((r) => r.trim()).filter(Boolean),
  };
  if (field(f, "expires").value) body.expires_in_days = Number(field(f, "expires").value);
  const r = await api("POST", "/admin/v1/tokens", body);
  $("#new-token").textContent = `${r.token}  (shown once: copy it now)`;
  f.reset();
  await showTokens();
}

// ---- sign-ins (the authorization server's clients and grants)

async function showSignIns() {
  let clients;
  try {
    clients = await api("GET", "/admin/v1/oauth/clients");
  } catch (e) {
    if (!String(e.message).startsWith("404")) throw e;
    // The authorization server is off.
    $("#sign-ins-off").hidden = false;
    fill($("#oauth-clients-table tbody"), []);
    fill($("#oauth-grants-table tbody"), []);
    return;
  }
  $("#sign-ins-off").hidden = true;
  const names = Object.fromEntries(clients.map((c) => [c.client_id, c.metadata?.client_name || c.client_id]));
  fill($("#oauth-clients-table tbody"), clients.map((c) => el("tr", { "data-client": c.client_id },
    el("td", {}, c.client_id), el("td", {}, c.metadata?.client_name || ""), el("td", {}, c.source),
    el("td", {}, (c.metadata?.redirect_uris || []).join(" ")), el("td", {}, when(c.created_at)), el("td", {}, when(c.blocked_at)),
    el("td", {},
      el("button", { type: "button", onclick: () => guarded(async () => {
        const blocked = !c.blocked_at;
        if (blocked && !confirm(`Block ${names[c.client_id]}? Every grant of it is revoked.`)) return;
        await api("PUT", `/admin/v1/oauth/clients/${encodeURIComponent(c.client_id)}/blocked`, { blocked });
        await showSignIns();
      }) }, c.blocked_at ? "Unblock" : "Block"),
      el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
        if (!confirm(`Delete ${names[c.client_id]} and revoke its grants?`)) return;
        await api("DELETE", `/admin/v1/oauth/clients/${encodeURIComponent(c.client_id)}`);
        await showSignIns();
      }) }, "Delete")))));
  const grants = await api("GET", "/admin/v1/oauth/grants");
  fill($("#oauth-grants-table tbody"), grants.map((g) => el("tr", { "data-grant": g.id },
    el("td", {}, g.subject), el("td", {}, names[g.client_id] || g.client_id), el("td", {}, (g.roles || []).join(", ")),
    el("td", {}, g.scope), el("td", {}, g.signed_in_with), el("td", {}, when(g.created_at)), el("td", {}, when(g.revoked_at)),
    el("td", {}, g.revoked_at ? "" : el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
      if (!confirm(`Revoke ${g.subject}'s access for ${names[g.client_id] || g.client_id}?`)) return;
      await api("DELETE", `/admin/v1/oauth/grants/${encodeURIComponent(g.id)}`);
      await showSignIns();
    }) }, "Revoke")))));
}

// ---- connections (users' own accounts at user_oauth upstreams)

// A company sign-in kept for enterprise-managed upstreams is listed as a connection of its own.
const connectionName = (upstream) => upstream === "@company" ? "company sign-in (enterprise-managed upstreams)" : upstream;

async function showConnections() {
  const { connections: mine, connectable } = await api("GET", "/v1/connections");
  fill($("#connectable-table tbody"), connectable.map((name) => el("tr", { dataset: { upstream: name } },
    el("td", {}, name),
    el("td", {}, el("button", { type: "button", onclick: () => guarded(async () => {
      const r = await api("POST", `/v1/connections/${encodeURIComponent(name)}`);
      $("#connect-link").replaceChildren(`Open in a browser and sign in at ${name} (10 minutes): `,
        el("a", { href: r.url, target: "_blank", rel: "noopener noreferrer" }, r.url));
    }) }, "Connect")))));
  fill($("#my-connections-table tbody"), mine.map((c) => el("tr", { dataset: { upstream: c.upstream } },
    el("td", {}, connectionName(c.upstream)), el("td", {}, c.scope), el("td", {}, when(c.created_at)), el("td", {}, when(c.expires_at)),
    el("td", {}, el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
      if (!confirm(`Disconnect your account at ${connectionName(c.upstream)}?`)) return;
      await api("DELETE", `/v1/connections/${encodeURIComponent(c.upstream)}`);
      await showConnections();
    }) }, "Disconnect")))));
  $("#all-connections").hidden = !isAdmin;
  if (!isAdmin) return;
  const all = await api("GET", "/admin/v1/connections");
  fill($("#all-connections-table tbody"), all.map((c) => el("tr", { dataset: { upstream: c.upstream, holder: c.holder } },
    el("td", {}, connectionName(c.upstream)), el("td", {}, c.holder), el("td", {}, c.connected_by), el("td", {}, c.scope),
    el("td", {}, when(c.created_at)), el("td", {}, when(c.updated_at)),
    el("td", {}, el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
      if (!confirm(`Revoke ${c.holder}'s connection to ${c.upstream}?`)) return;
      const q = new URLSearchParams({ holder: c.holder });
      await api("DELETE", `/admin/v1/connections/${encodeURIComponent(c.upstream)}?${q}`);
      await showConnections();
    }) }, "Revoke")))));
}

async function catalogLink(event) {
  event.preventDefault();
  const name = field(event.target, "upstream").value.trim();
  const r = await api("POST", `/admin/v1/upstreams/${encodeURIComponent(name)}/connection`);
  const out = $("#catalog-connect-link");
  out.replaceChildren("Open in a browser and sign in as the catalog account (10 minutes): ",
    el("a", { href: r.url, target: "_blank", rel: "noopener noreferrer" }, r.url));
}

// ---- roles

async function showRoles() {
  const list = await api("GET", "/admin/v1/roles");
  fill($("#roles-table tbody"), list.map((r) => {
    const grants = { ...r };
    delete grants.name;
    delete grants.source;
    return el("tr", { dataset: { role: r.name } }, el("td", {}, r.name), el("td", {}, el("code", {}, JSON.stringify(grants))),
      r.source === "config" ? el("td", { class: "note" }, "config file") :
      el("td", {}, el("button", { type: "button", onclick: () => editRole(r) }, "Edit"), " ",
        el("button", { type: "button", class: "danger", onclick: () => guarded(async () => {
        if (!confirm(`Delete role ${r.name}?`)) return;
        await api("DELETE", `/admin/v1/roles/${encodeURIComponent(r.name)}`);
        await showRoles();
      }) }, "Delete")));
  }));
}

// ---- audit

async function showAudit(event) {
  if (event) event.preventDefault();
  const f = $("#audit-form");
  const q = new URLSearchParams();
  for (const k of ["principal", "action", "target", "limit"]) if (field(f, k).value) q.set(k, field(f, k).value);
  const rows = await api("GET", `/admin/v1/audit?${q}`);
  fill($("#audit-table tbody"), rows.map((r) => el("tr", { dataset: { action: r.action, target: r.target || "" } },
    el("td", {}, String(r.seq)), el("td", {}, when(r.at)), el("td", {}, r.principal), el("td", {}, r.action),
    el("td", {}, r.upstream || ""), el("td", {}, r.target || ""), el("td", {}, r.outcome), el("td", {}, String(r.latency_ms)),
    el("td", {}, el("code", {}, r.arguments || "")))));
}

async function verifyAudit() {
  const v = await api("GET", "/admin/v1/audit/verify");
  $("#audit-verdict").textContent = v.ok
    ? `chain intact: ${v.checked} rows checked up to #${v.head_seq}` +
      (v.pruned_through ? ` (rows up to #${v.pruned_through} removed by retention)` : "")
    : `chain broken at ${JSON.stringify(v.first_broken)}`;
}

// ---- navigation and sign-in

/// Who is signed in, with which roles (in the header).
async function showWhoami() {
  const me = await api("GET", "/v1/me");
  const roles = me.kind === "anonymous" ? "every right (no authentication)" : me.roles.length ? me.roles.join(", ") : "no roles";
  $("#whoami").textContent = `${me.principal} · ${roles}`;
}

/// Tables scroll inside their own box on a narrow screen; the page does not.
function wrapTables() {
  for (const t of document.querySelectorAll("main table")) {
    if (!t.parentElement.classList.contains("scroll")) {
      const box = el("div", { class: "scroll" });
      t.replaceWith(box);
      box.append(t);
    }
  }
}

const views = {
  overview: showOverview, upstreams: showUpstreams, catalog: showCatalog, routing: async () => {},
  "virtual-servers": showVirtualServers, tokens: showTokens, "sign-ins": showSignIns, roles: showRoles,
  audit: showAudit, connections: showConnections,
};

// Whether the signed-in token has the admin right; a user without it sees their own
// connections only.
let isAdmin = sessionStorage.getItem(`${TOKEN_KEY}-user`) === null;

/// Shows the tabs the signed-in token may use.
function showTabs() {
  for (const a of document.querySelectorAll("#tabs a")) a.hidden = !isAdmin && a.getAttribute("href") !== "#connections";
}

// The overview refreshes itself while it is shown (live figures at a glance).
let refresher = null;

/// Every tab but the playground stays current: it is read again every few seconds while shown
/// (not while the page is hidden).
function route() {
  let name = location.hash.slice(1) in views ? location.hash.slice(1) : "overview";
  if (!isAdmin) name = "connections";
  clearInterval(refresher);
  if (name !== "routing") refresher = setInterval(() => { if (!document.hidden) guarded(views[name]); }, 5000);
  for (const v of document.querySelectorAll(".view")) v.classList.toggle("active", v.id === `${name}-view`);
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.getAttribute("href") === `#${name}`);
  say("");
  guarded(views[name]);
}

async function signIn(event) {
  event.preventDefault();
  token = $("#token").value.trim();
  mcp.session = null;
  try {
    isAdmin = true;
    sessionStorage.removeItem(`${TOKEN_KEY}-user`);
    try {
      await api("GET", "/admin/v1/health");
    } catch (e) {
      // Not an admin: a user may still manage their own connections.
      if (!String(e.message).startsWith("403")) throw e;
      await api("GET", "/v1/connections");
      isAdmin = false;
      sessionStorage.setItem(`${TOKEN_KEY}-user`, "1");
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    $("#who").textContent = token ? (isAdmin ? "signed in" : "signed in (your connections)") : "no token";
    $("#token").value = "";
    await showWhoami();
    showTabs();
    route();
  } catch (e) {
    say(`sign-in refused: ${e.message}`, "error");
  }
}

function signOut() {
  token = "";
  mcp.session = null;
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(`${TOKEN_KEY}-user`);
  isAdmin = true;
  // Nothing of the signed-out token stays on screen.
  for (const body of document.querySelectorAll("main tbody")) body.replaceChildren();
  for (const once of document.querySelectorAll(".once, main .live")) once.replaceChildren();
  $("#who").textContent = "";
  $("#whoami").textContent = "";
  showTabs();
  say("signed out");
}

document.addEventListener("DOMContentLoaded", () => {
  $("#login").addEventListener("submit", signIn);
  $("#sign-out").addEventListener("click", signOut);
  $("#upstream-form").addEventListener("submit", (e) => guarded(() => saveUpstream(e)));
  $("#upstream-reset").addEventListener("click", resetUpstreamForm);
  $("#catalog-search").addEventListener("input", renderCatalog);
  $("#catalog-kind").addEventListener("change", () => { catalogShown = PAGE; guarded(showCatalog); });
  wrapTables();
  $("#route-form").addEventListener("submit", (e) => guarded(() => rank(e)));
  $("#vs-form").addEventListener("submit", (e) => guarded(() => saveVirtualServer(e)));
  $("#token-form").addEventListener("submit", (e) => guarded(() => createToken(e)));
  $("#role-form").addEventListener("submit", (e) => guarded(() => saveRole(e)));
  $("#audit-form").addEventListener("submit", (e) => guarded(() => showAudit(e)));
  $("#audit-verify").addEventListener("click", () => guarded(verifyAudit));
  $("#catalog-connect-form").addEventListener("submit", (e) => guarded(() => catalogLink(e)));
  window.addEventListener("hashchange", route);
  if (sessionStorage.getItem(TOKEN_KEY) === null) {
    // Nothing is fetched before the operator says which token to use (none: leave it empty).
    say("Sign in with a token (leave it empty when the gateway runs without authentication).");
    return;
  }
  $("#who").textContent = token ? (isAdmin ? "signed in" : "signed in (your connections)") : "no token";
  guarded(showWhoami);
  showTabs();
  route();
});
