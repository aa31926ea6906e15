// The console's forms: an upstream with every field the admin API takes (secrets as
// references), its tool curation as a per-tool table with the names hosts will see, a role
// with a preview of what it grants, and a virtual server with a preview of what it offers. JSON stays available as an advanced view. Errors from the
// API are shown beside the field they name. Uses console.js's helpers ($, el, api, field, say).
"use strict";

// ---- values that may be references: ["text" | "env" | "file", value]

function sourceOf(v) {
  if (v && typeof v === "object" && "env" in v) return ["env", v.env];
  if (v && typeof v === "object" && "file" in v) return ["file", v.file];
  return ["text", v == null ? "" : String(v)];
}

function sourceValue(kind, v) {
  return kind === "env" ? { env: v } : kind === "file" ? { file: v } : v;
}

/// A row of a key/value list whose value may be a reference (`secret`: a reference by default).
function pairRow(key = "", value = "", secret = false) {
  const [kind, text] = value === "" && secret ? ["env", ""] : sourceOf(value);
  const select = el("select", { name: "kind", "aria-label": "value kind" },
    ...[["text", "text"], ["env", "variable"], ["file", "file"]].map(([v, label]) => el("option", { value: v }, label)));
  select.value = kind;
  const row = el("div", { class: "pair" },
    el("input", { name: "key", placeholder: "name", value: key, "aria-label": "name" }), select,
    el("input", { name: "value", placeholder: "value, variable or path", value: text, "aria-label": "value" }),
    el("button", { type: "button", class: "danger", onclick: () => row.remove() }, "×"));
  return row;
}

function fillPairs(box, map, secret) {
  box.replaceChildren(...Object.entries(map || {}).map(([k, v]) => pairRow(k, v, secret)));
}

function readPairs(box) {
  const out = {};
  for (const row of box.querySelectorAll(".pair")) {
    const key = row.querySelector("[name=key]").value.trim();
    if (!key) continue;
    out[key] = sourceValue(row.querySelector("[name=kind]").value, row.querySelector("[name=value]").value);
  }
  return out;
}

/// One item per line (patterns, arguments); `list` also takes commas (variable names).
const lines = (text) => text.split("\n").map((l) => l.trim()).filter(Boolean);
const list = (text) => text.split(/[\n,]/).map((l) => l.trim()).filter(Boolean);

// ---- the upstream form

function specOf(view) {
  const spec = { ...view };
  delete spec.source;
  delete spec.health;
  return spec;
}

function showTransportFields() {
  const f = $("#upstream-form");
  const stdio = field(f, "transport").value === "stdio";
  $("#upstream-stdio").hidden = !stdio;
  $("#upstream-remote").hidden = stdio;
}

function clearFieldErrors() {
  for (const e of document.querySelectorAll("form .field-error")) e.textContent = "";
}

/// Puts an API error beside the field it names (`upstreams[x].headers.Authorization: ...`,
/// `timeout_secs: ...`), else under the form.
function showFieldError(form, message) {
  const text = message.replace(/^\d+: /, "");
  const m = text.match(/^(?:upstreams\[[^\]]*\]\.|roles\[[^\]]*\]\.)?([a-z_]+)(?:[.\[][^:]*)?: /);
  const slot = (m && form.querySelector(`.field-error[data-for="${m[1]}"]`)) || form.querySelector('.field-error[data-for="_"]');
  slot.textContent = text;
}

function fillUpstreamForm(u) {
  const f = $("#upstream-form");
  f.reset();
  clearFieldErrors();
  field(f, "name").value = u.name || "";
  field(f, "transport").value = u.transport || "stdio";
  for (const k of ["sharing", "prefix", "pinning"]) if (u[k]) field(f, k).value = u[k];
  field(f, "enabled").checked = u.enabled !== false;
  field(f, "timeout_secs").value = u.timeout_secs ?? "";
  field(f, "max_result_text_bytes").value = u.max_result_text_bytes ?? "";
  field(f, "command").value = u.command || "";
  field(f, "args").value = (u.args || []).join("\n");
  field(f, "cwd").value = u.cwd || "";
  field(f, "inherit_env").value = (u.inherit_env || []).join(", ");
  fillPairs($("#upstream-env"), u.env, false);
  field(f, "url").value = u.url || "";
  fillPairs($("#upstream-headers"), u.headers, true);
  const o = u.oauth || {};
  for (const k of ["token_url", "issuer", "client_id", "resource"]) field(f, `oauth_${k}`).value = o[k] || "";
  field(f, "oauth_scopes").value = (o.scopes || []).join(" ");
  field(f, "oauth_token_exchange").checked = !!o.token_exchange;
  field(f, "oauth_secret").value = o.client_secret ? sourceOf(o.client_secret)[1] : "";
  field(f, "oauth_secret_kind").value = o.client_secret ? sourceOf(o.client_secret)[0] : "env";
  field(f, "oauth_key").value = o.private_key ? sourceOf(o.private_key)[1] : "";
  field(f, "oauth_key_kind").value = o.private_key ? sourceOf(o.private_key)[0] : "file";
  field(f, "oauth_key_algorithm").value = o.private_key_algorithm || "";
  field(f, "oauth_wif").value = o.workload_token ? sourceOf(o.workload_token)[1] : "";
  field(f, "oauth_wif_kind").value = o.workload_token ? sourceOf(o.workload_token)[0] : "file";
  const uo = u.user_oauth;
  field(f, "uo_on").checked = !!uo;
  field(f, "uo_client_id").value = (uo && uo.client_id) || "";
  field(f, "uo_secret").value = uo && uo.client_secret ? sourceOf(uo.client_secret)[1] : "";
  field(f, "uo_secret_kind").value = uo && uo.client_secret ? sourceOf(uo.client_secret)[0] : "env";
  field(f, "uo_client_metadata_url").value = (uo && uo.client_metadata_url) || "";
  field(f, "uo_issuer").value = (uo && uo.issuer) || "";
  field(f, "uo_scopes").value = ((uo && uo.scopes) || []).join(" ");
  field(f, "uo_catalog").value = (uo && uo.catalog) || "account";
  const t = u.tools || {};
  field(f, "include").value = (t.include || []).join("\n");
  field(f, "exclude").value = (t.exclude || []).join("\n");
  showTransportFields();
}

/// The spec the form describes, over `base` (what the form does not show is kept).
function upstreamFromForm(base) {
  const f = $("#upstream-form");
  const num = (k) => (field(f, k).value === "" ? undefined : Number(field(f, k).value));
  const spec = { ...base, name: field(f, "name").value.trim(), transport: field(f, "transport").value,
    sharing: field(f, "sharing").value, prefix: field(f, "prefix").value, pinning: field(f, "pinning").value,
    enabled: field(f, "enabled").checked, timeout_secs: num("timeout_secs"), max_result_text_bytes: num("max_result_text_bytes") };
  for (const k of ["timeout_secs", "max_result_text_bytes"]) if (spec[k] === undefined) delete spec[k];
  if (spec.transport === "stdio") {
    Object.assign(spec, { command: field(f, "command").value.trim(), args: lines(field(f, "args").value),
      env: readPairs($("#upstream-env")), inherit_env: list(field(f, "inherit_env").value) });
    if (field(f, "cwd").value.trim()) spec.cwd = field(f, "cwd").value.trim(); else delete spec.cwd;
    for (const k of ["url", "headers", "oauth", "user_oauth"]) delete spec[k];
  } else {
    spec.url = field(f, "url").value.trim();
    spec.headers = readPairs($("#upstream-headers"));
    if (field(f, "oauth_client_id").value.trim() || field(f, "oauth_token_url").value.trim()) {
      // Over what was there: a field the form does not show is kept.
      const o = { ...(base.oauth || {}), client_id: field(f, "oauth_client_id").value.trim(),
        scopes: field(f, "oauth_scopes").value.split(/\s+/).filter(Boolean), token_exchange: field(f, "oauth_token_exchange").checked };
      const text = (k) => field(f, k).value.trim();
      const optional = (key, v) => { if (v) o[key] = v; else delete o[key]; };
      optional("token_url", text("oauth_token_url"));
      optional("issuer", text("oauth_issuer"));
      optional("resource", text("oauth_resource"));
      // One credential: the server says so when none or both are given.
      optional("client_secret", text("oauth_secret") && sourceValue(field(f, "oauth_secret_kind").value, text("oauth_secret")));
      optional("private_key", text("oauth_key") && sourceValue(field(f, "oauth_key_kind").value, text("oauth_key")));
      optional("private_key_algorithm", text("oauth_key_algorithm"));
      optional("workload_token", text("oauth_wif") && sourceValue(field(f, "oauth_wif_kind").value, text("oauth_wif")));
      spec.oauth = o;
    } else delete spec.oauth;
    if (field(f, "uo_on").checked) {
      // Over what was there, as for oauth: enterprise management has no field in the form.
      const uo = { ...(base.user_oauth || {}), catalog: field(f, "uo_catalog").value,
        scopes: field(f, "uo_scopes").value.split(/\s+/).filter(Boolean) };
      for (const k of ["client_id", "client_metadata_url", "issuer"]) {
        const v = field(f, `uo_${k}`).value.trim();
        if (v) uo[k] = v; else delete uo[k];
      }
      const secret = field(f, "uo_secret").value.trim();
      if (secret) uo.client_secret = sourceValue(field(f, "uo_secret_kind").value, secret); else delete uo.client_secret;
      spec.user_oauth = uo;
    } else delete spec.user_oauth;
    for (const k of ["command", "args", "env", "inherit_env", "cwd"]) delete spec[k];
  }
  spec.tools = curationFromForm(base.tools || {});
  return spec;
}

function editUpstream(u) {
  const f = $("#upstream-form");
  f.dataset.editing = u.name;
  fillUpstreamForm(u);
  field(f, "name").readOnly = true;
  $("#upstream-form-title").textContent = `Edit ${u.name}`;
  guarded(() => showCurationTable(u));
}

function resetUpstreamForm() {
  const f = $("#upstream-form");
  delete f.dataset.editing;
  fillUpstreamForm({});
  field(f, "name").readOnly = false;
  $("#upstream-form-title").textContent = "Add an upstream";
  $("#curation-table tbody").replaceChildren();
  field(f, "json").value = "";
}

async function putUpstream(spec) {
  const f = $("#upstream-form");
  const editing = f.dataset.editing;
  clearFieldErrors();
  try {
    if (editing) await api("PUT", `/admin/v1/upstreams/${encodeURIComponent(editing)}`, spec);
    else await api("POST", "/admin/v1/upstreams", spec);
  } catch (e) {
    showFieldError(f, e.message);
    throw e;
  }
  say(`saved ${spec.name}`);
  resetUpstreamForm();
  await showUpstreams();
}

async function saveUpstream(event) {
  event.preventDefault();
  // An edit keeps every field the form does not show.
  await putUpstream(upstreamDescribed());
}

/// What the form describes over the upstream being edited (the advanced view shows it).
function upstreamDescribed() {
  const editing = $("#upstream-form").dataset.editing;
  return upstreamFromForm(editing ? specOf(upstreams.find((u) => u.name === editing)) : {});
}

// ---- tool curation: patterns, and a table of the upstream's own tools

function glob(pattern) {
  const re = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${re}$`);
}

let curationTools = [];
let curationUpstream = null;

async function showCurationTable(u) {
  curationUpstream = u;
  curationTools = await api("GET", `/admin/v1/upstreams/${encodeURIComponent(u.name)}/tools/listed`);
  const overrides = (u.tools && u.tools.overrides) || {};
  fill($("#curation-table tbody"), curationTools.map((t) => {
    const o = overrides[t.name] || {};
    const row = el("tr", { dataset: { tool: t.name } },
      el("td", {}, t.name),
      el("td", {}, el("input", { type: "checkbox", name: "shown", "aria-label": `show ${t.name}` })),
      el("td", {}, el("input", { name: "rename", placeholder: t.name, value: o.name || "", "aria-label": `rename ${t.name}` })),
      el("td", {}, el("input", { name: "description", placeholder: String(t.description || "").slice(0, 80), value: o.description || "", "aria-label": `description of ${t.name}` })),
      el("td", {}, el("input", { name: "arguments", placeholder: '{"key": "value"}', value: o.arguments ? JSON.stringify(o.arguments) : "", "aria-label": `fixed arguments of ${t.name}` })),
      el("td", { class: "effective" }));
    row.querySelector("[name=shown]").addEventListener("change", (e) => toggleShown(t.name, e.target.checked));
    return row;
  }));
  renderEffective();
}

function patternsShow(name) {
  const f = $("#upstream-form");
  const include = lines(field(f, "include").value);
  const exclude = lines(field(f, "exclude").value);
  return (!include.length || include.some((p) => glob(p).test(name))) && !exclude.some((p) => glob(p).test(name));
}

/// A checkbox writes the patterns: unchecked, the tool is excluded; checked, it is taken out
/// of the exclusions (and added to an include list that would leave it out).
function toggleShown(name, shown) {
  const f = $("#upstream-form");
  const exclude = lines(field(f, "exclude").value).filter((p) => p !== name);
  const include = lines(field(f, "include").value);
  if (!shown) exclude.push(name);
  else if (include.length && !include.some((p) => glob(p).test(name))) include.push(name);
  field(f, "exclude").value = exclude.join("\n");
  field(f, "include").value = include.join("\n");
  renderEffective();
}

/// The name hosts will see for each tool once saved.
function renderEffective() {
  const f = $("#upstream-form");
  const upstream = field(f, "name").value.trim();
  const prefix = field(f, "prefix").value;
  for (const row of document.querySelectorAll("#curation-table tbody tr[data-tool]")) {
    const name = row.dataset.tool;
    const shown = patternsShow(name);
    row.querySelector("[name=shown]").checked = shown;
    const own = row.querySelector("[name=rename]").value.trim() || name;
    row.querySelector(".effective").textContent = !shown ? "hidden"
      : prefix === "never" ? own : prefix === "on_collision" ? `${own} (${upstream}__${own} on a collision)` : `${upstream}__${own}`;
  }
}

function curationFromForm(base) {
  const f = $("#upstream-form");
  const tools = { include: lines(field(f, "include").value), exclude: lines(field(f, "exclude").value), overrides: { ...(base.overrides || {}) } };
  for (const row of document.querySelectorAll("#curation-table tbody tr[data-tool]")) {
    const name = row.dataset.tool;
    const o = { ...(tools.overrides[name] || {}) };
    const rename = row.querySelector("[name=rename]").value.trim();
    const description = row.querySelector("[name=description]").value.trim();
    const args = row.querySelector("[name=arguments]").value.trim();
    if (rename) o.name = rename; else delete o.name;
    if (description) o.description = description; else delete o.description;
    if (args) o.arguments = JSON.parse(args); else delete o.arguments;
    if (Object.keys(o).length) tools.overrides[name] = o; else delete tools.overrides[name];
  }
  for (const k of ["include", "exclude"]) if (!tools[k].length) delete tools[k];
  if (!Object.keys(tools.overrides).length) delete tools.overrides;
  return tools;
}

// ---- roles: pattern lists, and a preview of the tools they grant

const ROLE_LISTS = ["upstreams", "tools", "resources", "prompts"];

let grantable = null;

async function previewRole() {
  const f = $("#role-form");
  if (!grantable) grantable = await api("GET", "/admin/v1/catalog?kind=tool");
  const catalog = grantable;
  const ups = lines(field(f, "upstreams").value).map(glob);
  const tools = lines(field(f, "tools").value).map(glob);
  const granted = catalog.filter((t) => ups.some((p) => p.test(t.upstream)) || tools.some((p) => p.test(t.exposed)));
  $("#role-preview").textContent = `grants ${granted.length} of ${catalog.length} tools`
    + (granted.length ? `: ${granted.slice(0, 12).map((t) => t.exposed).join(", ")}${granted.length > 12 ? ", …" : ""}` : "")
    + (field(f, "admin").checked ? "; and the admin right (the admin API and console)" : "");
}

let roleBase = {};

function editRole(r) {
  const f = $("#role-form");
  roleBase = { ...r };
  field(f, "name").value = r.name;
  field(f, "description").value = r.description || "";
  field(f, "admin").checked = !!r.admin;
  for (const k of ROLE_LISTS) field(f, k).value = (r[k] || []).join("\n");
  guarded(previewRole);
}

function roleFromForm() {
  const f = $("#role-form");
  const name = field(f, "name").value.trim();
  // What the form does not show is kept from the role being edited (not from another one).
  const spec = { ...(roleBase.name === name ? roleBase : {}), name };
  delete spec.source;
  const description = field(f, "description").value.trim();
  if (description) spec.description = description; else delete spec.description;
  if (field(f, "admin").checked) spec.admin = true; else delete spec.admin;
  for (const k of ROLE_LISTS) { const l = lines(field(f, k).value); if (l.length) spec[k] = l; else delete spec[k]; }
  return spec;
}

async function saveRole(event) {
  event.preventDefault();
  await putRole(roleFromForm());
}

async function putRole(spec) {
  const f = $("#role-form");
  clearFieldErrors();
  try {
    await api("PUT", `/admin/v1/roles/${encodeURIComponent(spec.name)}`, spec);
  } catch (e) {
    showFieldError(f, e.message);
    throw e;
  }
  say(`saved role ${spec.name}`);
  await showRoles();
}

// ---- virtual servers: pattern lists, and a preview of the tools the endpoint offers

const VS_LISTS = ["upstreams", "tools", "exclude", "pinned"];
let vsBase = {};

function editVirtualServer(v) {
  const f = $("#vs-form");
  vsBase = { ...v };
  field(f, "name").value = v.name;
  field(f, "mode").value = v.mode || "all";
  field(f, "description").value = v.description || "";
  field(f, "auto_k").value = v.auto_k ?? "";
  for (const k of VS_LISTS) field(f, k).value = (v[k] || []).join("\n");
  guarded(previewVirtualServer);
}

async function previewVirtualServer() {
  const f = $("#vs-form");
  if (!grantable) grantable = await api("GET", "/admin/v1/catalog?kind=tool");
  const [ups, tools, exclude, pinned] = VS_LISTS.map((k) => lines(field(f, k).value).map(glob));
  const offered = grantable.filter((t) => (!ups.length || ups.some((p) => p.test(t.upstream)))
    && (!tools.length || tools.some((p) => p.test(t.exposed))) && !exclude.some((p) => p.test(t.exposed)));
  const mode = field(f, "mode").value;
  const listed = mode === "all" ? offered : offered.filter((t) => pinned.some((p) => p.test(t.exposed)));
  $("#vs-preview").textContent = `offers ${offered.length} tools; lists ${listed.length} before any search`
    + (listed.length ? `: ${listed.slice(0, 10).map((t) => t.exposed).join(", ")}${listed.length > 10 ? ", …" : ""}` : "");
}

function virtualServerFromForm() {
  const f = $("#vs-form");
  const name = field(f, "name").value.trim();
  // What the form does not show (overrides) is kept from the one being edited.
  const spec = { ...(vsBase.name === name ? vsBase : {}), mode: field(f, "mode").value };
  delete spec.name;
  const description = field(f, "description").value.trim();
  if (description) spec.description = description; else delete spec.description;
  const autoK = field(f, "auto_k").value;
  if (autoK) spec.auto_k = Number(autoK); else delete spec.auto_k;
  for (const k of VS_LISTS) spec[k] = lines(field(f, k).value);
  return { name, ...spec };
}

async function saveVirtualServer(event) {
  event.preventDefault();
  await putVirtualServer(virtualServerFromForm());
}

async function putVirtualServer(whole) {
  const f = $("#vs-form");
  clearFieldErrors();
  const { name, ...spec } = whole;
  try {
    try {
      await api("POST", "/admin/v1/virtual-servers", { ...spec, name });
    } catch (e) {
      if (!e.message.startsWith("409")) throw e;
      await api("PUT", `/admin/v1/virtual-servers/${encodeURIComponent(name)}`, spec);
    }
  } catch (e) {
    showFieldError(f, e.message);
    throw e;
  }
  say(`saved virtual server ${name}`);
  vsBase = {};
  await showVirtualServers();
}

/// A form's advanced view: opened, it shows what the form describes; saved, the JSON as written.
function jsonView(details, fromForm, put) {
  details.addEventListener("toggle", () => {
    if (details.open) details.querySelector("textarea").value = JSON.stringify(fromForm(), null, 2);
  });
  details.querySelector("button").addEventListener("click", () => guarded(async () => {
    let spec;
    try { spec = JSON.parse(details.querySelector("textarea").value); } catch (e) {
      details.closest("form").querySelector('.field-error[data-for="_"]').textContent = `invalid JSON: ${e.message}`;
      return;
    }
    await put(spec);
  }));
}

document.addEventListener("DOMContentLoaded", () => {
  jsonView($("#role-json"), roleFromForm, putRole);
  jsonView($("#vs-json"), virtualServerFromForm, putVirtualServer);
  for (const k of [...VS_LISTS, "mode"]) $(`#vs-form [name=${k}]`).addEventListener("input", () => guarded(previewVirtualServer));
  $("#upstream-form [name=transport]").addEventListener("change", showTransportFields);
  $("#upstream-add-env").addEventListener("click", () => $("#upstream-env").append(pairRow()));
  $("#upstream-add-header").addEventListener("click", () => $("#upstream-headers").append(pairRow("", "", true)));
  jsonView($("#upstream-json"), upstreamDescribed, putUpstream);
  for (const k of ["include", "exclude", "name", "prefix"]) $(`#upstream-form [name=${k}]`).addEventListener("input", renderEffective);
  // A checkbox's own change writes the patterns first (toggleShown), then renders.
  $("#curation-table").addEventListener("input", (e) => { if (e.target.name !== "shown") renderEffective(); });
  for (const k of [...ROLE_LISTS, "admin"]) $(`#role-form [name=${k}]`).addEventListener("input", () => guarded(previewRole));
  showTransportFields();
});
