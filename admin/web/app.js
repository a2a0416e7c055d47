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

// elLines is el for a text whose line breaks are the text's own (a
// reason, an error): each line escaped, the breaks kept and shown as
// breaks (CSS white-space: pre-line).
function elLines(tag, text, cls) {
  const e = document.createElement(tag);
  e.textContent = String(text ?? "").split("\n").map(esc).join("\n");
  e.className = "lines" + (cls ? " " + cls : "");
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

// post sends the page's one act (the person's undo) as JSON with the
// token in its header, the only place the panel reads it from.
async function post(path, body) {
  const res = await fetch(path, {
    method: "POST", cache: "no-store",
    headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  if (res.status === 401) throw new Unauthorized("the token was refused");
  let answer;
  try { answer = await res.json(); } catch { answer = { error: res.statusText }; }
  return { ok: res.ok, answer };
}

// ---- filters, kept in the URL ----

const FIELDS = ["q", "agent", "via", "tool", "decision", "look", "session", "path", "since", "until"];

// readURL puts the URL's filters in the form. A bare URL opens on today.
function readURL() {
  const p = new URLSearchParams(location.search);
  const any = FIELDS.some((k) => p.has(k));
  for (const k of FIELDS) $("f-" + k).value = p.get(k) || "";
  if (!any) $("f-since").value = "today";
}

// formParams is the form as the URL keeps it: "today" stays "today".
function formParams() {
  const p = new URLSearchParams();
  for (const k of FIELDS) {
    const v = $("f-" + k).value.trim();
    if (v) p.set(k, v);
  }
  return p;
}

function writeURL() {
  const q = formParams().toString();
  const url = location.pathname + (q ? "?" + q : "");
  if (url !== location.pathname + location.search) history.pushState(null, "", url);
}

function localMidnight() {
  const d = new Date();
  d.setHours(0, 0, 0, 0);
  return d.toISOString();
}

// apiParams is the form as the API reads it: today is this browser's
// midnight, all is no bound.
function apiParams() {
  const p = formParams();
  for (const k of ["since", "until"]) {
    const v = p.get(k);
    if (v === "today") p.set(k, localMidnight());
    else if (v === "all") p.delete(k);
  }
  return p;
}

function sessionView() { return $("f-session").value.trim() !== ""; }

function isToday() {
  const p = formParams();
  return p.get("since") === "today" && [...p.keys()].length === 1;
}

// ---- the table ----

function fmtTime(t) {
  const d = new Date(t);
  if (isNaN(d)) return String(t);
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function fmtLength(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return s + " s";
  const m = Math.round(s / 60);
  if (m < 60) return m + " min";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}

function isBash(r) { return String(r.tool || "").toLowerCase() === "bash"; }

// A row is one call (audit.Call): the line that judged it, with, for
// Claude Code's Bash, the line of the vaultgate exec that ran it under
// "exec" and the hook's line after it ran under "after". ran is the line
// that says how it ran: exec's, else the call's own.
function ran(r) { return r.exec || r; }

function runWords(x) {
  const w = [];
  if (x.exit_code !== undefined && x.exit_code !== null) w.push("exit code " + x.exit_code);
  if (x.timed_out) w.push("timed out");
  if (x.signal) w.push("signal " + x.signal);
  return w.join(", ");
}

// outcome is what the decision badge says: a call allowed and then
// failed shows as failed.
function outcome(r) {
  if (r.decision === "allow" && r.failed_why) return "failed";
  if (r.decision === "allow" || r.decision === "deny") return r.decision;
  return "error";
}

function decisionBadge(r) {
  const o = outcome(r);
  return el("span", o === "error" ? r.decision : o, "badge " + o);
}

const LOOK_WORDS = {
  deny: "denied", failed: "failed", unpredicted: "bash did what was not predicted",
  many: "many files at once", delete: "deletes", rule: "a rule named it",
};

function whatCell(r) {
  const td = el("td", null, "mono what");
  if (isBash(r) && r.args && typeof r.args.command === "string") {
    td.append(el("div", "$ " + r.args.command, "cmd"));
  }
  for (const e of r.effects || []) {
    if (e.op === "exec") continue; // the command says it
    const line = el("div");
    line.append(el("span", e.op + " "), el("span", e.path), zoneLabel("span", " " + (e.zone || "-"), e.zone));
    td.append(line);
  }
  if (r.exec) td.append(el("div", "ran through vaultgate exec" + (runWords(r.exec) ? ": " + runWords(r.exec) : ""), "zone"));
  const real = ran(r).real || [];
  if (real.length) td.append(el("div", `real: ${real.length} change${real.length > 1 ? "s" : ""}`, "zone"));
  return td;
}

function whyCell(r) {
  const td = el("td", null, "why");
  if (r.decision === "deny") td.append(el("span", r.rule || "(none)", "rule"), elLines("span", " " + (r.reason || ""), "reason"));
  else if (r.failed_why) td.append(elLines("span", "failed: " + r.failed_why, "why-failed"));
  else if (r.error) td.append(elLines("span", r.error, "reason"));
  const chips = (r.look || []).filter((k) => k !== "deny" && k !== "failed");
  if (chips.length) {
    const div = el("div");
    for (const k of chips) div.append(el("span", LOOK_WORDS[k] || k, "chip"));
    td.append(div);
  }
  return td;
}

// zoneLabel shows a zone name; zones.css, made from the kind table, colours it.
function zoneLabel(tag, text, zone) {
  const e = el(tag, text, "zone");
  e.dataset.zone = zone || "none";
  return e;
}

function shortID(s) {
  s = String(s || "");
  return [...s].length > 16 ? [...s].slice(0, 14).join("") + "…" : s;
}

function row(r, fresh) {
  const tr = document.createElement("tr");
  tr.tabIndex = 0;
  tr.dataset.seq = String(r.seq);
  const o = outcome(r);
  if (o !== "allow") tr.classList.add(o);
  else if (r.look && r.look.length) tr.classList.add("look");
  if (fresh) tr.classList.add("fresh");
  const dec = el("td", null, "nowrap");
  dec.append(decisionBadge(r));
  const when = el("td", fmtTime(r.time).slice(11), "mono nowrap");
  when.title = fmtTime(r.time);
  let tool = r.tool;
  if (r.event) tool += " (" + r.event + ")";
  // A session shows as the label a person knows it by (when it started,
  // through what) once the day has named it; a long id (stdio-<uuid>) is
  // cut. The record and the session's view show the id whole.
  const known = sessionLabels.get(r.session || "");
  const sess = el("td", known ? known.short : shortID(r.session), known ? "nowrap" : "mono nowrap");
  sess.title = r.session || "";
  tr.append(when, el("td", r.via, "nowrap"), sess, el("td", tool, "mono nowrap"),
    dec, whatCell(r), whyCell(r));
  tr.addEventListener("click", () => showDetail(r, tr));
  return tr;
}

let matched = 0; // how many calls match, as the list's caption says: the page's answer, then each call the stream adds

function showMatched(shown) {
  $("matched").textContent = matched > shown ? `showing ${shown} of ${matched} matching calls` : `${matched} matching call${matched === 1 ? "" : "s"}`;
}

function setRows(records, n) {
  matched = n;
  const body = $("calls").tBodies[0];
  const list = sessionView() ? records : records.slice().reverse();
  body.replaceChildren(...list.map((r) => row(r, false)));
  $("empty").hidden = records.length > 0;
  $("calls-title").textContent = sessionView() ? "The session's calls, in order" : "Calls, newest first";
  showMatched(records.length);
}

// addLive shows a call from the stream: a new one as a new row; one the
// page shows already (a line joined it: exec's run, the after line) in
// place of its row, which keeps its place and its selection.
function addLive(r) {
  const body = $("calls").tBodies[0];
  const old = [...body.rows].find((tr) => tr.dataset.seq === String(r.seq));
  if (old) {
    const tr = row(r, true);
    old.replaceWith(tr);
    if (selectedRow === old) {
      selectedRow = tr;
      tr.classList.add("selected");
      if (!$("detail").hidden) showDetail(r, tr, true);
    }
    return;
  }
  if (sessionView()) body.append(row(r, true));
  else body.prepend(row(r, true));
  while (body.rows.length > MAX_ROWS) body.deleteRow(sessionView() ? 0 : -1);
  $("empty").hidden = true;
  matched++; // a new call, not one joined by a later line: the caption counts it as the totals will
  showMatched(body.rows.length);
}

// ---- keyboard ----

function rowsList() { return [...$("calls").tBodies[0].rows]; }

function onKey(ev) {
  const t = ev.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement;
  if (ev.key === "Escape") {
    if (!$("undo").hidden) { closeUndo(); ev.preventDefault(); }
    else if (!$("detail").hidden) { closeDetail(); ev.preventDefault(); }
    return;
  }
  if (!$("undo").hidden) return; // the dialog has the keys
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === "/") { ev.preventDefault(); $("f-q").focus(); return; }
  const rows = rowsList();
  if (!rows.length) return;
  let at = rows.indexOf(document.activeElement);
  if (at < 0 && selectedRow) at = rows.indexOf(selectedRow); // the focus is in the open record
  let next = -1;
  if (ev.key === "ArrowDown" || ev.key === "j") next = at < 0 ? 0 : Math.min(rows.length - 1, at + 1);
  else if (ev.key === "ArrowUp" || ev.key === "k") next = at < 0 ? 0 : Math.max(0, at - 1);
  else if (ev.key === "Home") next = 0;
  else if (ev.key === "End") next = rows.length - 1;
  else if (ev.key === "Enter" && at >= 0) { ev.preventDefault(); rows[at].click(); return; }
  if (next >= 0) {
    ev.preventDefault();
    rows[next].focus();
    rows[next].scrollIntoView({ block: "nearest" });
    if (!$("detail").hidden) rows[next].click(); // an open record follows the focus
  }
}

// ---- one record ----

function closeDetail() {
  $("detail").hidden = true;
  changesFor = "";
  if (selectedRow) {
    selectedRow.classList.remove("selected");
    selectedRow.focus();
  }
}

function showDetail(r, tr, live) {
  if (selectedRow) selectedRow.classList.remove("selected");
  selectedRow = tr;
  tr.classList.add("selected");
  const keepFocus = live || document.activeElement === tr;
  $("detail").hidden = false;
  $("detail-title").textContent = esc(`${r.tool} · ${outcome(r)} · ${fmtTime(r.time)}`);
  const look = (r.look || []).map((k) => LOOK_WORDS[k] || k);
  $("detail-look").hidden = look.length === 0;
  $("detail-look").textContent = look.length ? esc("Needs a look: " + look.join(", ")) : "";

  const bash = isBash(r) && r.args && typeof r.args.command === "string";
  const run = ran(r);
  $("detail-bash").hidden = !bash;
  const out = $("detail-output");
  out.replaceChildren();
  if (bash) {
    $("detail-command").textContent = esc("$ " + r.args.command);
    let exit = run.exit_code === undefined || run.exit_code === null ? "no exit code: it did not run here" : "exit code " + run.exit_code;
    if (r.failed_why) exit = "failed: " + r.failed_why;
    $("detail-exit").textContent = esc(exit);
    for (const k of ["stdout", "stderr"]) {
      if (!run[k]) continue;
      out.append(el("p", k + " (the head the log keeps)", "out-name"));
      const pre = el("pre", undefined, "output");
      pre.textContent = String(run[k]).split("\n").map(esc).join("\n");
      out.append(pre);
    }
  }

  const fields = (dl, x) => {
    dl.replaceChildren();
    const add = (k, v) => {
      if (v === undefined || v === null || v === "") return;
      const text = typeof v === "string" ? v : JSON.stringify(v);
      // a reason or an error keeps its line breaks; every other field is one line
      dl.append(el("dt", k), k === "reason" || k === "error" ? elLines("dd", text) : el("dd", text));
    };
    add("time", x.time); add("id", x.id); add("seq", x.seq); add("session", x.session); add("agent", x.agent);
    add("via", x.via); add("event", x.event); add("tool_use_id", x.tool_use_id); add("continues", x.continues); add("tool", x.tool);
    add("decision", x.decision); add("rule", x.rule); add("reason", x.reason);
    add("outcome", x.outcome); add("error", x.error); add("exit_code", x.exit_code); add("duration_ms", x.duration_ms);
    add("wall", x.wall ? x.wall.join(", ") : ""); add("args", JSON.stringify(x.args)); add("prev", x.prev);
  };
  // The judgement is the call's own line; its run, exec's; the hook's
  // after line, when it has one.
  $("detail-judgement").hidden = !r.exec && !r.after;
  fields($("detail-fields"), r);
  $("detail-run").hidden = !r.exec;
  fields($("detail-run-fields"), r.exec || {});
  $("detail-after").hidden = !r.after;
  fields($("detail-after-fields"), r.after || {});

  const eff = $("detail-effects").tBodies[0];
  eff.replaceChildren(...(r.effects || []).map((e) => {
    const tr = document.createElement("tr");
    tr.append(el("td", e.op, "mono"), el("td", e.path, "mono"), zoneLabel("td", e.zone || "-", e.zone));
    return tr;
  }));
  const real = run.real || [];
  $("detail-real").hidden = real.length === 0;
  $("detail-real-table").tBodies[0].replaceChildren(...real.map((e) => {
    const tr = document.createElement("tr");
    const note = el("td");
    if (e.unpredicted) note.append(el("span", "not predicted ", "mark-unpredicted"));
    if (e.refused) note.append(el("span", "refused ", "mark-refused"));
    const size = (s) => (s ? `${s.mode} ${s.size} B` : "none");
    note.append(el("span", `${size(e.before)} → ${size(e.after)}`, "zone"));
    let path = e.path;
    if (e.from) path += " (from " + e.from + ")";
    tr.append(el("td", e.op, "mono"), el("td", path, "mono"), zoneLabel("td", e.zone || "-", e.zone), note);
    return tr;
  }));
  // The lines as the log holds them: what the panel added is left out.
  const line = { ...r };
  delete line.look; delete line.failed_why; delete line.changes; delete line.exec; delete line.after;
  const lines = [line, r.exec, r.after].filter(Boolean);
  $("detail-raw-title").textContent = lines.length > 1 ? "the lines" : "the line";
  // Escaped line by line: the indentation's newlines are the JSON's own.
  $("detail-raw").textContent = lines.map((x) => JSON.stringify(x, null, 2)).join("\n").split("\n").map(esc).join("\n");
  // The history keeps a change under the id of the line that made it:
  // exec's, for Claude Code's Bash.
  showChanges(mayHaveChanged(r) ? run.id : "");
  if (!keepFocus) $("detail").focus({ preventScroll: true });
}

// mayHaveChanged says whether history could hold anything of the call: a
// denied or failed call, or one that only read, changed nothing, and is
// not asked about (the history answers 404 for it, which the browser
// logs).
function mayHaveChanged(r) {
  if (r.decision !== "allow" || r.event) return false;
  // bash is kept when its real changes were applied (on the overlay)
  if (isBash(r)) return !r.failed_why && (ran(r).real || []).some((e) => !e.refused && e.op !== "read");
  return !r.failed_why && (r.effects || []).some((e) => e.op !== "read" && e.op !== "exec");
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
  $("detail-undo-do").hidden = true;
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
  $("detail-undo-do").hidden = !page.can_undo;
  $("detail-undo-button").dataset.id = id;
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

// ---- undo: the panel's one act ----

// The dialog is about one request, {ids} or {session}: it asks the server
// for the plan first (dry_run: the plan vaultgate undo --dry-run prints),
// shows it, and sends the same request for real only when the person
// confirms it.
let undoAsk = null;  // { req, what } the open dialog is about
let undoDone = false; // the vault changed: the view is loaded again when the dialog closes

async function openUndo(req, what) {
  const ask = { req, what };
  undoAsk = ask;
  undoDone = false;
  $("undo-title").textContent = esc("Undo " + what + "?");
  $("undo-state").textContent = "Working out what undo would do…";
  $("undo-lines").replaceChildren();
  $("undo-command").textContent = "";
  $("undo-confirm").hidden = true;
  $("undo-confirm").disabled = false;
  $("undo-cancel").textContent = "Cancel";
  $("undo").hidden = false;
  $("undo-box").focus();
  let r;
  try {
    r = await post("api/undo", { ...req, dry_run: true });
  } catch (e) {
    if (e instanceof Unauthorized) { closeUndo(); forget(e.message); return; }
    if (undoAsk === ask) $("undo-state").textContent = esc("could not ask for the plan: " + (e.message || e));
    return;
  }
  if (undoAsk !== ask) return; // closed, or another asked for since
  showUndoAnswer(r.answer);
  if (!r.ok) { $("undo-state").textContent = "Undo can't do it:"; return; }
  const does = (r.answer.paths || []).filter((p) => p.action !== "leave alone").length;
  $("undo-state").textContent = does ? "Nothing has changed yet. This is what undo would do:" : "Undo would change nothing:";
  $("undo-confirm").hidden = does === 0;
  $("undo-confirm").textContent = `Undo: change ${does} path${does === 1 ? "" : "s"}`;
  if (does) $("undo-confirm").focus();
}

async function confirmUndo() {
  const ask = undoAsk;
  if (!ask) return;
  $("undo-confirm").disabled = true;
  $("undo-state").textContent = "Undoing…";
  let r;
  try {
    r = await post("api/undo", ask.req);
  } catch (e) {
    if (e instanceof Unauthorized) { closeUndo(); forget(e.message); return; }
    $("undo-state").textContent = esc("could not undo: " + (e.message || e));
    return;
  }
  if (undoAsk !== ask) return;
  undoDone = true;
  showUndoAnswer(r.answer);
  $("undo-title").textContent = esc((r.ok ? "Undone: " : "Undo failed: ") + ask.what);
  $("undo-state").textContent = r.ok ? "Done. The undo is a call of its own, yours (via panel); undoing it puts this back." : "";
  $("undo-confirm").hidden = true;
  $("undo-cancel").textContent = "Close";
  $("undo-cancel").focus();
}

// showUndoAnswer lists what undo says, line by line, as vaultgate undo
// prints it (a problem line is its stderr's), and the same at a terminal.
function showUndoAnswer(a) {
  const lines = (a.lines || []).map((l) => el("li", l.text, l.problem ? "problem" : ""));
  if (a.error) lines.push(el("li", a.error, "problem"));
  $("undo-lines").replaceChildren(...lines);
  $("undo-command").textContent = esc(a.command || "");
}

function closeUndo() {
  $("undo").hidden = true;
  undoAsk = null;
  if (undoDone) {
    undoDone = false;
    load();
  }
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
  let s;
  try {
    s = await api("api/stats", apiParams());
  } catch (e) {
    if (e instanceof Unauthorized) forget(e.message);
    return;
  }
  drawTime($("chart-time"), s.series || [], s.bucket_seconds);
  const tools = Object.entries(s.by_tool || {}).map(([k, c]) => [k, c.calls, c.denies]).sort((a, b) => b[1] - a[1]);
  drawBars($("chart-tool"), tools, "no calls");
  const rules = Object.entries(s.by_rule || {}).map(([k, n]) => [k, n, n]).sort((a, b) => b[1] - a[1]);
  drawBars($("chart-rule"), rules, "no denies");
}

// ---- the day at a glance ----

// sessionLabels: each session the page was told of, by id, with the label
// a person knows it by (when it started, through what, which agent) and
// its short form for the list.
const sessionLabels = new Map();

function clock(t) { return fmtTime(t).slice(11, 16); }

function sessionLabel(s) {
  const who = s.client || (s.via || []).join(", ");
  return `${clock(s.start)} · ${who} · agent ${s.agent || "-"}`;
}

function changedText(s) {
  if (!s.changed || !s.changed.length) return "changed nothing";
  let text = "changed " + s.changed.join(", ");
  if (s.changed_paths > s.changed.length) text += ` and ${s.changed_paths - s.changed.length} more`;
  return text;
}

let canUndo = false;
let daySession = null; // the session the view is of, as the day told it

function renderDay(d) {
  const session = $("f-session").value.trim();
  canUndo = !!d.can_undo;
  for (const s of d.sessions || []) sessionLabels.set(s.id, { long: sessionLabel(s), short: `${clock(s.start)} ${s.client || ""}`.trim() });
  daySession = session ? (d.sessions || []).find((s) => s.id === session) || null : null;
  let title = isToday() ? "Today" : "The calls that match";
  if (session) title = "Session " + (daySession ? sessionLabel(daySession) : session);
  $("day-title").textContent = esc(title);
  $("day-sub").hidden = !session;
  $("day-sub").textContent = session ? esc(session + (daySession ? " · " + changedText(daySession) : "")) : "";
  $("session-undo").hidden = !(session && canUndo && daySession && daySession.changes > 0);
  $("back-to-day").hidden = !session;
  for (const k of ["calls", "changes", "denies", "failed", "errors", "look"]) $("n-" + k).textContent = String(d[k] || 0);
  const dec = $("f-decision").value, look = $("f-look").value;
  $("t-calls").classList.toggle("on", !dec && !look);
  $("t-denies").classList.toggle("on", dec === "deny");
  $("t-failed").classList.toggle("on", dec === "failed");
  $("t-errors").classList.toggle("on", dec === "error");
  $("t-look").classList.toggle("on", look === "any");

  $("agents").tBodies[0].replaceChildren(...(d.agents || []).map((a) => {
    const tr = document.createElement("tr");
    tr.append(el("td", a.agent || "-", "mono"), el("td", String(a.calls)), el("td", String(a.changes)),
      el("td", String(a.denies), a.denies ? "reason" : ""), el("td", String(a.failed), a.failed ? "why-failed" : ""),
      el("td", String(a.look)));
    return tr;
  }));

  $("sessions").replaceChildren(...(d.sessions || []).map((s) => {
    const li = document.createElement("li");
    const b = el("button");
    b.type = "button";
    b.dataset.session = s.id;
    b.append(el("div", sessionLabel(s), "sid"));
    const meta = el("div", undefined, "meta");
    meta.append(el("span", s.id || "(no session)", "mono"));
    meta.append(el("span", ` · ${(s.via || []).join(", ")} · ${fmtLength(Date.parse(s.end) - Date.parse(s.start))} · ${s.calls} call${s.calls === 1 ? "" : "s"} · ${s.changes} change${s.changes === 1 ? "" : "s"}`));
    if (s.denies) meta.append(el("span", ` · ${s.denies} denied`, "n-deny"));
    if (s.failed) meta.append(el("span", ` · ${s.failed} failed`, "n-failed"));
    if (s.look) meta.append(el("span", ` · ${s.look} need a look`, "n-look"));
    b.append(meta);
    if (s.changed && s.changed.length) b.append(el("div", changedText(s), "changed mono"));
    b.addEventListener("click", () => openSession(s.id));
    li.append(b);
    return li;
  }));
  if (!(d.sessions || []).length) $("sessions").append(el("li", "no sessions", "muted"));
  $("sessions-more").hidden = !d.more;
  $("sessions-more").textContent = d.more ? `and ${d.more} more sessions` : "";
  const dmg = $("damaged");
  dmg.hidden = !d.damaged;
  dmg.textContent = d.damaged ? esc("A line of the log is not a record (run vaultgate audit verify): " + d.damaged) : "";
}

async function refreshDay() {
  try {
    renderDay(await api("api/day", apiParams()));
  } catch (e) {
    if (e instanceof Unauthorized) forget(e.message);
  }
}

let summaryTimer = 0;
function summarySoon() {
  if (summaryTimer) return;
  summaryTimer = setTimeout(() => { summaryTimer = 0; refreshDay(); refreshStats(); }, 1000);
}

// openSession shows all of one session's calls, in order: the time range
// stays, the other filters go.
function openSession(id) {
  for (const k of ["q", "agent", "via", "tool", "decision", "look", "path"]) $("f-" + k).value = "";
  $("f-session").value = id;
  apply();
}

// ---- the live stream ----

// follow reads the server-sent events with fetch, which, unlike
// EventSource, can send the token as a header. It reconnects from the
// last seq seen, so a dropped connection loses nothing.
async function follow(ctl) {
  while (!ctl.signal.aborted) {
    const p = apiParams();
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
  let event = "message", data = "", id = "";
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const at = line.indexOf(":");
    const field = at < 0 ? line : line.slice(0, at);
    const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "data") data += value;
    else if (field === "id") id = value;
  }
  if (event !== "record" || !data) return;
  let r;
  try { r = JSON.parse(data); } catch { return; }
  // The id is the seq of the line the event is for: the call's own, or
  // one that joined it (then r.seq, the call's, is older).
  const seq = Number(id || r.seq);
  if (typeof r.seq !== "number" || !(seq > lastSeq)) return;
  lastSeq = seq;
  addLive(r);
  summarySoon();
}

// ---- start ----

let loads = 0; // a late answer to an older load is dropped

async function load() {
  if (stream) stream.abort();
  stream = null;
  const mine = ++loads;
  setStatus("loading…");
  const p = apiParams();
  if (sessionView()) p.set("order", "first");
  let page, day;
  try {
    [page, day] = await Promise.all([api("api/records", p), api("api/day", apiParams())]);
  } catch (e) {
    if (mine !== loads) return;
    if (e instanceof Unauthorized) { forget(e.message); return; }
    setStatus(String(e.message || e), "down");
    return;
  }
  if (mine !== loads) return;
  $("login").hidden = true;
  $("panel").hidden = false;
  lastSeq = page.last_seq;
  renderDay(day); // first: it names the sessions the rows show
  setRows(page.records, page.matched);
  $("detail").hidden = true;
  selectedRow = null;
  refreshStats();
  stream = new AbortController();
  follow(stream);
}

function apply() {
  writeURL();
  load();
}

document.addEventListener("DOMContentLoaded", () => {
  readURL();
  $("login-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    load();
  });
  $("filters").addEventListener("submit", (ev) => { ev.preventDefault(); apply(); });
  const setAndApply = (values) => {
    for (const [k, v] of Object.entries(values)) $("f-" + k).value = v;
    apply();
  };
  $("f-clear").addEventListener("click", () => setAndApply(Object.fromEntries(FIELDS.map((k) => [k, k === "since" ? "today" : ""]))));
  $("f-today").addEventListener("click", () => setAndApply({ since: "today", until: "" }));
  $("f-all").addEventListener("click", () => setAndApply({ since: "all", until: "" }));
  $("back-to-day").addEventListener("click", () => setAndApply({ session: "" }));
  $("t-calls").addEventListener("click", () => setAndApply({ decision: "", look: "" }));
  $("t-denies").addEventListener("click", () => setAndApply({ decision: "deny", look: "" }));
  $("t-failed").addEventListener("click", () => setAndApply({ decision: "failed", look: "" }));
  $("t-errors").addEventListener("click", () => setAndApply({ decision: "error", look: "" }));
  $("t-look").addEventListener("click", () => setAndApply({ decision: "", look: "any" }));
  $("logout").addEventListener("click", () => forget(""));
  $("detail-copy").addEventListener("click", copyUndo);
  $("detail-undo-button").addEventListener("click", () => {
    const id = $("detail-undo-button").dataset.id;
    if (id) openUndo({ ids: [id] }, "call " + id);
  });
  $("session-undo").addEventListener("click", () => {
    const id = $("f-session").value.trim();
    if (id) openUndo({ session: id }, "session " + (daySession ? sessionLabel(daySession) : id));
  });
  $("undo-confirm").addEventListener("click", confirmUndo);
  $("undo-cancel").addEventListener("click", closeUndo);
  $("detail-close").addEventListener("click", closeDetail);
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", () => { readURL(); if (token) load(); });
  if (token) load(); else showLogin("");
});
