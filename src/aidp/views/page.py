"""`aidp report --html`: one self-contained page from `aidp.app.report.report_data`.

Everything is inline: the CSS, the SVG charts (drawn here, so they show without
scripts), and a small script that fills and filters the backlog table from the tasks
embedded as JSON. A Content-Security-Policy forbids any network access, so the page
works offline from a file:// URL and can never call out. Pure: returns the text.

Every value from the tasklist is escaped: HTML text through `html.escape`, embedded
JSON with `<`, `>`, `&` and the two JavaScript line separators as \\u escapes.
"""

from __future__ import annotations

from typing import Any

import orjson

from aidp.views.svg import esc as _e
from aidp.views.svg import hbars, line, weekly
from aidp.views.svg import num as _n

STATUS_COLORS = {"pending": "#d4a017", "in_progress": "#2a8fbd", "done": "#3a9d4a",
                 "abandoned": "#b5473a", "other": "#8e6bb8"}
PRIORITY_COLORS = {"high": "#c9423a", "medium": "#d4a017", "low": "#3a9d4a"}
STATUS_LABELS = {"pending": "pending", "in_progress": "in progress", "done": "done",
                 "abandoned": "abandoned", "other": "other"}
TASK_ROWS = 100  # rows the table shows before "Show more"


def _json(value: Any) -> str:
    data = orjson.dumps(value).decode()
    for raw, safe in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                      ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        data = data.replace(raw, safe)
    return data


# --- sections ---------------------------------------------------------------------------


def _cards(stats: dict[str, Any]) -> str:
    this_week = (stats.get("weeks") or [{}])[-1]
    cards = [("tasks", stats["total"]), ("open", stats["open"]),
             ("in progress", stats["in_progress"]), ("done", stats["done"]),
             ("abandoned", stats["abandoned"]), ("filed this week", this_week.get("filed", 0)),
             ("finished this week", this_week.get("finished", 0))]
    return '<div class="cards">' + "".join(
        f'<div class="card"><div class="big">{_n(v)}</div><div>{_e(k)}</div></div>'
        for k, v in cards) + "</div>"


def _task_label(task: dict[str, Any] | None, tid: str) -> str:
    if task is None:
        return f'<code>{_e(tid)}</code>'
    stored = task.get("priority")
    priority = "medium" if stored is None else stored  # missing or null: model.priority_key
    return (f'<span class="pri pri-{_e(priority)}">'
            f'{_e(priority)}</span> {_e(task.get("description", ""))} '
            f'<code>{_e(tid.rpartition("_")[2])}</code>')


def _queue(data: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> str:
    ready, blocked = data["queue"]["ready"], data["queue"]["blocked"]
    extras = data.get("extras") or {}
    rows = [f'<li>{_task_label(by_id.get(t), t)}'
            + (f' <span class="muted">claimed by {_e(extras[t]["assignee"])}</span>'
               if "assignee" in extras.get(t, {}) else "")
            + "</li>" for t in ready[:50]]
    more = f'<p class="muted">… and {_n(len(ready) - 50)} more</p>' if len(ready) > 50 else ""
    waits = []
    for entry in blocked[:50]:
        on = ", ".join(_task_label(by_id.get(w), w) for w in entry["waiting_on"])
        waits.append(f'<li>{_task_label(by_id.get(entry["id"]), entry["id"])}'
                     f'<div class="muted">waits on: {on}</div></li>')
    more_blocked = (f'<p class="muted">… and {_n(len(blocked) - 50)} more</p>'
                    if len(blocked) > 50 else "")
    return (
        '<section id="queue"><h2>Work queue</h2><div class="two">'
        f'<div><h3>Ready ({_n(len(ready))})</h3><p class="muted">pending, unclaimed, nothing '
        'open blocks them: high priority first, then oldest</p>'
        f'<ol class="tasks" id="ready">{"".join(rows) or "<li class=muted>nothing ready</li>"}'
        f'</ol>{more}</div>'
        f'<div><h3>Blocked ({_n(len(blocked))})</h3><p class="muted">open tasks waiting on '
        f'an open task</p><ol class="tasks" id="blocked">'
        f'{"".join(waits) or "<li class=muted>nothing blocked</li>"}</ol>{more_blocked}</div>'
        '</div></section>')


def _todos(lists: list[dict[str, Any]]) -> str:
    if not lists:
        return ('<section id="todos"><h2>Session TODO lists</h2>'
                '<p class="muted">No session has a TODO list yet.</p></section>')
    blocks = []
    for todo in lists:
        items = []
        for n, item in enumerate(todo["items"], start=1):
            subs = "".join(
                f'<li class="st-{_e(s["status"])}">{n}.{m} {_e(s["content"])}</li>'
                for m, s in enumerate(item.get("subtasks") or [], start=1))
            items.append(
                f'<li class="st-{_e(item["status"])}"><span class="badge">'
                f'{_e(item["status"].replace("_", " "))}</span> {_e(item["content"])}'
                + (f"<ul>{subs}</ul>" if subs else "") + "</li>")
        state = ("current session · " if todo.get("current") else "") + (
            "paused · " if todo.get("paused") else "") + (
            "active" if todo.get("active") else "cleared")
        blocks.append(
            f'<div class="todo"><h3>{_e(todo["session"])}</h3><p class="muted">{_e(state)}'
            f' · updated {_e(todo.get("updated_at") or "?")}</p>'
            f'<ol>{"".join(items) or "<li class=muted>empty</li>"}</ol></div>')
    return ('<section id="todos"><h2>Session TODO lists</h2><div class="todos">'
            + "".join(blocks) + "</div></section>")


def _backlog(tasks: list[dict[str, Any]], extras: dict[str, Any]) -> str:
    """The table's frame and data: the task records as stored, and the queue keys of
    those that have some, as JSON; the script builds the rows and the filter choices
    (no per-task work here: 41,229 tasks cost orjson one call)."""
    statuses = "".join(
        f'<label><input type="checkbox" name="status" value="{s}"'
        f'{" checked" if s in ("pending", "in_progress") else ""}> {STATUS_LABELS[s]}</label>'
        for s in ("pending", "in_progress", "done", "abandoned"))
    priorities = "".join(
        f'<label><input type="checkbox" name="priority" value="{p}" checked> {p}</label>'
        for p in ("high", "medium", "low"))
    return (
        '<section id="backlog"><h2>Backlog</h2><form id="filters" class="filters">'
        f'<fieldset><legend>Status</legend>{statuses}</fieldset>'
        f'<fieldset><legend>Priority</legend>{priorities}</fieldset>'
        '<label>Tag <select name="tag"><option value="">any</option></select></label>'
        '<label>Session <select name="session"><option value="">any</option></select></label>'
        '<label>Search <input type="search" name="q" placeholder="words or id"></label>'
        '<label>Sort <select name="sort"><option value="created">newest first</option>'
        '<option value="priority">priority</option><option value="updated">recently '
        'changed</option></select></label></form>'
        '<p id="count" class="muted"></p>'
        '<table id="tasks"><thead><tr><th>priority</th><th>description</th><th>status</th>'
        '<th>tags</th><th>session</th><th>created</th><th>id</th></tr></thead>'
        '<tbody></tbody></table><p><button id="more" type="button" hidden>Show more</button>'
        '</p><noscript><p>The table needs JavaScript; `aidp tasks list` prints the same.'
        f'</p></noscript><script type="application/json" id="task-data">{_json(tasks)}'
        f'</script><script type="application/json" id="queue-data">{_json(extras)}'
        '</script></section>')


SCRIPT = """
(function () {
  var tasks = JSON.parse(document.getElementById('task-data').textContent);
  var extras = JSON.parse(document.getElementById('queue-data').textContent);
  var form = document.getElementById('filters');
  var body = document.querySelector('#tasks tbody');
  var more = document.getElementById('more');
  var count = document.getElementById('count');
  var rank = {high: 0, medium: 1, low: 2};
  var known = {pending: 1, in_progress: 1, done: 1, abandoned: 1};
  var shown = PAGE, matches = [];
  function text(v) { return typeof v === 'string' ? v : ''; }
  var rows = tasks.map(function (t) {
    var tags = Array.isArray(t.tags) ? t.tags.filter(function (x) {
      return typeof x === 'string'; }) : [];
    return {id: text(t.id), d: text(t.description), s: text(t.status),
            // missing or null is medium, as in every view (model.priority_key)
            p: t.priority == null ? 'medium' : text(t.priority), tags: tags,
            session: text(t.session),
            c: text(t.created_at), u: text(t.updated_at), x: extras[t.id] || {}};
  });
  function options(select, counts, label) {
    Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a] ||
      (a < b ? -1 : 1); }).forEach(function (k) {
      var o = document.createElement('option');
      o.value = k;
      o.textContent = label(k, counts[k]);
      select.appendChild(o);
    });
  }
  var tagCount = {}, sessionCount = {};
  rows.forEach(function (r) {
    r.tags.forEach(function (t) { tagCount[t] = (tagCount[t] || 0) + 1; });
    if (r.session) sessionCount[r.session] = (sessionCount[r.session] || 0) + 1;
  });
  options(form.tag, tagCount, function (k, n) { return k + ' (' + n.toLocaleString() + ')'; });
  options(form.session, sessionCount, function (k) { return k; });
  function checked(name) {
    var out = {};
    form.querySelectorAll('input[name=' + name + ']').forEach(function (box) {
      if (box.checked) out[box.value] = true;
    });
    return out;
  }
  function cell(tr, value, cls) {
    var td = document.createElement('td');
    td.textContent = value;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function note(td, value) {
    var span = document.createElement('span');
    span.className = 'muted';
    span.textContent = value;
    td.appendChild(span);
  }
  function draw() {
    body.textContent = '';
    var frag = document.createDocumentFragment();
    matches.slice(0, shown).forEach(function (r) {
      var tr = document.createElement('tr');
      tr.className = 'st-' + r.s;
      tr.title = r.id;
      cell(tr, r.p, 'pri pri-' + r.p);
      var d = cell(tr, r.d);
      if (r.x.assignee) note(d, ' claimed by ' + r.x.assignee);
      if (r.x.blocked_by) note(d, ' blocked by ' + r.x.blocked_by.length);
      cell(tr, r.s.replace('_', ' '), 'badge');
      cell(tr, r.tags.map(function (t) { return '#' + t; }).join(' '), 'tags');
      cell(tr, r.session);
      cell(tr, r.c.slice(0, 10));
      cell(tr, r.id.split('_').pop(), 'id');
      frag.appendChild(tr);
    });
    body.appendChild(frag);
    count.textContent = matches.length.toLocaleString() + ' of ' +
      rows.length.toLocaleString() + ' tasks';
    more.hidden = matches.length <= shown;
  }
  function apply() {
    var st = checked('status'), pr = checked('priority');
    var tag = form.tag.value, session = form.session.value;
    var q = form.q.value.trim().toLowerCase(), sort = form.sort.value;
    matches = rows.filter(function (r) {
      if (known[r.s] ? !st[r.s] : !st.pending) return false;
      if (r.p in rank && !pr[r.p]) return false;
      if (tag && r.tags.indexOf(tag) < 0) return false;
      if (session && r.session !== session) return false;
      if (q && (r.d + ' ' + r.id).toLowerCase().indexOf(q) < 0) return false;
      return true;
    });
    var key = sort === 'updated' ? 'u' : 'c';
    matches.reverse();
    matches.sort(function (a, b) {
      if (sort === 'priority') {
        var d = (a.p in rank ? rank[a.p] : 1) - (b.p in rank ? rank[b.p] : 1);
        if (d) return d;
      }
      return a[key] < b[key] ? 1 : a[key] > b[key] ? -1 : 0;
    });
    shown = PAGE;
    draw();
  }
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (e) { e.preventDefault(); });
  more.addEventListener('click', function () { shown += PAGE; draw(); });
  apply();
  document.body.setAttribute('data-ready', '1');
})();
""".replace("PAGE", str(TASK_ROWS))

CSS = """
:root { color-scheme: light dark; --fg: #1d2125; --muted: #6b7280; --bg: #fff;
  --card: #f4f5f7; --line: #d0d4da; --accent: #2a8fbd; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --muted: #9aa1ab;
  --bg: #16191d; --card: #22262b; --line: #3a4048; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1100px; padding: 24px; font: 15px/1.45 system-ui,
  -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
h1 { margin: 0 0 4px; font-size: 26px; } h2 { margin: 32px 0 12px; font-size: 20px;
  border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { margin: 8px 0; font-size: 16px; }
nav a { margin-right: 14px; color: var(--accent); }
.muted { color: var(--muted); } code { font-size: 12px; color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { background: var(--card); border-radius: 8px; padding: 10px 16px; min-width: 110px; }
.card .big { font-size: 24px; font-weight: 600; }
.two { display: flex; flex-wrap: wrap; gap: 24px; } .two > div { flex: 1 1 420px; min-width: 0; }
svg.chart { display: block; max-width: 100%; height: auto; }
svg .label, svg .value, svg .tick { fill: var(--fg); font-size: 12px; }
svg .tick { fill: var(--muted); font-size: 11px; } svg .muted { fill: var(--muted); }
svg .axis { stroke: var(--line); } svg .line { fill: none; stroke: var(--accent);
  stroke-width: 2; } svg .area { fill: var(--accent); opacity: .15; }
svg .dot { fill: var(--accent); }
.filters { display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: end; margin-bottom: 8px; }
.filters fieldset { border: 1px solid var(--line); border-radius: 6px; padding: 4px 10px; }
.filters label { margin-right: 8px; } select, input[type=search] { font: inherit; }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; } th { font-weight: 600; }
td.id { font-family: ui-monospace, monospace; font-size: 12px; color: var(--muted); }
td.tags { color: var(--accent); } tr.st-done td, tr.st-abandoned td { color: var(--muted); }
tr.st-abandoned td:nth-child(2) { text-decoration: line-through; }
.pri { font-weight: 600; } .pri-high { color: #c9423a; } .pri-medium { color: #b8860b; }
.pri-low { color: #3a9d4a; }
.badge { font-size: 12px; white-space: nowrap; }
ol.tasks li { margin-bottom: 6px; }
.todos { display: flex; flex-wrap: wrap; gap: 16px; }
.todo { background: var(--card); border-radius: 8px; padding: 8px 16px; flex: 1 1 300px; }
.todo li.st-completed { color: var(--muted); text-decoration: line-through; }
.todo li.st-in_progress > .badge { color: var(--accent); }
footer { margin-top: 40px; font-size: 12px; }
"""

# No network, ever: only inline styles, inline scripts and data: images.
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'")


def build(data: dict[str, Any]) -> str:
    stats = data["stats"]
    tasks = data["tasks"]
    by_id = {t["id"]: t for t in tasks if isinstance(t.get("id"), str)}
    status_rows = [(STATUS_LABELS[s], int(stats.get(s, 0)), STATUS_COLORS[s])
                   for s in ("pending", "in_progress", "done", "abandoned")]
    if stats.get("other"):
        status_rows.append(("other", int(stats["other"]), STATUS_COLORS["other"]))
    priority_rows = [(p, int(stats["open_by_priority"].get(p, 0)), PRIORITY_COLORS[p])
                     for p in ("high", "medium", "low")]
    if stats["open_by_priority"].get("other"):
        priority_rows.append(("other", int(stats["open_by_priority"]["other"]),
                              STATUS_COLORS["other"]))
    age_rows = [(row["bucket"], int(row["count"]), "#2a8fbd") for row in stats["open_age"]
                if row["bucket"] != "unknown" or row["count"]]
    tag_rows = [("#" + t["tag"], int(t["count"]), "#2a8fbd") for t in stats["top_tags"]]
    weeks = stats["weeks"]
    burn = data["burndown"]
    title = f"aidp report — {data['project']}" if data.get("project") else "aidp report"
    throughput = (
        f'<p class="muted">Last {len(weeks)} weeks (ISO weeks, Monday 00:00 UTC): '
        f'{_n(sum(w["filed"] for w in weeks))} filed, '
        f'{_n(sum(w["finished"] for w in weeks))} finished (done or abandoned).</p>')
    burndown_note = (
        f'<p class="muted">Open tasks at the end of each day, last {len(burn)} days; now '
        f'{_n(burn[-1]["open"] if burn else 0)}. A reopened task counts as open since it '
        'was filed.</p>')
    return "".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<title>{_e(title)}</title><style>{CSS}</style></head><body>',
        f'<header><h1>{_e(title)}</h1><p class="muted">Generated '
        f'{_e(data["generated_at"])} by aidp from .aidp/tasklist.jsonl</p>',
        '<nav><a href="#overview">Overview</a><a href="#throughput">Throughput</a>'
        '<a href="#burndown">Burndown</a><a href="#queue">Work queue</a>'
        '<a href="#backlog">Backlog</a><a href="#todos">TODO lists</a></nav></header>',
        f'<section id="overview"><h2>Overview</h2>{_cards(stats)}<div class="two">',
        f'<div><h3>Tasks by status</h3>{hbars("Tasks by status", status_rows)}</div>',
        f'<div><h3>Open tasks by priority</h3>'
        f'{hbars("Open tasks by priority", priority_rows)}</div>',
        f'<div><h3>Age of open tasks</h3>{hbars("Age of open tasks", age_rows)}</div>',
        f'<div><h3>Top tags (open tasks)</h3>{hbars("Top tags", tag_rows)}</div>',
        '</div></section>',
        f'<section id="throughput"><h2>Throughput: filed vs finished per week</h2>'
        f'{throughput}{weekly("Filed vs finished per week", weeks)}</section>',
        f'<section id="burndown"><h2>Burndown</h2>{burndown_note}'
        f'{line("Open tasks per day", burn)}</section>',
        _queue(data, by_id),
        _backlog(tasks, data.get("extras") or {}),
        _todos(data["todos"]),
        '<footer class="muted">Self-contained: no scripts, fonts or images from the '
        'network.</footer>',
        f'<script>{SCRIPT}</script></body></html>\n',
    ])
