"""The diff driver: git shows the tasklist as readable task lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


from aidp.git.changes import _VERBS
from aidp.git.runner import _run

# --- the diff driver ------------------------------------------------------------------------

DIFF_ATTRIBUTE = ".aidp/tasklist.jsonl diff=aidp"


def _hex(tid: str) -> str:
    return tid.rpartition("_")[2] or tid


def textconv(data: bytes) -> str:
    """The tasklist as git's diff driver shows it: one readable line per line of the
    file, so `git diff` and `git log -p` show which tasks and TODO items changed how."""
    from aidp.log import parse_line
    from aidp.render import inert

    raws = data.split(b"\n")
    if raws and raws[-1] == b"":
        raws.pop()
    records = [parse_line(raw) for raw in raws]
    sessions: dict[str, str] = {}  # generation -> session
    contents: dict[tuple[str, str], str] = {}  # (generation, item) -> its text
    for record in records:
        if record is None:
            continue
        if record.get("type") == "todo_head" and isinstance(record.get("list"), str):
            sessions[record["list"]] = str(record.get("session"))
        elif record.get("type") == "todo_item" and isinstance(record.get("content"), str):
            contents[(str(record.get("list")), str(record.get("item")))] = record["content"]
    out = []
    for raw, record in zip(raws, records, strict=True):
        if record is None:
            out.append("damaged line: " + inert(raw[:60].decode("utf-8", "replace"))
                       if raw.strip() else "")
            continue
        kind = record.get("type")
        if kind is None:
            out.append(_task_line(record, inert))
        elif kind == "todo_item":
            gen, item = str(record.get("list")), str(record.get("item"))
            where = f"todo {inert(sessions.get(gen, gen))}"
            what = inert(record.get("content") or contents.get((gen, item), item))
            if record.get("deleted") is True:
                out.append(f"{where}: deleted {what}")
            else:
                sub = "  subtask" if isinstance(record.get("parent"), str) else ""
                out.append(f"{where}:{sub} [{inert(record.get('status'))}] {what}")
        elif kind == "todo_head":
            state = "active" if record.get("active") is True else "cleared"
            if record.get("paused") is True:
                state += f", paused: {inert(record.get('pause_reason') or '')}"
            out.append(f"todo {inert(record.get('session'))}: list {state}")
        elif kind == "todo_list":
            items = record["items"] if isinstance(record.get("items"), list) else []
            out.append(f"todo {inert(record.get('session'))}: snapshot of {len(items)} items")
        else:
            rest = {k: v for k, v in record.items() if k not in ("type", "id", "updated_at")}
            out.append(f"{inert(kind)} {inert(record.get('id'))}: "
                       + inert(_compact(rest))[:200])
    return "".join(line + "\n" for line in out)


def _compact(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode("utf-8")


def _task_line(task: dict[str, Any], inert: Callable[[object], str]) -> str:
    tags = " ".join(f"#{inert(t)}" for t in task.get("tags") or [] if isinstance(t, str))
    line = (f"task {inert(_hex(str(task.get('id'))))} [{inert(task.get('status'))}] "
            f"({inert(task.get('priority', 'medium'))}) {inert(task.get('description'))}")
    if task.get("abandoned_reason"):
        line += f" — {inert(task['abandoned_reason'])}"
    return line + (f" {tags}" if tags else "")


def textconv_command(program: list[str] | None = None) -> str:
    """The command git runs as the diff driver: this aidp, found again however it was
    started (a console script on PATH, or this Python with -m aidp). If that aidp is
    gone (a deleted virtualenv), git shows the raw file instead of failing every diff."""
    import shlex
    import shutil
    import sys

    if program is None:
        script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
        on_path = shutil.which("aidp")
        if script is not None and script.name == "aidp" and script.is_file():
            same = on_path is not None and Path(on_path).resolve() == script
            program = ["aidp" if same else str(script)]
        else:
            program = [sys.executable, "-m", "aidp"]
    head, rest = program[0], " ".join(shlex.quote(part) for part in program[1:])
    inner = f'"$0" {rest + " " if rest else ""}tasks textconv "$1" || cat "$1"'
    return f"sh -c {shlex.quote(inner)} {shlex.quote(head)}"


def setup_diff_driver(root: Path) -> bool | None:
    """Set this clone's `diff.aidp.textconv` (git config is per clone, never committed):
    True when it was missing and is set now, False when it was set already, None
    outside a git repository (or without git), where nothing happens."""
    inside = _run(root, "rev-parse", "--git-dir", check=False)
    if inside is None or inside.returncode != 0:
        return None
    done = _run(root, "config", "--get", "diff.aidp.textconv", check=False)
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return False
    _run(root, "config", "diff.aidp.textconv", textconv_command())
    return True


def render_changes(result: dict[str, Any], names: dict[str, str] | None = None) -> str:
    """`tasks changes` for people: one line per change, then the TODO lists. `names`:
    how to show an id (its short id); else its hex part."""
    from aidp.render import inert

    def _short(tid: str) -> str:
        return (names or {}).get(tid) or _hex(tid)

    low, high = result["from"], result["to"]
    span = f"since {inert(low)} (not committed yet)" if high is None else \
        f"from {inert(low)} to {inert(high)}"
    if not result["summary"]:
        return f"No changes to tasks or TODO lists {span}"
    lines = [f"Changes {span}: {result['summary']}"]
    for task in result["filed"]:
        lines.append(f"+ filed     {inert(_short(task['id']))}  ({inert(task.get('priority'))}) "
                     f"{inert(task.get('description'))}")
    for change in result["status"]:
        if change["from"] is None and change["to"] == "pending":
            continue
        verb = _VERBS.get(str(change["to"]), "changed")
        was = f"{inert(change['from'])} → " if change["from"] is not None else "filed → "
        lines.append(f"~ {verb:<9} {inert(_short(change['id']))}  "
                     f"{inert(change['description'])} ({was}{inert(change['to'])})")
    for edit in result["edited"]:
        fields = "; ".join(f"{inert(key)}: {_shown(v['from'], inert)} → {_shown(v['to'], inert)}"
                           for key, v in edit["fields"].items())
        lines.append(f"~ edited    {inert(_short(edit['id']))}  {inert(edit['description'])} "
                     f"({fields})")
    for gone in result["removed"]:
        lines.append(f"- removed   {inert(_short(gone['id']))}  {inert(gone['description'])}")
    for todo in result["todo"]:
        parts = [f"{todo[k]} {k}" for k in ("added", "completed", "changed", "removed")
                 if todo[k]]
        state = "active" if todo["active"] else "not active"
        if todo["paused"]:
            state += ", paused"
        lines.append(f"TODO {inert(todo['session'])}: {', '.join(parts) or 'state changed'} "
                     f"({state})")
    return "\n".join(lines)


def _shown(value: object, inert: Callable[[object], str]) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return "[" + ", ".join(inert(v) for v in value) + "]"
    return inert(value)
