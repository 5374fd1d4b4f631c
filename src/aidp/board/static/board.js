// aidp board: the page's own script. It builds every element with createElement and
// sets every value from a task as text (textContent, setAttribute): nothing from the
// tasklist is ever read as markup. It talks only to the server that served it.
"use strict";

const STATUSES = ["pending", "in_progress", "done", "abandoned"];
const TITLES = {pending: "Pending", in_progress: "In progress", done: "Done", abandoned: "Abandoned"};
const RANK = {high: 0, medium: 1, low: 2};
const PAGE = 200; // cards drawn per column before "Show more"

const state = {
  projects: new Map(), // repo -> {meta, cards: Map(id -> card)}
  filters: {q: "", tag: "", priority: "", holder: "", type: ""},
  limits: new Map(), // "repo\u0000status" -> cards drawn
  focus: null, // {repo, id}: the card that has the keyboard
  lifted: null, // {repo, id, from, to}: the card picked up with Space
  detail: null, // {repo, id}
  adding: null, // repo whose add form is open
};

// --- small helpers --------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child); // a string becomes a text node
  }
  return el;
}

function $(id) { return document.getElementById(id); }

function shortId(id) { return String(id).split("_").pop().slice(0, 8); }

function stamp(text) { const t = Date.parse(text); return Number.isNaN(t) ? 0 : t; }

// What sorting and filtering read of a card, worked out once when it arrives.
function prep(c) {
  c.$rank = RANK[c.priority] ?? 1;
  c.$created = stamp(c.created_at);
  c.$claimed = stamp(c.claimed_at || c.started_at);
  c.$closed = stamp(c.completed_at || c.abandoned_at || c.updated_at);
  c.$hay = [c.description, c.id, c.assignee || "", c.session || "", ...(c.tags || [])]
    .join("\n").toLowerCase();
  return c;
}

function ago(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const hours = Math.round(m / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.round(hours / 24)}d`;
}

function when(text) {
  const t = stamp(text);
  if (!t) return text || "";
  const d = Date.now() - t;
  return d >= 0 ? `${ago(d)} ago` : `in ${ago(d)}`;
}

function leaseText(card) {
  if (!card.lease_until) return "";
  const left = stamp(card.lease_until) - Date.now();
  if (card.stale || left <= 0) return `lease ran out ${ago(left)} ago`;
  return `lease ${ago(left)} left`;
}

let toastTimer = null;
function toast(message, error) {
  const el = $("toast");
  el.textContent = message;
  el.className = "toast show" + (error ? " error" : "");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.className = "toast"; }, error ? 7000 : 2500);
}

function say(message) { $("sr").textContent = message; }

// --- the server -----------------------------------------------------------------------

async function post(action, payload) {
  let response;
  try {
    response = await fetch(`api/${action}`, {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(payload), credentials: "same-origin",
    });
  } catch (err) {
    toast("The board's server cannot be reached: is aidp board still running?", true);
    return null;
  }
  let data = {};
  try { data = await response.json(); } catch (err) { data = {error: `HTTP ${response.status}`}; }
  if (!response.ok) { toast(data.error || `HTTP ${response.status}`, true); return null; }
  if (data.message) toast(data.message, false);
  return data;
}

// A browser keeps at most six connections to one host and port, and each page's stream
// holds one: a seventh page of the board would never load, and an edit from any of them
// would wait forever. So a hidden page (a tab in the background) lets its stream go
// after a while, and takes it again, with the whole board, when it is shown.
const HIDDEN_GRACE = 5000; // ms
let source = null;
let hiddenTimer = 0;

function disconnect() {
  if (!source) return;
  source.close();
  source = null;
  const live = $("live");
  live.dataset.state = "paused";
  live.textContent = "paused (hidden)";
}

function onVisibility() {
  clearTimeout(hiddenTimer);
  if (document.visibilityState === "hidden") hiddenTimer = setTimeout(disconnect, HIDDEN_GRACE);
  else connect();
}

function connect() {
  if (source) return;
  source = new EventSource("events");
  const live = $("live");
  source.addEventListener("open", () => { live.dataset.state = "live"; live.textContent = "live"; });
  source.addEventListener("error", () => {
    live.dataset.state = "lost"; live.textContent = "reconnecting…";
  });
  source.addEventListener("board", (event) => {
    const data = JSON.parse(event.data);
    state.projects = new Map();
    for (const p of data.projects) {
      state.projects.set(p.meta.repo, {meta: p.meta, cards: new Map(p.cards.map((c) => [c.id, prep(c)]))});
    }
    drawAll();
  });
  source.addEventListener("rest", (event) => { // the cards the columns did not show first
    const data = JSON.parse(event.data);
    for (const p of data.projects) {
      const project = state.projects.get(p.meta.repo);
      if (!project) continue;
      for (const c of p.cards) if (!project.cards.has(c.id)) project.cards.set(c.id, prep(c));
      schedule(p.meta.repo);
    }
  });
  source.addEventListener("patch", (event) => {
    const data = JSON.parse(event.data);
    const project = state.projects.get(data.meta.repo);
    if (!project) return;
    project.meta = data.meta;
    for (const id of data.remove) project.cards.delete(id);
    for (const c of data.upsert) project.cards.set(c.id, prep(c));
    schedule(data.meta.repo);
    if (state.detail && state.detail.repo === data.meta.repo &&
        (data.upsert.some((c) => c.id === state.detail.id) || data.remove.includes(state.detail.id))) {
      refreshDetail();
    }
  });
}

// --- filters --------------------------------------------------------------------------

function matches(card) {
  const f = state.filters;
  if (f.priority && card.priority !== f.priority) return false;
  if (f.type && (card.task_type || "task") !== f.type) return false;
  if (f.tag && !(card.tags || []).includes(f.tag)) return false;
  if (f.holder && (card.assignee || "") !== f.holder) return false;
  if (f.q && !f.q.split(/\s+/).every((word) => card.$hay.includes(word))) return false;
  return true;
}

function fillSelect(select, values, first) {
  const current = select.value;
  select.replaceChildren(h("option", {value: "", text: first}),
    ...values.map((v) => h("option", {value: v, text: v})));
  select.value = values.includes(current) ? current : "";
  if (select.value !== current) state.filters[select.dataset.key] = select.value;
}

function refreshChoices() {
  const tags = new Set();
  const holders = new Set();
  for (const project of state.projects.values()) {
    for (const card of project.cards.values()) {
      for (const tag of card.tags || []) tags.add(tag);
      if (card.assignee) holders.add(card.assignee);
    }
  }
  fillSelect($("f-tag"), [...tags].sort(), "any tag");
  fillSelect($("f-holder"), [...holders].sort(), "anyone");
}

// --- drawing --------------------------------------------------------------------------

const pending = new Set();
let frame = 0;
function schedule(repo) {
  pending.add(repo);
  if (!frame) frame = requestAnimationFrame(() => {
    frame = 0;
    refreshChoices();
    for (const r of pending) drawProject(r);
    pending.clear();
    countShown();
  });
}

function drawAll() {
  const main = $("projects");
  main.replaceChildren();
  main.removeAttribute("aria-busy");
  refreshChoices();
  for (const repo of state.projects.keys()) {
    main.append(h("section", {class: "project", "data-repo": repo}));
    drawProject(repo);
  }
  if (!state.projects.size) main.append(h("p", {class: "empty", text: "No project."}));
  countShown();
  if (!document.body.dataset.ready) document.body.dataset.readyAt = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
}

function sorted(cards, status) {
  if (status === "pending") {
    return cards.sort((a, b) => a.$rank - b.$rank || (b.ready ? 1 : 0) - (a.ready ? 1 : 0) ||
      a.$created - b.$created);
  }
  if (status === "in_progress") {
    return cards.sort((a, b) => (b.stale ? 1 : 0) - (a.stale ? 1 : 0) || a.$rank - b.$rank ||
      a.$claimed - b.$claimed);
  }
  return cards.sort((a, b) => b.$closed - a.$closed);
}

function columnsOf(project) {
  const out = Object.fromEntries(STATUSES.map((s) => [s, []]));
  const lifted = state.lifted && state.lifted.repo === project.meta.repo ? state.lifted : null;
  for (const card of project.cards.values()) {
    if (lifted && card.id === lifted.id) continue;
    if (!matches(card)) continue;
    (out[card.status] || (out[card.status] = [])).push(card);
  }
  for (const s of Object.keys(out)) sorted(out[s], s);
  if (lifted) {
    const card = project.cards.get(lifted.id);
    if (card && out[lifted.to]) out[lifted.to].unshift(card);
  }
  return out;
}

function drawProject(repo, force) {
  const project = state.projects.get(repo);
  const section = document.querySelector(`section.project[data-repo="${CSS.escape(repo)}"]`);
  if (!project || !section) return;
  const meta = project.meta;
  const active = document.activeElement;
  if (!force && active && section.contains(active) && active.matches("input, textarea, select")) {
    later.add(repo); // someone is typing in this project's form: after they leave it
    return;
  }
  const head = h("div", {class: "project-head"},
    h("h2", {text: meta.name}), h("span", {class: "repo-path", text: meta.repo}));
  const parts = [head];
  if (meta.error) parts.push(h("p", {class: "banner error", role: "alert", text: meta.error}));
  if (meta.damaged) {
    parts.push(h("p", {class: "banner", role: "alert"},
      `${meta.damaged} damaged line${meta.damaged === 1 ? "" : "s"} in .aidp/tasklist.jsonl `,
      "skipped (the board shows what the rest holds): the file needs ",
      h("code", {text: "aidp tasks repair"}), ` in ${meta.repo}.`));
  }
  parts.push(drawLane(project));
  const columns = columnsOf(project);
  const grid = h("div", {class: "columns"});
  for (const status of STATUSES) grid.append(drawColumn(project, status, columns[status] || []));
  parts.push(grid);
  section.replaceChildren(...parts);
  restoreFocus();
}

const later = new Set();
document.addEventListener("focusout", () => {
  setTimeout(() => {
    for (const repo of later) schedule(repo);
    later.clear();
  }, 0);
});

function drawColumn(project, status, cards) {
  const repo = project.meta.repo;
  const total = project.meta.counts[status] || 0;
  const key = `${repo}\u0000${status}`;
  const limit = state.limits.get(key) || PAGE;
  const filtered = Object.values(state.filters).some(Boolean);
  let label = cards.length.toLocaleString();
  if (!filtered && (status === "done" || status === "abandoned") && total > cards.length) {
    label = `${cards.length} recent of ${total.toLocaleString()}`;
  }
  const head = h("div", {class: "column-head"},
    h("span", {text: TITLES[status]}), h("span", {class: "count", text: label}));
  if (status === "pending") {
    head.append(h("button", {type: "button", "data-add": repo, text: "+ Add",
      onclick: () => { state.adding = state.adding === repo ? null : repo; drawProject(repo, true);
        const input = document.querySelector(`[data-repo="${CSS.escape(repo)}"] .add input`);
        if (input) input.focus(); }}));
  }
  const column = h("div", {class: "column", "data-column": status, role: "region",
    "aria-label": `${TITLES[status]}, ${label}`});
  column.addEventListener("dragover", (e) => { e.preventDefault(); column.classList.add("drop-target"); });
  column.addEventListener("dragleave", () => column.classList.remove("drop-target"));
  column.addEventListener("drop", (e) => {
    e.preventDefault();
    column.classList.remove("drop-target");
    const id = e.dataTransfer.getData("text/x-aidp-task") || e.dataTransfer.getData("text/plain");
    const card = project.cards.get(id);
    if (card) move(repo, card, status);
  });
  column.append(head);
  if (status === "pending" && state.adding === repo) column.append(addForm(repo));
  const list = h("ul", {class: "cards"});
  for (const card of cards.slice(0, limit)) list.append(h("li", {}, cardEl(repo, card)));
  column.append(list);
  if (!cards.length) list.append(h("li", {class: "empty", text: filtered ? "No match" : "Nothing here"}));
  if (cards.length > limit) {
    column.append(h("button", {type: "button", class: "more",
      text: `Show ${Math.min(PAGE, cards.length - limit)} more (${(cards.length - limit).toLocaleString()} not shown)`,
      onclick: () => { state.limits.set(key, limit + PAGE); drawProject(repo); }}));
  }
  return column;
}

function cardEl(repo, card) {
  const lifted = state.lifted && state.lifted.repo === repo && state.lifted.id === card.id;
  const el = h("article", {
    class: "card" + (lifted ? " lifted" : "") +
      (state.detail && state.detail.repo === repo && state.detail.id === card.id ? " selected" : ""),
    "data-task-id": card.id, "data-status": card.status, "data-priority": card.priority,
    "data-stale": card.stale ? "true" : null, tabindex: "-1", draggable: "true",
    "aria-grabbed": lifted ? "true" : "false",
  });
  el.addEventListener("dragstart", (e) => {
    e.dataTransfer.setData("text/x-aidp-task", card.id);
    e.dataTransfer.setData("text/plain", card.id);
    e.dataTransfer.effectAllowed = "move";
  });
  el.addEventListener("click", () => { focusCard(repo, card.id); openDetail(repo, card.id); });
  el.addEventListener("focus", () => { state.focus = {repo, id: card.id}; });
  const meta = h("div", {class: "meta"}, h("span", {class: "id", text: shortId(card.id)}));
  if (card.priority === "high") meta.append(h("span", {class: "chip high", text: "high"}));
  else if (card.priority === "low") meta.append(h("span", {class: "chip", text: "low"}));
  if (card.task_type && card.task_type !== "task") meta.append(h("span", {class: "chip type", text: card.task_type}));
  if (card.ready) meta.append(h("span", {class: "chip ready", text: "ready"}));
  if (card.waits) {
    const project = state.projects.get(repo);
    const names = card.waits.map((id) => {
      const other = project && project.cards.get(id);
      return other ? `${shortId(id)} ${other.description}` : shortId(id);
    });
    meta.append(h("span", {class: "chip waits", title: `Waits on: ${names.join("; ")}`,
      text: `waits on ${card.waits.length}`}));
  }
  if (card.decision) meta.append(h("span", {class: "chip decision", text: "decision"}));
  if (card.person) meta.append(h("span", {class: "chip person", text: "waits on a person"}));
  if (card.stale) meta.append(h("span", {class: "chip stale", text: "stale"}));
  for (const tag of card.tags || []) {
    if (!(card.decision && tag === "decision")) meta.append(h("span", {class: "chip", text: `#${tag}`}));
  }
  if (card.notes) meta.append(h("span", {text: `${card.notes} note${card.notes === 1 ? "" : "s"}`}));
  el.append(h("div", {class: "title", text: card.description}), meta);
  if (card.assignee) {
    el.append(h("div", {class: "holder"}, `@${card.assignee}`,
      card.lease_until ? h("span", {class: "lease", "data-lease": card.lease_until, text: ` · ${leaseText(card)}`}) : null));
  }
  if (card.plan) {
    const p = card.plan;
    const bar = h("span", {class: "bar", title: `${p.done} of ${p.total} items done`}, h("span"));
    bar.firstChild.style.width = `${p.total ? Math.round((100 * p.done) / p.total) : 0}%`;
    el.append(h("div", {class: "plan", title: `Plan of session ${p.session}`}, bar,
      h("span", {class: "progress", text: `${p.done}/${p.total}`}),
      p.current ? h("span", {class: "current", text: p.paused ? `paused: ${p.reason || p.current}` : p.current}) : null));
  }
  const why = card.status === "abandoned" ? card.abandoned_reason : card.status === "done" ? card.close_reason : null;
  if (why) el.append(h("div", {class: "reason", text: why}));
  return el;
}

function drawLane(project) {
  const meta = project.meta;
  const lane = h("section", {class: "lane", "data-lane": "person", "aria-label": "Waiting on a person"},
    h("h3", {text: "Waiting on a person"}));
  const list = h("ul");
  for (const plan of meta.paused || []) {
    list.append(h("li", {"data-lane-session": plan.session},
      h("span", {class: "what", text: "Paused plan "}), `${plan.session}`,
      plan.owner ? ` (${plan.owner})` : "", `: ${plan.reason || "no reason given"}`,
      h("span", {class: "quiet", text: ` · ${plan.done}/${plan.total} · ${when(plan.updated_at)}`})));
  }
  for (const id of meta.decisions || []) {
    const card = project.cards.get(id);
    if (!card) continue;
    const waiting = [...project.cards.values()].filter((c) => c.waits && c.waits.includes(id)).length;
    list.append(h("li", {"data-lane-task": id},
      h("span", {class: "what", text: "Decision "}),
      h("button", {type: "button", class: "link", text: card.description,
        onclick: () => openDetail(meta.repo, id)}),
      h("span", {class: "quiet", text: waiting ? ` · ${waiting} task${waiting === 1 ? " waits" : "s wait"} on it` : ""})));
  }
  if (!list.childElementCount) {
    lane.classList.add("calm");
    lane.firstChild.append(h("span", {class: "quiet", text: " · nothing now (a paused plan, or a task tagged decision, would be here)"}));
  } else {
    lane.append(list);
  }
  return lane;
}

function countShown() {
  let shown = 0;
  let all = 0;
  for (const project of state.projects.values()) {
    for (const card of project.cards.values()) { all += 1; if (matches(card)) shown += 1; }
  }
  $("shown").textContent = Object.values(state.filters).some(Boolean) ? `${shown.toLocaleString()} of ${all.toLocaleString()}` : "";
}

function addForm(repo) {
  const description = h("input", {type: "text", maxlength: "200", placeholder: "What needs doing?", "aria-label": "Description", required: true});
  const priority = h("select", {"aria-label": "Priority"},
    h("option", {value: "medium", text: "medium"}), h("option", {value: "high", text: "high"}),
    h("option", {value: "low", text: "low"}));
  const tags = h("input", {type: "text", placeholder: "tags, comma separated", "aria-label": "Tags"});
  const submit = async () => {
    if (!description.value.trim()) { description.focus(); return; }
    const done = await post("add", {repo, description: description.value, priority: priority.value, tags: tags.value});
    if (done) { state.adding = null; drawProject(repo, true); }
  };
  const form = h("div", {class: "add", role: "form", "aria-label": "Add a task"}, description,
    h("div", {class: "row"}, priority, tags),
    h("div", {class: "row"}, h("button", {type: "button", class: "primary", text: "Add", onclick: submit}),
      h("button", {type: "button", text: "Cancel", onclick: () => { state.adding = null; drawProject(repo, true); }})));
  form.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.tagName === "INPUT") { e.preventDefault(); submit(); }
    if (e.key === "Escape") { state.adding = null; drawProject(repo, true); }
  });
  return form;
}

// --- moving cards ---------------------------------------------------------------------

function askReason() {
  return new Promise((resolve) => {
    const modal = $("reason");
    const input = $("reason-text");
    input.value = "";
    modal.hidden = false;
    input.focus();
    const finish = (value) => {
      modal.hidden = true;
      $("reason-ok").onclick = $("reason-cancel").onclick = input.onkeydown = null;
      resolve(value);
    };
    $("reason-ok").onclick = () => finish(input.value.trim() || null);
    $("reason-cancel").onclick = () => finish(undefined);
    input.onkeydown = (e) => {
      if (e.key === "Enter") { e.preventDefault(); finish(input.value.trim() || null); }
      if (e.key === "Escape") { e.preventDefault(); finish(undefined); }
    };
  });
}

async function move(repo, card, status) {
  if (card.status === status) return;
  const payload = {repo, id: card.id, status, seen: {status: card.status}};
  if (status === "abandoned") {
    const reason = await askReason();
    if (reason === undefined) { focusCard(repo, card.id); return; }
    if (!reason) { toast("Abandoning a task needs a reason", true); return; }
    payload.reason = reason;
  }
  const before = card.status;
  card.status = status; // shown at once; the server's patch confirms it (or the error undoes it)
  schedule(repo);
  const done = await post("move", payload);
  if (!done) {
    const now = state.projects.get(repo).cards.get(card.id);
    if (now === card && card.status === status) card.status = before;
    schedule(repo);
  }
  say(done ? `Moved to ${TITLES[status]}` : "Not moved");
  focusCard(repo, card.id);
}

// --- the keyboard ---------------------------------------------------------------------

function cardElement(repo, id) {
  const section = document.querySelector(`section.project[data-repo="${CSS.escape(repo)}"]`);
  return section ? section.querySelector(`[data-task-id="${CSS.escape(id)}"]`) : null;
}

function focusCard(repo, id) {
  state.focus = {repo, id};
  const el = cardElement(repo, id);
  if (!el) return;
  for (const other of document.querySelectorAll('.card[tabindex="0"]')) other.tabIndex = -1;
  el.tabIndex = 0;
  el.focus({preventScroll: false});
}

function restoreFocus() {
  if (!state.focus) {
    const first = document.querySelector(".card");
    if (first && !document.querySelector('.card[tabindex="0"]')) first.tabIndex = 0;
    return;
  }
  const el = cardElement(state.focus.repo, state.focus.id);
  if (!el) return;
  el.tabIndex = 0;
  const active = document.activeElement;
  if (!active || active === document.body || active.classList.contains("card")) el.focus({preventScroll: true});
}

function neighbour(el, dx, dy) {
  const column = el.closest("[data-column]");
  const cards = [...column.querySelectorAll(".card")];
  const at = cards.indexOf(el);
  if (dy) return cards[at + dy] || null;
  const columns = [...el.closest(".columns").querySelectorAll("[data-column]")];
  let c = columns.indexOf(column) + dx;
  while (c >= 0 && c < columns.length) {
    const others = [...columns[c].querySelectorAll(".card")];
    if (others.length) return others[Math.min(at, others.length - 1)];
    c += dx;
  }
  return null;
}

document.addEventListener("keydown", (e) => {
  const target = e.target;
  const typing = target.matches && target.matches("input, textarea, select");
  if (e.key === "Escape" && !typing) {
    if (state.lifted) { const {repo, id} = state.lifted; state.lifted = null; drawProject(repo); focusCard(repo, id); say("Cancelled"); }
    else if (state.detail) closeDetail();
    return;
  }
  if (typing || !$("reason").hidden) return;
  if (e.key === "/") { e.preventDefault(); $("q").focus(); return; }
  const el = target.closest && target.closest(".card");
  if (!el) return;
  const repo = el.closest("[data-repo]").dataset.repo;
  const id = el.dataset.taskId;
  if (state.lifted) {
    const lifted = state.lifted;
    if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      const at = STATUSES.indexOf(lifted.to) + (e.key === "ArrowLeft" ? -1 : 1);
      if (at >= 0 && at < STATUSES.length) {
        lifted.to = STATUSES[at];
        drawProject(lifted.repo);
        focusCard(lifted.repo, lifted.id);
        say(`Over ${TITLES[lifted.to]}: Space drops it there`);
      }
    } else if (e.key === " " || e.key === "Enter") {
      e.preventDefault();
      state.lifted = null;
      const card = state.projects.get(lifted.repo).cards.get(lifted.id);
      drawProject(lifted.repo);
      if (card && lifted.to !== card.status) move(lifted.repo, card, lifted.to);
      else { focusCard(lifted.repo, lifted.id); say("Dropped where it was"); }
    } else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
      e.preventDefault();
    }
    return;
  }
  if (e.key === " ") {
    e.preventDefault();
    const card = state.projects.get(repo).cards.get(id);
    state.lifted = {repo, id, from: card.status, to: card.status};
    drawProject(repo);
    focusCard(repo, id);
    say(`Picked up ${card.description}: arrows move it, Space drops it, Escape cancels`);
    return;
  }
  if (e.key === "Enter") { e.preventDefault(); openDetail(repo, id); return; }
  const step = {ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0]}[e.key];
  if (step) {
    e.preventDefault();
    const next = neighbour(el, step[0], step[1]);
    if (next) focusCard(repo, next.dataset.taskId);
  }
});

// --- the detail panel -----------------------------------------------------------------

async function openDetail(repo, id) {
  state.detail = {repo, id};
  for (const el of document.querySelectorAll(".card.selected")) el.classList.remove("selected");
  const el = cardElement(repo, id);
  if (el) el.classList.add("selected");
  const panel = $("detail");
  panel.hidden = false;
  if (!panel.childElementCount) panel.append(h("p", {class: "empty", text: "Loading…"}));
  await refreshDetail();
}

function closeDetail() {
  const was = state.detail;
  state.detail = null;
  $("detail").hidden = true;
  $("detail").replaceChildren();
  for (const el of document.querySelectorAll(".card.selected")) el.classList.remove("selected");
  if (was) focusCard(was.repo, was.id);
}

let detailAsked = 0;
async function refreshDetail() {
  if (!state.detail) return;
  const {repo, id} = state.detail;
  const panel = $("detail");
  if (panel.contains(document.activeElement) && document.activeElement.matches("textarea, input")) return;
  const asked = ++detailAsked;
  let data;
  try {
    const response = await fetch(`api/task?repo=${encodeURIComponent(repo)}&id=${encodeURIComponent(id)}`,
      {credentials: "same-origin"});
    data = await response.json();
    if (!response.ok) { if (asked === detailAsked) panel.replaceChildren(h("p", {class: "empty", text: data.error || "Not found"})); return; }
  } catch (err) { return; }
  if (asked !== detailAsked || !state.detail || state.detail.id !== id) return;
  drawDetail(repo, data);
}

function linkList(repo, ids, data) {
  const list = h("ul");
  for (const other of ids) {
    const seen = data.related[other];
    list.append(h("li", {}, h("button", {type: "button", class: "link", text: `${shortId(other)} ${seen ? seen.description : "(not in the backlog)"}`,
      onclick: () => openDetail(repo, other)}), seen ? ` — ${seen.status}` : ""));
  }
  return list;
}

function drawDetail(repo, data) {
  const task = data.task;
  const panel = $("detail");
  const parts = [h("button", {type: "button", class: "close", "aria-label": "Close", text: "✕", onclick: closeDetail}),
    h("span", {class: "id", text: task.id}), h("h2", {text: task.description})];
  const fields = h("dl", {class: "fields"});
  const field = (name, value) => { if (value) fields.append(h("dt", {text: name}), h("dd", {text: value})); };
  field("Status", task.status);
  const priority = h("select", {"aria-label": "Priority"}, ...["high", "medium", "low"].map((p) => h("option", {value: p, text: p})));
  priority.value = task.priority || "medium";
  priority.addEventListener("change", () => post("edit", {repo, id: task.id, priority: priority.value, seen: {priority: task.priority || "medium"}}));
  fields.append(h("dt", {text: "Priority"}), h("dd", {}, priority));
  field("Type", task.task_type || "task");
  field("Tags", (task.tags || []).join(", "));
  field("Holder", task.assignee ? `${task.assignee}${task.lease_until ? ` · ${leaseText(task)}` : ""}` : "");
  field("Filed", `${when(task.created_at)} (${task.created_at})${task.session ? ` in ${task.session}` : ""}`);
  field("Reason", task.abandoned_reason || task.close_reason || "");
  parts.push(fields);
  const actions = h("div", {class: "actions"});
  for (const status of STATUSES) {
    if (status !== task.status) {
      actions.append(h("button", {type: "button", text: `→ ${TITLES[status]}`, "data-move": status,
        onclick: () => { const card = state.projects.get(repo).cards.get(task.id) || task; move(repo, card, status); }}));
    }
  }
  if (task.status !== "done" && task.status !== "abandoned") {
    if (!task.assignee || task.stale) actions.append(h("button", {type: "button", class: "primary", text: "Claim", onclick: () => post("claim", {repo, id: task.id})}));
    if (task.assignee) actions.append(h("button", {type: "button", text: "Release",
      onclick: () => post("release", {repo, id: task.id, seen: {assignee: task.assignee, status: task.status}})}));
  }
  parts.push(actions);
  parts.push(h("h3", {text: "Body"}));
  const bodyView = h("pre", {class: "body", text: data.body || "(no body)"});
  const edit = h("button", {type: "button", text: data.body ? "Edit body" : "Add a body"});
  edit.addEventListener("click", () => {
    const area = h("textarea", {"aria-label": "Body"});
    area.value = data.body || "";
    const save = h("button", {type: "button", class: "primary", text: "Save body", onclick: async () => {
      const done = await post("edit", {repo, id: task.id, body: area.value, seen: {body: data.body || null}});
      if (done) { area.blur(); refreshDetail(); }
    }});
    const cancel = h("button", {type: "button", text: "Cancel", onclick: () => { area.blur(); refreshDetail(); }});
    bodyView.replaceWith(area);
    edit.replaceWith(h("div", {class: "actions"}, save, cancel));
    area.focus();
  });
  parts.push(bodyView, h("div", {class: "actions"}, edit));
  if (data.blocked_by.length) parts.push(h("h3", {text: "Waits on"}), linkList(repo, data.blocked_by, data));
  if (data.blocks.length) parts.push(h("h3", {text: "Blocks"}), linkList(repo, data.blocks, data));
  if (data.parent) parts.push(h("h3", {text: "Epic"}), linkList(repo, [data.parent], data));
  if (data.children.length) parts.push(h("h3", {text: "Children"}), linkList(repo, data.children, data));
  parts.push(h("h3", {text: `Notes (${data.notes.length})`}));
  for (const note of data.notes) {
    parts.push(h("div", {class: "note"}, h("span", {class: "who", text: `${note.author || "someone"} · ${when(note.created_at)}`}), note.text));
  }
  const noteText = h("textarea", {class: "short", "aria-label": "A note", placeholder: "Add a note…", rows: "3"});
  parts.push(noteText, h("div", {class: "actions"}, h("button", {type: "button", text: "Add note", onclick: async () => {
    if (!noteText.value.trim()) return;
    const done = await post("note", {repo, id: task.id, text: noteText.value});
    if (done) { noteText.value = ""; noteText.blur(); refreshDetail(); }
  }})));
  parts.push(h("h3", {text: "History"}));
  const history = h("ul", {class: "history"});
  for (const moment of data.history) {
    history.append(h("li", {}, h("time", {datetime: moment.at, title: moment.at, text: when(moment.at)}), moment.what.join("; ")));
  }
  parts.push(history);
  panel.replaceChildren(...parts);
}

// --- start ----------------------------------------------------------------------------

function start() {
  const inputs = {q: $("q"), tag: $("f-tag"), priority: $("f-priority"), holder: $("f-holder"), type: $("f-type")};
  for (const [key, el] of Object.entries(inputs)) {
    el.dataset.key = key;
    el.addEventListener("input", () => {
      state.filters[key] = key === "q" ? el.value.trim().toLowerCase() : el.value;
      for (const repo of state.projects.keys()) pending.add(repo);
      schedule([...state.projects.keys()][0]);
    });
  }
  inputs.q.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { inputs.q.value = ""; inputs.q.dispatchEvent(new Event("input")); inputs.q.blur(); }
    if (e.key === "Enter" || e.key === "ArrowDown") {
      e.preventDefault();
      const first = document.querySelector(".card");
      if (first) focusCard(first.closest("[data-repo]").dataset.repo, first.dataset.taskId);
    }
  });
  setInterval(() => { // leases count down without a redraw
    for (const el of document.querySelectorAll(".lease[data-lease]")) {
      const card = el.closest(".card");
      el.textContent = ` · ${leaseText({lease_until: el.dataset.lease, stale: card && card.dataset.stale === "true"})}`;
    }
  }, 30000);
  document.addEventListener("visibilitychange", onVisibility);
  window.addEventListener("pagehide", disconnect);
  window.addEventListener("pageshow", (e) => { if (e.persisted) onVisibility(); });
  connect();
  onVisibility();
}

start();
