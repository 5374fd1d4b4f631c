"""`aidp prime`: what an agent needs at the start of a session or after compaction.

The current TODO list, the task this session works on with its body, the tasks in
progress, the first tasks ready to pick up, and the few commands and signals to use —
always under `LIMIT` characters, whatever the size of the backlog: every section has a
budget and says how much it left out. It runs at
every session start (through `aidp hook`), so it reads through the index's public
queries and decodes only the handful of tasks it shows. Pure: returns values.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from aidp import todos
from aidp.app.project import Project
from aidp.core.model import Record, priority_key
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold
from aidp.views.render import todo_text

LIMIT = 6000  # the contract: the text stays under this many characters
IN_PROGRESS_SHOWN = 5
READY_SHOWN = 8
TODO_BUDGET = 1800  # characters for the TODO list section
DESCRIPTION_WIDTH = 120
BODY_BUDGET = 2400  # characters of the claimed task's body, at most (less when room is short)


class Prime(Plain):
    """What `prime` shows. `stale_count`: of ready_count, the stale claims (in progress,
    lease run out); `session_flag`: commands name the session (it is not the default
    one); `hooked`: shown through an agent's hook (say what the hooks do); `other_open`:
    other sessions' lists; `claimed`: the task this session works on, with its body.
    (Written out, not a dataclass: aidp.core.plain; it is built at every session start.)"""

    __slots__ = _fields = ("session", "todo", "in_progress", "in_progress_count", "ready",
                           "ready_count", "stale_count", "pending_count", "session_flag",
                           "hooked", "other_open", "claimed")

    def __init__(self, session: str, todo: todos.TodoList,
                 in_progress: list[Record] | None = None, in_progress_count: int = 0,
                 ready: list[Record] | None = None, ready_count: int = 0,
                 stale_count: int = 0, pending_count: int = 0, session_flag: bool = False,
                 hooked: bool = False, other_open: list[todos.Summary] | None = None,
                 claimed: Record | None = None) -> None:
        self.session = session
        self.todo = todo
        self.in_progress: list[Record] = [] if in_progress is None else in_progress
        self.in_progress_count = in_progress_count
        self.ready: list[Record] = [] if ready is None else ready
        self.ready_count = ready_count
        self.stale_count = stale_count
        self.pending_count = pending_count
        self.session_flag = session_flag
        self.hooked = hooked
        self.other_open: list[todos.Summary] = [] if other_open is None else other_open
        self.claimed = claimed

    def text(self) -> str:
        return render_text(self)

    def to_json(self) -> dict[str, Any]:
        shown = todos.show_json(self.todo)
        items, left_out = _fit_items(shown["items"])
        shown["items"] = items
        shown["items_left_out"] = left_out
        return {
            "session": self.session,
            "todo": shown,
            "in_progress": [_task_json(t) for t in self.in_progress],
            "in_progress_count": self.in_progress_count,
            "ready": [_task_json(t) for t in self.ready],
            "ready_count": self.ready_count,
            "pending_count": self.pending_count,
            "commands": commands(self.session if self.session_flag else None),
            "other_open_lists": [s.to_json() for s in self.other_open[:5]],
            **({"claimed": _claimed_json(self.claimed)} if self.claimed else {}),
            "text": self.text(),
        }


def prime_for(project: Project, session: str, *, session_flag: bool = False,
              hooked: bool = False, task: str | None = None) -> Prime:
    """The prime for `session` as the project is now (`build`), the task it works on
    held by the project's actor (AIDP_ACTOR, else git's user.email: looked up only
    when a shown task is claimed)."""
    from aidp.backlog.queue import default_actor

    return build(project.read(), session, session_flag=session_flag, hooked=hooked,
                 task=task, actor=lambda: default_actor(project.root))


def build(fold: Fold, session: str, *, session_flag: bool = False, hooked: bool = False,
          task: str | None = None, actor: Callable[[], str] | None = None) -> Prime:
    """The prime for `session` from the folded state. The task this session works on
    (its body shown) is `task` (the full id `aidp run` gives its agent as AIDP_TASK)
    while it is open, else the newest task in progress shown that `actor` (a lookup:
    asked only when a shown task is claimed) holds."""
    from aidp.backlog import queue, tasks

    todo = todos.current(fold, session)
    # Most recently filed work first for what is under way (the top of `tasks list
    # in_progress`); what to pick up next is the work queue's order (unclaimed, nothing
    # open to wait on, high priority, oldest). Counted from the columns; only the few
    # shown are decoded, with their own links.
    under_way = tasks.find_in(fold, tasks.Query(statuses=("in_progress",),
                                                limit=IN_PROGRESS_SHOWN))
    stale = queue.stale_ready(fold)  # offered after the fresh ones
    ready = fold.tasks_of([e.id for e in queue.ready(fold, limit=READY_SHOWN)])
    qs = queue.state(fold, about=[t["id"] for t in under_way.tasks + ready], own=True)
    in_progress = queue.shown_with(qs, under_way.tasks)
    return Prime(
        session=session,
        todo=todo,
        in_progress=in_progress,
        in_progress_count=under_way.matched.get("in_progress", 0),
        ready=queue.shown_with(qs, ready),
        ready_count=(queue.folded.ready_count(fold) + len(stale) if len(ready) == READY_SHOWN
                     else len(ready)),
        stale_count=len(stale),
        pending_count=fold.status_counts().get("pending", 0),
        session_flag=session_flag,
        hooked=hooked,
        other_open=[] if todo.visible else _other_open(fold, session),
        claimed=_claimed(fold, in_progress, task, actor),
    )


def _claimed(fold: Fold, in_progress: list[Record], task: str | None,
             actor: Callable[[], str] | None) -> Record | None:
    """The task this session works on, with its links and body (see `build`)."""
    from aidp.backlog import queue
    from aidp.core.model import OPEN_STATUSES

    found = fold.tasks.get(task) if task else None
    if found is None or found.get("status") not in OPEN_STATUSES:
        held = [t for t in in_progress if isinstance(t.get("assignee"), str)]
        name = actor() if held and actor is not None else None
        found = next((t for t in held if t["assignee"] == name), None)
    if found is None:
        return None
    return queue.shown(fold, [fold.tasks[found["id"]]], bodies=True)[0]


def _other_open(fold: Fold, session: str) -> list[todos.Summary]:
    """Other sessions' active lists with open items, newest first: a new session (an
    agent's fresh session id) may want to pick one up."""
    return [s for s in todos.summaries(fold, session)
            if not s.current and s.active and s.counts["pending"] + s.counts["in_progress"]]


# --- text -----------------------------------------------------------------------------


def _clip(text: object, width: int = DESCRIPTION_WIDTH) -> str:
    from aidp.core.terminal import inert

    flat = " ".join(inert(str(text)).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _task_line(task: Record) -> str:
    priority = priority_key(task.get("priority"))  # as list and stats show it
    tags = task["tags"] if isinstance(task.get("tags"), list) else []
    shown_tags = " ".join(f"#{_clip(t, 20)}" for t in tags[:4] if isinstance(t, str))
    line = f"- {_clip(task.get('id'), 40)} [{priority}] {_clip(task.get('description', ''))}"
    if isinstance(task.get("assignee"), str):
        line += f" (claimed by {_clip(task['assignee'], 40)}{_stale(task)})"
    return line + (f" {shown_tags}" if shown_tags else "")


def _stale(task: Record) -> str:
    """`, stale: lease ran out 5m ago` for a task whose holder's lease ran out (a claim
    takes it over); nothing for a live one."""
    if task.get("stale") is not True:
        return ""
    from aidp.backlog.queue import span
    from aidp.core.model import UNKNOWN_TS, now_micros, ts_of

    until, now = ts_of(task, "lease_until"), now_micros()
    if until == UNKNOWN_TS or until > now:  # a stamp from the future is not believed
        return ", stale: its lease is stamped ahead of this clock"
    return f", stale: lease ran out {span(now - until)} ago"


def _body_cut(body: str, room: int) -> tuple[str, int]:
    """The body as shown (inert, tabs kept), at most `room` characters, cut at a line's
    end where one is near; and how many characters were left out."""
    from aidp.views.render import body_text

    text = body_text(body, color=False)
    if len(text) <= room:
        return text, 0
    cut = text.rfind("\n", 0, room)
    end = cut if cut > room * 3 // 4 else room
    return text[:end].rstrip(), len(text) - len(text[:end].rstrip())


def _claimed_json(task: Record) -> dict[str, Any]:
    out = _task_json(task)
    if isinstance(task.get("task_type"), str):
        out["task_type"] = task["task_type"]
    if isinstance(task.get("body"), str):
        out["body"], out["body_left_out"] = _body_cut(task["body"], BODY_BUDGET)
    return out


def _claimed_section(task: Record, room: int) -> list[str]:
    """`## Your task`: its line and its body, cut to `room` characters, saying so."""
    tid = _clip(task.get("id"), 40)
    kind = f" ({_clip(task['task_type'], 20)})" if isinstance(task.get("task_type"), str) else ""
    lines = ["## Your task", "", _task_line(task) + kind]
    body = task.get("body")
    if isinstance(body, str) and body:
        shown, left = _body_cut(body, max(0, min(BODY_BUDGET, room)))
        lines += ["", shown] if shown else []
        if left:
            lines.append(f"… the body is cut here: {left:,} more characters "
                         f"(`aidp tasks show {tid}` prints it whole)")
    return [*lines, ""]


def _task_json(task: Record) -> dict[str, Any]:
    keys = ("id", "description", "status", "priority", "tags", "assignee", "lease_until",
            "stale")
    out: dict[str, Any] = {key: task[key] for key in keys if key in task}
    if isinstance(out.get("description"), str):
        out["description"] = _clip(out["description"], 200)
    return out


def _fit_items(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The TODO items that fit the section's budget (as JSON), and how many did not."""
    kept: list[dict[str, Any]] = []
    used = 0
    for item in items:
        cost = len(item.get("content", "")) + 40 + sum(
            len(s.get("content", "")) + 20 for s in item.get("subtasks") or []
        )
        if used + cost > TODO_BUDGET:
            break
        kept.append(item)
        used += cost
    return kept, len(items) - len(kept)


def _todo_section(todo: todos.TodoList, aidp: str) -> list[str]:
    shown = todo_text(todo).split("\n")
    lines: list[str] = []
    used = 0
    for number, full in enumerate(shown):
        line = full if len(full) <= 240 else full[:239] + "…"
        if used + len(line) + 1 > TODO_BUDGET:
            rest = len(shown) - number
            lines.append(f"… {rest} more lines: run `{aidp} todo show`")
            break
        lines.append(line)
        used += len(line) + 1
    return lines


def _other_lists(prime: Prime, aidp: str) -> list[str]:
    if not prime.other_open:
        return []
    newest = prime.other_open[0]
    open_items = newest.counts["pending"] + newest.counts["in_progress"]
    more = len(prime.other_open) - 1
    line = (f"Session {_clip(newest.session, 60)} has a list with {open_items} open "
            f"item{'s' if open_items != 1 else ''} (first: {_clip(newest.first or '', 80)}); "
            f"to continue it here: `{aidp} todo load {shlex.quote(newest.session)}`")
    if more:
        line += f" ({more} more: `aidp todo list`)"
    return ["", line]


def commands(session: str | None) -> list[str]:
    """The commands an agent uses, naming the session when it is not the default one."""
    aidp = _aidp(session)
    return [
        f"{aidp} todo show",
        f'{aidp} todo add "STEP"',
        f"{aidp} todo start N",
        f"{aidp} todo tick N",
        f'{aidp} todo pause "REASON"',
        "aidp tasks list",
        'aidp tasks add "DESCRIPTION" -p high',
        "aidp tasks claim ID",
        "aidp tasks done ID",
    ]


def _aidp(session: str | None) -> str:
    return f"aidp --session {shlex.quote(session)}" if session else "aidp"


def render_text(prime: Prime) -> str:
    session = prime.session if prime.session_flag else None
    aidp = _aidp(session)
    out = [
        "# aidp: your TODO list and the project backlog",
        "",
        f"Session: {_clip(prime.session, 120)}."
        + (" aidp's hooks mirror your own TODO tool into this session's TODO list; "
           "while its items are open and not paused, you are asked to go on before you "
           "stop." if prime.hooked else ""),
        "",
        "## Your TODO list",
        "",
        *_todo_section(prime.todo, aidp),
        *_other_lists(prime, aidp),
        "",
    ]
    claimed_at = len(out)  # `## Your task` goes here, in the room the rest leaves
    if prime.in_progress_count:
        out += [f"## In progress ({prime.in_progress_count})", ""]
        out += [_task_line(t) for t in prime.in_progress]
        if prime.in_progress_count > len(prime.in_progress):
            more = prime.in_progress_count - len(prime.in_progress)
            out.append(f"- … and {more} more: `aidp tasks list in_progress`")
        out.append("")
    if prime.ready_count:
        waiting = prime.pending_count - prime.ready_count + prime.stale_count
        also = f", {waiting} more waiting on others" if waiting > 0 else ""
        if prime.stale_count:
            also += (f"; {prime.stale_count} of them stale: claimed, the holder's lease ran "
                     "out, `aidp tasks claim ID` takes one over")
        out += [f"## Ready to pick up ({prime.ready_count} ready{also}; "
                "highest priority first)", ""]
        out += [_task_line(t) for t in prime.ready]
        if prime.ready_count > len(prime.ready):
            more = prime.ready_count - len(prime.ready)
            out.append(f"- … and {more} more: `aidp tasks ready`")
        out.append("")
    elif prime.pending_count:
        out += ["## Ready to pick up", "",
                f"None: all {prime.pending_count} pending tasks wait on others "
                "(`aidp tasks blocked`).", ""]
    else:
        out += ["## Backlog", "", "No pending tasks.", ""]
    cmds = commands(session)
    out += [
        "## Commands",
        "",
        f"- `{cmds[0]}` · `{cmds[1]}` · `{cmds[2]}` · `{cmds[3]}` (or N.M)",
        f"- `{cmds[4]}` — you are blocked and need the user: no more pushing until "
        "the next prompt",
        f"- `{cmds[5]}` · `{cmds[6]}` · `{cmds[7]}` · `{cmds[8]}` (ID or its first 4+ "
        "hex characters)",
        "",
        "Signals you may write on a line of your reply"
        + (" (the final reply of a turn):" if prime.hooked else ":"),
        '- File task: "DESCRIPTION" priority: high tags: a,b — work found but not done now '
        "(details in a ```body fenced block on the lines right after it)",
        "- Update task: ID status: done (pending, in_progress, done, abandoned)",
        '- Todo pause: "REASON"',
    ]
    if prime.claimed is not None:
        room = LIMIT - len("\n".join(out)) - 300  # its head and the cut's line
        out[claimed_at:claimed_at] = _claimed_section(prime.claimed, room)
    text = "\n".join(out) + "\n"
    if len(text) >= LIMIT:  # every section is bounded, so this is a last resort
        text = text[: LIMIT - 40] + "\n… (cut: run `aidp todo show`)\n"
    return text
