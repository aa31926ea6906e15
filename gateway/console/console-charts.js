// The console's pictures: an upstream's last hour of calls (per minute, failures in red), their
// mean and 95th-percentile durations, and its health changes as a strip of colours, all drawn
// as SVG from /admin/v1/upstreams/{name}/history. Uses console.js's helpers ($, el, api, when).
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

/// Bars over the minutes: `series` is [[values, colour, name]]; drawn over each other, so the
/// smaller series (failures, p95 under mean) goes last.
function barChart(title, minutes, series, unit) {
  const w = 600, h = 120, pad = 28;
  const max = Math.max(1e-9, ...series.flatMap(([v]) => v));
  // Sixty closed minutes and the one under way, the newest on the right.
  const slots = 61;
  const offset = Math.max(slots - minutes.length, 0);
  const bw = (w - pad) / slots;
  const chart = svg("svg", { viewBox: `0 0 ${w} ${h + 16}`, class: "chart", role: "img", "aria-label": title });
  chart.append(svg("title", {}, title));
  chart.append(svg("text", { x: 0, y: 10, class: "axis" }, `${+max.toFixed(1)} ${unit}`));
  chart.append(svg("line", { x1: pad, y1: h, x2: w, y2: h, stroke: "#99a3b3" }));
  for (const [values, colour, name] of series) {
    values.forEach((v, i) => {
      if (!v) return;
      const bh = (v / max) * (h - 14);
      chart.append(svg("rect", { x: pad + (offset + i) * bw + 1, y: h - bh, width: Math.max(bw - 2, 1), height: bh, fill: colour, "data-series": name },
        svg("title", {}, `${when(minutes[i].at)}: ${+v.toFixed(1)} ${unit} (${name})`)));
    });
  }
  chart.append(svg("text", { x: pad, y: h + 14, class: "axis" }, "an hour ago"));
  chart.append(svg("text", { x: w, y: h + 14, class: "axis", "text-anchor": "end" }, "now"));
  return chart;
}

const STATUS_COLOURS = { up: "#2f8a46", connecting: "#c9a227", restarting: "#d9822b", down: "#b42318", disabled: "#99a3b3" };

/// The health changes of the last hour as a strip: each status from its change to the next.
function healthStrip(changes, now) {
  const w = 600, h = 18, start = now - 3600_000;
  const strip = svg("svg", { viewBox: `0 0 ${w} ${h}`, class: "chart strip", role: "img", "aria-label": "health over the last hour" });
  changes.forEach((c, i) => {
    const from = Math.max(c.at, start);
    const to = i + 1 < changes.length ? changes[i + 1].at : now;
    if (to <= start) return;
    const x = ((from - start) / 3600_000) * w;
    strip.append(svg("rect", { x, y: 0, width: Math.max(((to - from) / 3600_000) * w, 1), height: h, fill: STATUS_COLOURS[c.status] || "#99a3b3", "data-status": c.status },
      svg("title", {}, `${when(c.at)}: ${c.status}${c.reason ? ` (${c.reason})` : ""}`)));
  });
  return strip;
}

async function showHistory(name) {
  const hist = await api("GET", `/admin/v1/upstreams/${encodeURIComponent(name)}/history`);
  const m = hist.minutes;
  const now = m.length ? m[m.length - 1].at : Date.now();
  const calls = m.reduce((n, x) => n + x.calls, 0);
  const errors = m.reduce((n, x) => n + x.errors, 0);
  $("#upstream-history").dataset.upstream = name;
  $("#upstream-history").replaceChildren(
    el("h3", {}, `${name}: the last hour`),
    el("p", { class: "note" }, `${calls} calls, ${errors} failed`),
    barChart(`${name}: calls per minute`, m, [[m.map((x) => x.calls), "#3b6fb6", "calls"], [m.map((x) => x.errors), "#b42318", "failed"]], "calls"),
    barChart(`${name}: duration per minute`, m, [[m.map((x) => x.p95_ms || 0), "#9bb8e0", "p95"], [m.map((x) => x.mean_ms), "#3b6fb6", "mean"]], "ms"),
    el("h4", {}, "Health"),
    healthStrip(hist.health, now),
    el("ul", { class: "transitions" }, ...hist.health.slice(-10).reverse().map((t) =>
      el("li", { dataset: { status: t.status } }, `${when(t.at)}: ${t.status}${t.reason ? ` — ${t.reason}` : ""}`))));
}
