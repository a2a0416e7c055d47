// vaultgate audit panel. Everything that comes from the log is agent-chosen
// text: it reaches the page only through textContent and SVG attributes
// set with setAttribute, after esc() has made control and direction
// characters visible. Nothing here parses HTML; the CSP's Trusted Types
// make innerHTML throw should anyone try.
"use strict";

const TOKEN_KEY = "vaultgate-admin-token";
const MAX_ROWS = 2000;
const SVG_NS = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);

let token = sessionStorage.getItem(TOKEN_KEY) || "";
let stream = null;        // AbortController of the live stream
let lastSeq = 0;          // the newest seq seen
let statsTimer = 0;
let selectedRow = null;

// esc mirrors audit.EscapeControl: C0 controls and DEL as \x1b, \t, \n,
// \r, C1 controls, bidi embeddings, overrides and isolates and the other
// invisible direction marks and line separators as \u202e, so that a name
// cannot hide or reorder what is shown around it.
function esc(s) {
  s = String(s ?? "");
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (c === 9) out += "\\t";
    else if (c === 10) out += "\\n";
    else if (c === 13) out += "\\r";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + c.toString(16).padStart(2, "0");
    else if ((c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
             c === 0x200e || c === 0x200f || c === 0x061c || c === 0x2028 || c === 0x2029) {
      out += "\\u" + c.toString(16).padStart(4, "0");
    } else out += ch;
  }
  return out;
}

// el makes an element whose text is set, never parsed.
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = esc(text);
  if (cls) e.className = cls;
  return e;
}

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = esc(text);
  return e;
}

function setStatus(text, cls) {
  const s = $("status");
  s.textContent = text;
  s.className = cls || "";
}

// ---- token ----

function showLogin(message) {
  if (stream) stream.abort();
  stream = null;
  $("panel").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
  $("token").value = "";
  $("token").focus();
  setStatus("not connected", "down");
}

function forget(message) {
  token = "";
  sessionStorage.removeItem(TOKEN_KEY);
  showLogin(message);
}

class Unauthorized extends Error {}

async function api(path, params) {
  const url = path + "?" + params.toString();
  const res = await fetch(url, { headers: { Authorization: "Bearer " + token }, cache: "no-store" });
  if (res.status === 401) throw new Unauthorized("the token was refused");
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

// ---- filters ----

function filterParams() {
  const p = new URLSearchParams();
  for (const k of ["session", "tool", "decision", "path", "since"]) {
    const v = $("f-" + k).value.trim();
    if (v) p.set(k, v);
  }
  return p;
}

// ---- the table ----

function fmtTime(t) {
  const d = new Date(t);
  if (isNaN(d)) return String(t);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function decisionBadge(d) {
  const known = d === "allow" || d === "deny" || d === "error";
  return el("span", d, "badge " + (known ? d : "error"));
}

function effectsCell(effects) {
  const td = el("td", null, "mono");
  for (const e of effects || []) {
    const line = el("div");
    line.append(el("span", e.op + " "), el("span", e.path), zoneLabel("span", " " + (e.zone || "-"), e.zone));
    td.append(line);
  }
  return td;
}

// zoneLabel shows a zone name; zones.css, made from the kind table, colours it.
function zoneLabel(tag, text, zone) {
  const e = el(tag, text, "zone");
  e.dataset.zone = zone || "none";
  return e;
}

function row(r, fresh) {
  const tr = document.createElement("tr");
  tr.tabIndex = 0;
  tr.dataset.seq = String(r.seq);
  if (r.decision === "deny") tr.classList.add("deny");
  else if (r.decision !== "allow") tr.classList.add("error");
  if (fresh) tr.classList.add("fresh");
  const dec = el("td");
  dec.append(decisionBadge(r.decision));
  const why = el("td");
  if (r.decision === "deny") why.append(el("span", r.rule || "(none)", "rule"), el("span", " " + (r.reason || ""), "reason"));
  else if (r.error) why.append(el("span", r.error, "reason"));
  const when = el("td", fmtTime(r.time).slice(5), "mono nowrap");
  when.title = fmtTime(r.time);
  dec.className = "nowrap";
  tr.append(when, el("td", r.via, "nowrap"), el("td", r.session, "mono nowrap"), el("td", r.tool, "mono nowrap"),
    dec, effectsCell(r.effects), why);
  const open = () => showDetail(r, tr);
  tr.addEventListener("click", open);
  tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter") open(); });
  return tr;
}

function setRows(records) {
  const body = $("calls").tBodies[0];
  body.replaceChildren(...records.slice().reverse().map((r) => row(r, false)));
  $("empty").hidden = records.length > 0;
}

function addLive(r) {
  const body = $("calls").tBodies[0];
  body.prepend(row(r, true));
  while (body.rows.length > MAX_ROWS) body.deleteRow(-1);
  $("empty").hidden = true;
}

// ---- one record ----

function showDetail(r, tr) {
  if (selectedRow) selectedRow.classList.remove("selected");
  selectedRow = tr;
  tr.classList.add("selected");
  $("detail").hidden = false;
  $("detail-title").textContent = esc(`${r.tool} · ${r.decision}`);
  const dl = $("detail-fields");
  dl.replaceChildren();
  const add = (k, v) => {
    if (v === undefined || v === null || v === "") return;
    dl.append(el("dt", k), el("dd", typeof v === "string" ? v : JSON.stringify(v)));
  };
  add("time", r.time); add("id", r.id); add("seq", r.seq); add("session", r.session); add("agent", r.agent);
  add("via", r.via); add("tool", r.tool); add("decision", r.decision); add("rule", r.rule); add("reason", r.reason);
  add("outcome", r.outcome); add("error", r.error); add("duration_ms", r.duration_ms); add("exit_code", r.exit_code);
  add("wall", r.wall ? r.wall.join(", ") : ""); add("args", JSON.stringify(r.args)); add("prev", r.prev);
  const eff = $("detail-effects").tBodies[0];
  eff.replaceChildren(...(r.effects || []).map((e) => {
    const tr = document.createElement("tr");
    tr.append(el("td", e.op, "mono"), el("td", e.path, "mono"), zoneLabel("td", e.zone || "-", e.zone));
    return tr;
  }));
  // Escaped line by line: the indentation's newlines are the JSON's own.
  $("detail-raw").textContent = JSON.stringify(r, null, 2).split("\n").map(esc).join("\n");
  showChanges(mayHaveChanged(r) ? r.id : "");
}

// mayHaveChanged says whether history could hold anything of the call: a
// denied call or one that only read changed nothing, and is not asked
// about (the history answers 404 for it, which the browser logs).
function mayHaveChanged(r) {
  if (r.decision === "deny") return false;
  return r.tool === "bash" || (r.effects || []).some((e) => e.op !== "read");
}

// ---- what a call changed ----

let changesFor = ""; // the id whose changes are wanted; a late answer for another is dropped

// showChanges fetches what history kept of the call and shows each path's
// diff and the undo line. A call that changed nothing (404) shows nothing.
async function showChanges(id) {
  changesFor = id;
  $("detail-changes").hidden = true;
  $("detail-diffs").replaceChildren();
  $("detail-undo").textContent = "";
  if (!id) return;
  let page;
  try {
    const res = await fetch("api/changes/" + encodeURIComponent(id), {
      headers: { Authorization: "Bearer " + token }, cache: "no-store",
    });
    if (changesFor !== id) return;
    if (res.status === 404) return;
    if (res.status === 401) { forget("the token was refused"); return; }
    page = await res.json();
    if (!res.ok) throw new Error(page.error || res.statusText);
  } catch (e) {
    if (changesFor !== id) return;
    $("detail-diffs").replaceChildren(el("p", "could not load what it changed: " + e.message, "error"));
    $("detail-changes").hidden = false;
    return;
  }
  if (changesFor !== id || !page.changes || page.changes.length === 0) return;
  $("detail-diffs").replaceChildren(...page.changes.map(changeBlock));
  $("detail-undo").textContent = esc(page.undo);
  $("detail-changes").hidden = false;
}

function changeBlock(c) {
  const div = el("div", undefined, "change");
  let what = `${c.op} ${c.path}`;
  if (c.to) what += ` → ${c.to}`;
  if (c.from) what += ` (from ${c.from})`;
  what += ` · ${c.before.text} → ${c.after.text}`;
  if (c.state !== "applied") what += ` · ${c.state}`;
  div.append(el("p", what, "mono change-head"));
  if (c.diff) div.append(diffPre(c.diff));
  return div;
}

// diffPre shows a diff one span per line, coloured by its first character
// through CSS classes; each line is text, escaped (tabs kept).
function diffPre(diff) {
  const pre = el("pre", undefined, "diff");
  const lines = diff.endsWith("\n") ? diff.slice(0, -1).split("\n") : diff.split("\n");
  for (const line of lines) {
    let cls = "ctx";
    if (line.startsWith("+++ ") || line.startsWith("--- ")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    else if (!line.startsWith(" ")) cls = "note";
    const span = document.createElement("span");
    span.className = "line " + cls;
    span.textContent = line.split("\t").map(esc).join("\t") + "\n";
    pre.append(span);
  }
  return pre;
}

// copyUndo puts the undo line, as shown, on the clipboard; where the
// clipboard is not offered it selects the line for the person to copy.
async function copyUndo() {
  const code = $("detail-undo");
  const button = $("detail-copy");
  try {
    if (!navigator.clipboard) throw new Error("no clipboard");
    await navigator.clipboard.writeText(code.textContent);
    button.textContent = "copied";
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = "selected: copy it";
  }
  setTimeout(() => { button.textContent = "copy"; }, 2000);
}

// ---- counts and charts ----

function drawTime(svg, series, bucketSeconds) {
  svg.replaceChildren();
  const W = 600, H = 120, pad = 18;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  if (!series.length) { svg.append(svgEl("text", { x: 4, y: 14 }, "no calls")); return; }
  const top = Math.max(1, ...series.map((b) => b.calls));
  const bw = (W - pad) / series.length;
  svg.append(svgEl("line", { x1: pad, y1: H - pad, x2: W, y2: H - pad, class: "axis" }));
  svg.append(svgEl("text", { x: 0, y: 10 }, String(top)));
  series.forEach((b, i) => {
    const x = pad + i * bw;
    const h = (H - 2 * pad) * b.calls / top, hd = (H - 2 * pad) * b.denies / top;
    const g = svgEl("g");
    g.append(svgEl("title", {}, `${fmtTime(b.start)}: ${b.calls} calls, ${b.denies} denied`));
    g.append(svgEl("rect", { x: x + 1, y: H - pad - h, width: Math.max(1, bw - 2), height: h, class: "calls" }));
    if (b.denies) g.append(svgEl("rect", { x: x + 1, y: H - pad - hd, width: Math.max(1, bw - 2), height: hd, class: "denies" }));
    svg.append(g);
  });
  const label = (i) => svgEl("text", { x: pad + i * bw, y: H - 4 }, fmtTime(series[i].start).slice(5, 16));
  svg.append(label(0));
  if (series.length > 1) {
    const t = label(series.length - 1);
    t.setAttribute("text-anchor", "end");
    t.setAttribute("x", String(W));
    svg.append(t);
  }
  svg.append(svgEl("text", { x: W / 2, y: H - 4, "text-anchor": "middle" }, `bar = ${bucketLabel(bucketSeconds)}`));
}

function bucketLabel(s) {
  if (s >= 86400) return s / 86400 + " d";
  if (s >= 3600) return s / 3600 + " h";
  return s / 60 + " min";
}

// drawBars draws one horizontal bar per entry: [name, total, denied].
function drawBars(svg, entries, empty) {
  svg.replaceChildren();
  const W = 300, row = 16, shown = entries.slice(0, 7);
  const H = Math.max(row, shown.length * row);
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  if (!shown.length) { svg.append(svgEl("text", { x: 4, y: 12 }, empty)); return; }
  const top = Math.max(1, ...shown.map((e) => e[1]));
  shown.forEach(([name, total, denied], i) => {
    const y = i * row, x0 = 110, w = (W - x0 - 30) * total / top, wd = (W - x0 - 30) * denied / top;
    const g = svgEl("g");
    g.append(svgEl("title", {}, `${name}: ${total}` + (denied ? `, ${denied} denied` : "")));
    g.append(svgEl("text", { x: 0, y: y + 11 }, name.length > 18 ? name.slice(0, 17) + "…" : name));
    g.append(svgEl("rect", { x: x0, y: y + 3, width: Math.max(1, w), height: row - 6, class: "calls" }));
    if (denied) g.append(svgEl("rect", { x: x0, y: y + 3, width: Math.max(1, wd), height: row - 6, class: "denies" }));
    g.append(svgEl("text", { x: x0 + w + 4, y: y + 11 }, String(total)));
    svg.append(g);
  });
}

async function refreshStats() {
  statsTimer = 0;
  let s;
  try {
    s = await api("api/stats", filterParams());
  } catch (e) {
    if (e instanceof Unauthorized) forget(e.message);
    return;
  }
  $("n-calls").textContent = String(s.calls);
  $("n-denies").textContent = String(s.denies);
  $("n-errors").textContent = String(s.errors);
  $("n-failed").textContent = String(s.failed);
  drawTime($("chart-time"), s.series || [], s.bucket_seconds);
  const tools = Object.entries(s.by_tool || {}).map(([k, c]) => [k, c.calls, c.denies]).sort((a, b) => b[1] - a[1]);
  drawBars($("chart-tool"), tools, "no calls");
  const rules = Object.entries(s.by_rule || {}).map(([k, n]) => [k, n, n]).sort((a, b) => b[1] - a[1]);
  drawBars($("chart-rule"), rules, "no denies");
  const dmg = $("damaged");
  dmg.hidden = !s.damaged;
  dmg.textContent = s.damaged ? esc("A line of the log is not a record (run vaultgate audit verify): " + s.damaged) : "";
}

function statsSoon() {
  if (!statsTimer) statsTimer = setTimeout(refreshStats, 1000);
}

// ---- the live stream ----

// follow reads the server-sent events with fetch, which, unlike
// EventSource, can send the token as a header. It reconnects from the
// last seq seen, so a dropped connection loses nothing.
async function follow(ctl) {
  while (!ctl.signal.aborted) {
    const p = filterParams();
    p.set("from", String(lastSeq + 1));
    try {
      const res = await fetch("api/events?" + p.toString(), {
        headers: { Authorization: "Bearer " + token, Accept: "text/event-stream" },
        cache: "no-store", signal: ctl.signal,
      });
      if (res.status === 401) { forget("the token was refused"); return; }
      if (!res.ok || !res.body) throw new Error("stream: " + res.status);
      setStatus("live", "live");
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          handleEvent(buf.slice(0, i));
          buf = buf.slice(i + 2);
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) return;
    }
    setStatus("reconnecting…", "down");
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function handleEvent(block) {
  let event = "message", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const at = line.indexOf(":");
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data += value;
  }
  if (event !== "record" || !data) return;
  let r;
  try { r = JSON.parse(data); } catch { return; }
  if (typeof r.seq !== "number" || r.seq <= lastSeq) return;
  lastSeq = r.seq;
  addLive(r);
  statsSoon();
}

// ---- start ----

async function load() {
  if (stream) stream.abort();
  stream = null;
  setStatus("loading…");
  let page;
  try {
    page = await api("api/records", filterParams());
  } catch (e) {
    if (e instanceof Unauthorized) { forget(e.message); return; }
    setStatus(String(e.message || e), "down");
    return;
  }
  $("login").hidden = true;
  $("panel").hidden = false;
  lastSeq = page.last_seq;
  setRows(page.records);
  $("detail").hidden = true;
  refreshStats();
  stream = new AbortController();
  follow(stream);
}

document.addEventListener("DOMContentLoaded", () => {
  $("login-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    load();
  });
  $("filters").addEventListener("submit", (ev) => { ev.preventDefault(); load(); });
  $("f-clear").addEventListener("click", () => {
    for (const k of ["session", "tool", "decision", "path", "since"]) $("f-" + k).value = "";
    load();
  });
  $("logout").addEventListener("click", () => forget(""));
  $("detail-copy").addEventListener("click", copyUndo);
  $("detail-close").addEventListener("click", () => {
    $("detail").hidden = true;
    if (selectedRow) selectedRow.classList.remove("selected");
  });
  if (token) load(); else showLogin("");
});
