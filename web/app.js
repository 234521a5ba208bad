// hq's dashboard: a page that reads the controller's REST API (/slurm/v0.0.43 and /hq/v1)
// with the user's token (from `hq dashboard`'s URL, kept in this tab's sessionStorage) and
// shows the queue, the nodes, a job, and the scheduler's recent passes, refreshed every
// two seconds. Text from the cluster is always set as text, never parsed as HTML.
"use strict";

const API = "/slurm/v0.0.43";
const REFRESH_MS = 2000;
let me = null;          // {user, uid, admin, cluster}
let timer = null;
let renderSeq = 0;

// ---- small DOM and HTTP helpers ----
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "style") e.style.cssText = v;
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}

// Puts `parts` (nulls left out) in `main`.
function show(main, ...parts) { main.replaceChildren(...parts.flat(Infinity).filter((p) => p !== null && p !== undefined)); }

function token() { return sessionStorage.getItem("hq-token") || ""; }

class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path, options = {}) {
  const headers = { "X-SLURM-USER-TOKEN": token() };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method: options.method || "GET", headers,
                                body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  let doc = null;
  try { doc = await r.json(); } catch (e) { doc = null; }
  if (!r.ok) {
    const why = doc && doc.errors && doc.errors.length ? (doc.errors[0].description || doc.errors[0].error) : r.statusText;
    throw new HttpError(r.status, why);
  }
  return doc;
}

let statusKeepUntil = 0;  // an action's outcome stays a few seconds; a refresh's error until the next success

function setStatus(text, isError, keepMs) {
  const s = document.getElementById("status");
  s.textContent = text || "";
  s.className = "status" + (isError ? " error" : "");
  statusKeepUntil = keepMs ? Date.now() + keepMs : 0;
}

function fmtTime(t) {
  if (!t) return "";
  const d = new Date(t * 1000);
  return d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function fmtDuration(s) {
  if (s < 0) s = 0;
  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60), sec = s % 60;
  const two = (n) => String(n).padStart(2, "0");
  return (d ? d + "-" : "") + (d || h ? two(h) + ":" : "") + two(m) + ":" + two(sec);
}

function noVal(v) { return v && v.set ? v.number : null; }

// ---- the login when there is no token ----
function showLogin(message) {
  const input = el("input", { type: "password", id: "token-input", placeholder: "SLURM_JWT=... from hq token" });
  const go = () => {
    const t = input.value.trim().replace(/^SLURM_JWT=/, "");
    if (t) { sessionStorage.setItem("hq-token", t); me = null; route(); }
  };
  show(document.getElementById("main"), el("div", { class: "panel login" },
    el("h2", {}, "Sign in"),
    el("p", {}, "Paste a token printed by ", el("code", {}, "hq token"), " (or open the URL ", el("code", {}, "hq dashboard"), " prints)."),
    message ? el("p", { class: "error" }, message) : null,
    input, el("button", { onclick: go }, "Sign in")));
}

// ---- actions ----
async function act(label, fn) {
  try {
    setStatus(label + "…", false, 60000);
    await fn();
    setStatus(label + ": done", false, 5000);
    refreshNow();
  } catch (e) {
    setStatus(label + ": " + e.message, true, 10000);
  }
}

function mayAct(job) { return me && (me.admin || job.user === me.user); }

// A job's id as Slurm shows it and the API takes it: "123", or "123_4" for an array task
// (an array's first task has the array's own id, which would name every task).
function jobRef(job) { return job.array_job_id ? `${job.array_job_id}_${job.array_task_id}` : String(job.job_id); }

function jobActions(job) {
  if (!mayAct(job) || !["PENDING", "RUNNING", "SUSPENDED"].includes(job.state)) return el("span");
  const id = jobRef(job);
  const buttons = [];
  if (job.state === "PENDING") {
    if (job.hold) buttons.push(el("button", { class: "release", onclick: () => act("release " + id, () => api(`${API}/job/${id}`, { method: "POST", body: { hold: false } })) }, "Release"));
    else buttons.push(el("button", { class: "hold", onclick: () => act("hold " + id, () => api(`${API}/job/${id}`, { method: "POST", body: { hold: true } })) }, "Hold"));
  }
  buttons.push(el("button", { class: "cancel danger", onclick: () => {
    if (confirm(`Cancel job ${id}?`)) act("cancel " + id, () => api(`${API}/job/${id}`, { method: "DELETE" }));
  } }, "Cancel"));
  return el("span", { class: "actions" }, buttons);
}

// ---- the queue ----
const queueFilter = { state: "", user: "", partition: "", text: "" };
let lastQueue = null;   // the last listing: partition and text filter it here, without asking again
let typing = null;      // the user and state filters ask again, once typing pauses

function queueFilters() {
  const input = (key, placeholder, local) => el("input", { value: queueFilter[key], placeholder, "data-filter": key,
    oninput: (e) => {
      queueFilter[key] = e.target.value;
      if (local) return drawQueue();
      clearTimeout(typing);
      typing = setTimeout(refreshNow, 300);
    } });
  const states = ["", "all", "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT"];
  const select = el("select", { "data-filter": "state", onchange: (e) => { queueFilter.state = e.target.value; refreshNow(); } },
    states.map((s) => el("option", { value: s, selected: s === queueFilter.state }, s || "active")));
  return el("div", { class: "filters", id: "queue-filters" }, "State", select, input("user", "user", false),
            input("partition", "partition", true), input("text", "name or id contains", true));
}

function jobMatches(job) {
  const f = queueFilter;
  if (f.partition && job.partition !== f.partition) return false;
  if (f.text && !(job.name.includes(f.text) || jobRef(job).includes(f.text))) return false;
  return true;
}

// The rows of the last listing, into the queue view's results (its filters stay as they are,
// focus and all).
function drawQueue() {
  const results = document.getElementById("queue-results");
  if (!results || !lastQueue) return;
  const doc = lastQueue;
  const rows = doc.jobs.filter(jobMatches).map((j) => {
    const running = j.state === "RUNNING" || j.state === "SUSPENDED";
    const time = running ? fmtDuration(doc.now - j.start_time) : (j.state === "PENDING" && j.expected_start ? "starts " + fmtTime(j.expected_start) : "");
    const where = j.state === "PENDING" ? "(" + j.reason + ")" : j.nodes;
    const id = jobRef(j);
    return el("tr", { "data-job": id, "data-state": j.state },
      el("td", {}, el("a", { href: "#/job/" + id }, id)), el("td", {}, j.partition), el("td", {}, j.name),
      el("td", {}, j.user), el("td", {}, el("span", { class: "badge " + j.state }, j.state + (j.hold ? " (held)" : ""))),
      el("td", {}, time), el("td", {}, String(j.node_count)), el("td", { class: "wrap" }, where), el("td", {}, jobActions(j)));
  });
  const table = el("table", { id: "queue" },
    el("thead", {}, el("tr", {}, ["Job", "Partition", "Name", "User", "State", "Time", "Nodes", "Nodelist (reason)", ""].map((h) => el("th", {}, h)))),
    el("tbody", {}, rows));
  document.getElementById("queue-title").textContent = `Queue (${rows.length} jobs)`;
  show(results, rows.length ? table : el("p", { class: "muted", id: "queue-empty" }, "No jobs."));
}

async function renderQueue(main, seq) {
  const params = new URLSearchParams();
  if (queueFilter.state) params.set("state", queueFilter.state);
  if (queueFilter.user) params.set("user", queueFilter.user);
  const doc = await api("/hq/v1/jobs?" + params.toString());
  if (seq !== renderSeq) return;
  lastQueue = doc;
  if (!document.getElementById("queue-results"))  // built once per visit; refreshes redraw the results only
    show(main, el("h2", { id: "queue-title" }, "Queue"), queueFilters(), el("div", { id: "queue-results" }));
  drawQueue();
}

// ---- the nodes ----
let nodeGroup = "partition";
let selectedNode = "";

function nodeStateClass(n) {
  const s = n.state || [];
  if (s.includes("DRAIN")) return "drain";
  if (s.includes("DOWN") || s.includes("NOT_RESPONDING")) return "down";
  if (s.includes("ALLOCATED")) return "allocated";
  if (s.includes("MIXED")) return "mixed";
  return "idle";
}

function nodeTile(n) {
  const load = n.cpus ? n.alloc_cpus / n.cpus : 0;
  const cls = "node state-" + nodeStateClass(n) + (me && me.admin ? " admin" : "") + (n.name === selectedNode ? " selected" : "");
  const gpus = /gpu[^,]*:(\d+)/.exec(n.gres || "");
  return el("div", { class: cls, "data-node": n.name, "data-state": nodeStateClass(n),
                     title: `${n.name}: ${n.state.join("+")}${n.reason ? " (" + n.reason + ")" : ""}\n${n.alloc_cpus}/${n.cpus} CPUs, ${n.alloc_memory}/${n.real_memory} MiB`,
                     onclick: () => { if (me && me.admin) { selectedNode = n.name; refreshNow(); } } },
    el("div", { class: "name" }, n.name), el("div", {}, `${n.alloc_cpus}/${n.cpus} cpu`), gpus ? el("div", {}, gpus[1] + " gpu") : null,
    el("div", { class: "load", style: `width:${Math.round(load * 100)}%` }));
}

function nodePanel(n) {
  if (!n || !me || !me.admin) return null;
  const drained = n.state.includes("DRAIN");
  return el("div", { class: "panel", id: "node-panel" }, el("strong", {}, n.name), " ", n.state.join("+"), n.reason ? ` (${n.reason})` : "", " ",
    drained ? el("button", { class: "resume", onclick: () => act("resume " + n.name, () => api(`${API}/node/${n.name}`, { method: "POST", body: { state: ["RESUME"] } })) }, "Resume")
            : el("button", { class: "drain danger", onclick: () => {
                const reason = prompt(`Drain ${n.name}: reason`, "maintenance");
                if (reason) act("drain " + n.name, () => api(`${API}/node/${n.name}`, { method: "POST", body: { state: ["DRAIN"], reason } }));
              } }, "Drain"));
}

async function renderNodes(main, seq) {
  const doc = await api(`${API}/nodes/`);
  if (seq !== renderSeq) return;
  const groups = new Map();
  for (const n of doc.nodes) {
    const keys = nodeGroup === "partition" ? (n.partitions.length ? n.partitions : ["(no partition)"]) : [n.topology || "(no block)"];
    for (const k of keys) { if (!groups.has(k)) groups.set(k, []); groups.get(k).push(n); }
  }
  if (!document.getElementById("node-results")) {  // built once per visit: the group select stays open
    const select = el("select", { id: "node-group", onchange: (e) => { nodeGroup = e.target.value; refreshNow(); } },
      el("option", { value: "partition", selected: nodeGroup === "partition" }, "by partition"),
      el("option", { value: "block", selected: nodeGroup === "block" }, "by topology block"));
    const legend = el("div", { class: "legend" }, [["idle", "--idle"], ["mixed", "--mixed"], ["allocated", "--alloc"], ["drain", "--drain"], ["down", "--down"]]
      .map(([t, v]) => el("span", { style: `--c: var(${v})` }, t)));
    show(main, el("h2", { id: "node-title" }, "Nodes"), el("div", { class: "filters" }, "Group", select), legend, el("div", { id: "node-results" }));
  }
  const sections = [...groups.entries()].map(([name, nodes]) => {
    const idle = nodes.filter((n) => nodeStateClass(n) === "idle").length;
    return el("div", { class: "group", "data-group": name }, el("h3", {}, `${name} `, el("span", { class: "muted" }, `${idle}/${nodes.length} idle`)),
              el("div", { class: "grid" }, nodes.map(nodeTile)));
  });
  document.getElementById("node-title").textContent = `Nodes (${doc.nodes.length})`;
  show(document.getElementById("node-results"), nodePanel(doc.nodes.find((n) => n.name === selectedNode)), el("div", { class: "groups" }, sections));
}

// ---- one job ----
async function renderJob(main, seq, id) {
  const [doc, hq] = await Promise.all([api(`${API}/job/${id}`), api(`/hq/v1/jobs/${id}`)]);
  if (seq !== renderSeq) return true;
  const j = doc.jobs[0], h = hq.jobs[0];
  const state = j.job_state[0];
  const kv = (pairs) => el("dl", { class: "kv" }, pairs.filter(([, v]) => v !== "" && v !== null && v !== undefined).map(([k, v]) => [el("dt", {}, k), el("dd", {}, String(v))]));
  const limit = j.time_limit.infinite ? "UNLIMITED" : (noVal(j.time_limit) !== null ? noVal(j.time_limit) + " min" : "");
  const events = [["submitted", noVal(j.submit_time)], ["eligible", noVal(j.eligible_time)], ["started", h.start_time && state !== "PENDING" ? h.start_time : null],
                  ["expected start", state === "PENDING" ? h.expected_start : null], ["suspended", noVal(j.suspend_time)], ["ended", h.end_time && !["PENDING", "RUNNING", "SUSPENDED"].includes(state) ? h.end_time : null]]
    .filter(([, t]) => t);
  const parts = [el("h2", {}, `Job ${id} `, el("span", { class: "badge " + state }, state), " ", jobActions(h)),
    el("div", { class: "panel" }, kv([["name", j.name], ["user", j.user_name], ["account", j.account], ["partition", j.partition],
      ["reason", state === "PENDING" ? j.state_reason : ""], ["nodes", j.nodes], ["scheduled nodes", j.scheduled_nodes], ["CPUs", noVal(j.cpus)],
      ["node count", noVal(j.node_count)], ["time limit", limit], ["requested", j.tres_req_str], ["allocated", j.tres_alloc_str],
      ["working directory", j.current_working_directory], ["stdout", j.standard_output], ["stderr", j.standard_error !== j.standard_output ? j.standard_error : ""],
      ["dependency", j.dependency], ["exit code", state === "PENDING" || state === "RUNNING" ? "" : `${noVal(j.exit_code.return_code) ?? ""} ${j.exit_code.status.join(",")}`],
      ["priority", noVal(j.priority)]])),
    el("h3", {}, "State history"), el("div", { class: "timeline", id: "timeline" }, events.map(([k, t]) => el("div", {}, el("strong", {}, k), el("br"), fmtTime(t))))];
  if (state === "PENDING") {
    const ex = await api(`/hq/v1/jobs/${id}/explain`).catch((e) => ({ lines: [e.message] }));
    parts.push(el("h3", {}, "Why it waits (hq explain)"), el("pre", { id: "explain" }, ex.lines.join("\n")));
  }
  if (me && (me.admin || j.user_name === me.user) && state !== "PENDING") {
    const out = await api(`/hq/v1/jobs/${id}/output`).catch((e) => ({ tail: "", error: e.message }));
    parts.push(el("h3", {}, "Output (last 16 KiB)"), out.error ? el("p", { class: "muted", id: "output-missing" }, out.error) : el("pre", { id: "output" }, out.tail));
  }
  if (seq !== renderSeq) return true;
  const old = document.getElementById("output");
  const atBottom = !old || old.scrollTop + old.clientHeight >= old.scrollHeight - 4;
  const kept = old ? old.scrollTop : 0;
  show(main, ...parts);
  const pre = document.getElementById("output");
  if (pre) pre.scrollTop = atBottom ? pre.scrollHeight : kept;  // the newest output, unless the reader scrolled up
  return ["PENDING", "RUNNING", "SUSPENDED"].includes(state);  // an ended job changes no more
}

// ---- the scheduler ----
async function renderScheduler(main, seq) {
  const doc = await api("/hq/v1/scheduler");
  if (seq !== renderSeq) return;
  const passes = doc.passes.slice().reverse();
  const most = Math.max(1, ...passes.map((p) => p.micros));
  const rows = passes.map((p) => el("tr", {}, el("td", {}, fmtTime(p.at)), el("td", {}, p.full ? "full (backfill)" : "quick"),
    el("td", {}, (p.micros / 1000).toFixed(2) + " ms"), el("td", { style: "width:30%" }, el("div", { class: "bar", style: `width:${Math.max(1, Math.round(p.micros / most * 100))}%` })),
    el("td", {}, String(p.considered)), el("td", {}, String(p.started)), el("td", {}, String(p.reserved)), el("td", {}, String(p.preempted))));
  const t = doc.totals;
  show(main, el("h2", {}, "Scheduler"),
    el("div", { class: "panel" }, `${t.passes} passes (${t.backfill_passes} full); jobs submitted ${t.jobs_submitted}, started ${t.jobs_started}, completed ${t.jobs_completed}, cancelled ${t.jobs_canceled}, failed ${t.jobs_failed}`),
    el("h3", {}, "Recent passes"),
    el("table", { id: "passes" }, el("thead", {}, el("tr", {}, ["When", "Kind", "Took", "", "Looked at", "Started", "Reserved", "Preempted"].map((h) => el("th", {}, h)))), el("tbody", {}, rows)));
}

// ---- routing and refresh ----
function currentView() {
  const h = location.hash.replace(/^#\/?/, "");
  const [view, arg] = h.split("/");
  return { view: view || "queue", arg };
}

async function route() {
  if (timer) clearTimeout(timer);
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (m) {  // a link from hq token --url: this tab now acts as the token's user
    sessionStorage.setItem("hq-token", decodeURIComponent(m[1]));
    me = null;
    history.replaceState(null, "", "#/queue");
  }
  if (!token()) return showLogin();
  const main = document.getElementById("main");
  const { view, arg } = currentView();
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  const seq = ++renderSeq;
  let again = true;
  try {
    if (!me) {
      me = await api("/hq/v1/whoami");
      document.getElementById("who").textContent = `${me.user}${me.admin ? " (admin)" : ""} · ${me.cluster}`;
    }
    if (view === "nodes") await renderNodes(main, seq);
    else if (view === "job" && /^\d+(_\d+)?$/.test(arg || "")) again = await renderJob(main, seq, arg);
    else if (view === "scheduler") await renderScheduler(main, seq);
    else await renderQueue(main, seq);
    if (Date.now() > statusKeepUntil) setStatus("");
  } catch (e) {
    if (e.status === 401) {
      ++renderSeq;  // nothing still on its way paints over the sign-in
      sessionStorage.removeItem("hq-token");
      me = null;
      return showLogin(e.message);
    }
    setStatus(e.message, true);
  }
  if (seq === renderSeq && again) timer = setTimeout(route, REFRESH_MS);
}

function refreshNow() { route(); }

window.addEventListener("hashchange", () => { if (currentView().view !== "nodes") selectedNode = ""; route(); });
route();
