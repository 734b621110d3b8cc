// The dashboard: /v1/slots drawn as a table, drawn again on every event of
// /v1/events (and every few seconds, for uptime and usage). Data is only
// ever put in the page as text. The token stays in this tab's
// sessionStorage and is sent as a Bearer header, never as a cookie.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "svkit-token";
const KEEP = 60; // usage samples per slot: 5 minutes at one per 5 s
const hist = new Map(); // slot -> [{t, cpu, rss}]
let slots = [];
let selected = null;
let timer = null;

const token = () => sessionStorage.getItem(KEY) || "";
const auth = () => ({ Authorization: "Bearer " + token() });

function bytes(n) {
  if (n == null) return "-";
  const u = ["B", "K", "M", "G", "T"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(n < 10 ? 1 : 0) : n) + u[i];
}

function secs(s) {
  if (s == null) return "-";
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24;
  const m = Math.floor(s / 60) % 60, x = s % 60;
  const p = (v) => String(v).padStart(2, "0");
  if (d) return d + "d" + p(h) + "h";
  if (h) return h + "h" + p(m) + "m";
  if (m) return m + "m" + p(x) + "s";
  return x + "s";
}

function lastExit(e) {
  if (!e) return "-";
  if (e.code != null) return "exit " + e.code;
  if (e.signal) return e.signal;
  return "wstat " + e.wstat;
}

function why(r) {
  if (r.why) return r.why;
  if (r.waiting_for) return "waiting for " + r.waiting_for;
  if (r.blocked_by && r.blocked_by.length) return "blocked by " + r.blocked_by.join(", ");
  if (r.liveness && r.liveness.failing) return "liveness: " + (r.liveness.last_error || "failing");
  if (r.ready_overdue) return "readiness overdue";
  if (r.log_fault) return "log: " + r.log_fault.why;
  if (r.stray_pid) return "unsupervised copy, pid " + r.stray_pid;
  if (r.next_run) return "next run " + new Date(r.next_run).toLocaleString();
  return "";
}

function ready(r) {
  if (r.done) return "done";
  if (r.state !== "up") return "-";
  return r.ready ? "yes" : "no";
}

function record(doc) {
  const t = Date.now() / 1000;
  for (const r of doc.slots) {
    const h = hist.get(r.name) || [];
    if (r.usage) h.push({ t, cpu: r.usage.cpu_seconds, rss: r.usage.rss_bytes });
    while (h.length > KEEP) h.shift();
    hist.set(r.name, h);
  }
}

function cpu(name) {
  const h = hist.get(name) || [];
  if (h.length < 2) return h.length ? h[0].cpu.toFixed(1) + "s" : "-";
  const a = h[h.length - 2], b = h[h.length - 1];
  if (b.t <= a.t || b.cpu < a.cpu) return b.cpu.toFixed(1) + "s";
  return Math.round((100 * (b.cpu - a.cpu)) / (b.t - a.t)) + "%";
}

function spark(name) {
  const h = hist.get(name) || [];
  if (h.length < 2) return null;
  const ns = "http://www.w3.org/2000/svg";
  const w = 60, hh = 14;
  const max = Math.max(...h.map((s) => s.rss)), min = Math.min(...h.map((s) => s.rss));
  const span = max - min || 1;
  const pts = h.map((s, i) =>
    ((i * w) / (h.length - 1)).toFixed(1) + "," + (hh - 1 - ((s.rss - min) / span) * (hh - 2)).toFixed(1));
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("class", "spark");
  svg.setAttribute("width", w);
  svg.setAttribute("height", hh);
  svg.setAttribute("viewBox", "0 0 " + w + " " + hh);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", pts.join(" "));
  svg.appendChild(line);
  return svg;
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function draw() {
  const body = document.querySelector("#slots tbody");
  const rows = [];
  let bad = 0;
  for (const r of slots) {
    const tr = document.createElement("tr");
    tr.dataset.slot = r.name;
    if (r.name === selected) tr.className = "sel";
    cell(tr, r.name);
    const st = cell(tr, "");
    const pill = document.createElement("span");
    pill.className = "pill s-" + r.state + (r.desired === "up" ? " wanted" : "");
    pill.textContent = r.state;
    st.appendChild(pill);
    cell(tr, ready(r));
    cell(tr, r.state === "up" ? secs(r.since_s) : "-", "wide num");
    cell(tr, r.deaths == null ? "-" : String(r.deaths), "wide num");
    cell(tr, lastExit(r.last_exit), "wide");
    cell(tr, r.usage ? cpu(r.name) : "-", "wide num");
    const mem = cell(tr, r.usage ? bytes(r.usage.rss_bytes) : "-", "num");
    const s = r.usage && spark(r.name);
    if (s) mem.appendChild(s);
    cell(tr, why(r), "why");
    tr.addEventListener("click", () => select(r.name));
    rows.push(tr);
    if (r.state === "failed" || r.state === "missing" || r.state === "unsupervised") bad++;
  }
  body.replaceChildren(...rows);
  $("summary").textContent = slots.length + " slots" + (bad ? ", " + bad + " failed" : "");
  detail();
}

function detail() {
  const r = slots.find((s) => s.name === selected);
  $("detail").hidden = !r;
  if (!r) return;
  $("dname").textContent = r.name;
  const deps = [];
  if (r.waiting_for) deps.push("waiting for " + r.waiting_for);
  if (r.blocked_by && r.blocked_by.length) deps.push("blocked by " + r.blocked_by.join(", "));
  $("dwhy").textContent = [r.state, why(r)].concat(deps).filter(Boolean).join(" · ");
  for (const b of document.querySelectorAll("#controls button")) b.disabled = !token();
}

async function refresh() {
  const res = await fetch("/v1/slots", { cache: "no-store" });
  if (!res.ok) return;
  const doc = await res.json();
  record(doc);
  slots = doc.slots;
  draw();
}

function soon() {
  if (timer) return;
  timer = setTimeout(() => {
    timer = null;
    refresh().catch(() => {});
  }, 100);
}

async function showLog() {
  const r = slots.find((s) => s.name === selected);
  const log = $("log");
  if (!r) return;
  if (!r.log_dir) { log.textContent = "(no log dir: its output goes to the container's own)"; return; }
  if (!token()) { log.textContent = "(enter the token to see its log)"; return; }
  const res = await fetch("/v1/slots/" + encodeURIComponent(r.name) + "/logs?lines=100",
    { headers: auth(), cache: "no-store" });
  log.textContent = res.ok ? await res.text() : "(" + res.status + ": " + (await res.text()).trim() + ")";
  log.scrollTop = log.scrollHeight;
}

function select(name) {
  selected = name;
  $("said").textContent = "";
  draw();
  showLog().catch(() => {});
}

async function act(op) {
  if (!selected || !confirm(op + " " + selected + "?")) return;
  $("said").textContent = op + "…";
  const res = await fetch("/v1/slots/" + encodeURIComponent(selected) + "/" + op,
    { method: "POST", headers: auth() });
  $("said").textContent = op + ": " + (res.ok ? "done" : res.status + " " + (await res.text()).trim());
  await refresh();
}

function tokenUi() {
  $("forget").hidden = !token();
  $("token").value = "";
  $("token").placeholder = token() ? "token set (this tab only)" : "token (for logs and control)";
}

function start() {
  $("tokenform").addEventListener("submit", (e) => {
    e.preventDefault();
    const t = $("token").value.trim();
    if (t) sessionStorage.setItem(KEY, t);
    tokenUi();
    draw();
    showLog().catch(() => {});
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY);
    tokenUi();
    draw();
    showLog().catch(() => {});
  });
  for (const b of document.querySelectorAll("#controls button")) {
    b.addEventListener("click", () => act(b.dataset.op).catch(() => {}));
  }
  tokenUi();
  const live = $("live");
  const es = new EventSource("/v1/events");
  es.onopen = () => { live.textContent = "live"; live.className = "pill live"; soon(); };
  es.onerror = () => { live.textContent = "reconnecting"; live.className = "pill reconnecting"; };
  es.onmessage = (m) => {
    soon();
    try {
      if (JSON.parse(m.data).slot === selected) showLog().catch(() => {});
    } catch (_) { /* not an event record: nothing to do */ }
  };
  refresh().catch(() => {});
  setInterval(() => refresh().catch(() => {}), 5000);
}

start();
