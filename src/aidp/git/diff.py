"""The diff driver: git shows the tasklist as readable task lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


from aidp.backlog import details
from aidp.git.changes import VERBS
from aidp.tasklist.git_runner import run

# --- the diff driver ------------------------------------------------------------------------

DIFF_ATTRIBUTE = ".aidp/tasklist.jsonl diff=aidp"


def _hex(tid: str) -> str:
    return tid.rpartition("_")[2] or tid


def textconv(data: bytes) -> str:
    """The tasklist as git's diff driver shows it: one readable line per line of the
    file, so `git diff` and `git log -p` show which tasks and TODO items changed how.

    Nothing a commit changes may be invisible (docs/security.md): a record's line is
    its summary, then every field the summary does not show (stamps, session, unknown
    keys) as compact JSON; a line that is not exactly that JSON as aidp writes it
    (spaces, a repeated key, escapes) is shown raw below it; a line that is no record
    is shown whole. A file with no record at all (`diff=aidp` given to code) is shown
    line by line as it is. Every character is inert (tabs kept)."""
    from aidp.core.terminal import inert  # not at start-up: aidp.git is read by hot commands
    from aidp.tasklist.log import parse_line

    raws = data.split(b"\n")
    if raws and raws[-1] == b"":
        raws.pop()
    records = [parse_line(raw) for raw in raws]
    if not any(record is not None for record in records):  # not a tasklist
        return "".join(_line(raw, inert) + "\n" for raw in raws)
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
    bodies: dict[str, str] = {}  # task -> its body so far in the file
    for raw, record in zip(raws, records, strict=True):
        if record is None:
            out.append("damaged line: " + _line(raw, inert) if raw.strip() else
                       _line(raw, inert))
            continue
        changed: list[str] = []
        if _is_detail(record, details.BODY):
            line, shown, changed = _body_summary(record, bodies, inert)
        else:
            line, shown = _summary(record, sessions, contents, inert)
        rest = {k: v for k, v in record.items() if k not in shown}
        out.append(f"{line}  {inert(_compact(rest))}" if rest else line)
        out += changed
        if not _canonical(raw, record):
            out.append("  as written: " + _line(raw, inert))
    return "".join(line + "\n" for line in out)


def _is_detail(record: dict[str, Any], kind: str) -> bool:
    """Whether `record` is a task's body, type or close reason record (`kind`) whose
    task and value are text (else it is shown as any other record)."""
    return (record.get("type") == kind and isinstance(record.get("task"), str)
            and isinstance(record.get(kind), str))


def _body_summary(record: dict[str, Any], bodies: dict[str, str],
                  inert: Callable[[object], str]) -> tuple[str, set[str], list[str]]:
    """A body record as a summary line and the lines it changed against the task's body
    before it in the file (every line of a first one), each `    + …` or `    - …`."""
    import difflib

    task, text = record["task"], record[details.BODY]
    old = bodies.get(task, "")
    bodies[task] = text
    before, after = (old.split("\n") if old else []), (text.split("\n") if text else [])
    changed = [line for line in difflib.unified_diff(before, after, n=0, lineterm="")
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    added = sum(line.startswith("+") for line in changed)
    what = (f"body removed (was {_lines(len(before))})" if not after else
            f"body set ({_lines(len(after))})" if not before else
            f"body changed ({_lines(len(after))}, was {len(before)}: +{added} -"
            f"{len(changed) - added})")
    shown = {"type", "task", details.BODY, *(["id"] if record.get("id") == details.record_id(
        details.BODY, task) else [])}
    return (f"task {inert(_hex(task))} {what}", shown,
            [f"    {line[0]} {_line(line[1:].encode('utf-8', 'surrogatepass'), inert)}"
             for line in changed])


def _lines(n: int) -> str:
    return f"{n} line" if n == 1 else f"{n} lines"


def _summary(record: dict[str, Any], sessions: dict[str, str],
             contents: dict[tuple[str, str], str],
             inert: Callable[[object], str]) -> tuple[str, set[str]]:
    """(the readable part of a record's line, the keys it shows in full)."""
    kind = record.get("type")
    if kind is None:
        return _task_line(record, inert)
    if kind == "todo_item":
        gen, item = str(record.get("list")), str(record.get("item"))
        # its text, or (a record without one) the item's text from another line
        text = ["content"] if record.get("content") and "content" in _strings(
            record, "content") else []
        where = f"todo {inert(sessions.get(gen, gen))}"
        what = inert(record.get("content") or contents.get((gen, item), item))
        if record.get("deleted") is True:
            return f"{where}: deleted {what}", {"type", "deleted", *text}
        sub = "  subtask" if isinstance(record.get("parent"), str) else ""
        return (f"{where}:{sub} [{inert(record.get('status'))}] {what}",
                {"type", *text, *_strings(record, "status")})
    if kind == "todo_head":
        state = "active" if record.get("active") is True else "cleared"
        if record.get("paused") is True:
            state += f", paused: {inert(record.get('pause_reason') or '')}"
        flags = [key for key in ("active", "paused") if isinstance(record.get(key), bool)]
        if record.get("paused") is True and record.get("pause_reason"):
            flags += _strings(record, "pause_reason")
        return (f"todo {inert(record.get('session'))}: list {state}",
                {"type", *flags, *_strings(record, "session")})
    if kind == "todo_list":
        items = record["items"] if isinstance(record.get("items"), list) else []
        return (f"todo {inert(record.get('session'))}: snapshot of {len(items)} items",
                {"type", *_strings(record, "session")})
    for detail, label in ((details.TYPE, "type"), (details.REASON, "close reason")):
        if _is_detail(record, detail):
            canonical = record.get("id") == details.record_id(detail, record["task"])
            return (f"task {inert(_hex(record['task']))} {label}: {inert(record[detail])}",
                    {"type", "task", detail, *(["id"] if canonical else [])})
    named = record.get("fields")
    if kind == "task_fields" and isinstance(record.get("task"), str) and isinstance(
            named, list) and all(isinstance(name, str) for name in named):
        # which fields the task line after it set (field-level merge)
        return (f"task {inert(_hex(record['task']))} sets {inert(', '.join(named)) or 'no field'}",
                {"type", "task", "fields"})
    return f"{inert(kind)} {inert(record.get('id'))}", {"type", *_strings(record, "id")}


def _strings(record: dict[str, Any], *keys: str) -> list[str]:
    """The `keys` a summary shows as text: only when they are text (anything else
    stays in the JSON part, so a number or a list is not mistaken for a word)."""
    return [key for key in keys if isinstance(record.get(key), str)]


def _line(raw: bytes, inert: Callable[[object], str]) -> str:
    """A line of the file as it is: inert, tabs kept, bytes that are not UTF-8 as \\xNN."""
    text = raw.decode("utf-8", "backslashreplace")
    return "\t".join(inert(part) for part in text.split("\t"))


def _canonical(raw: bytes, record: dict[str, Any]) -> bool:
    """Whether `raw` is exactly the compact JSON of what it parsed to (aidp's own way of
    writing a record): then the summary and fields show all of it."""
    import orjson

    try:
        return orjson.dumps(record) == raw
    except (orjson.JSONEncodeError, TypeError):  # deeper than orjson writes
        return False


def _compact(value: object) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode("utf-8")
    except (orjson.JSONEncodeError, TypeError):  # deeper than orjson writes
        return repr(value)


def _task_line(task: dict[str, Any],
               inert: Callable[[object], str]) -> tuple[str, set[str]]:
    shown = set(_strings(task, "description", "status", "priority"))
    if task.get("abandoned_reason"):
        shown.update(_strings(task, "abandoned_reason"))
    values = task.get("tags")
    if isinstance(values, list) and all(isinstance(t, str) for t in values):
        shown.add("tags")
    tags = " ".join(f"#{inert(t)}" for t in values) if "tags" in shown and values else ""
    priority = inert(task["priority"]) if "priority" in shown else "no priority"
    line = (f"task {inert(_hex(str(task.get('id'))))} [{inert(task.get('status'))}] "
            f"({priority}) {inert(task.get('description'))}")
    if task.get("abandoned_reason") and "abandoned_reason" in shown:
        line += f" — {inert(task['abandoned_reason'])}"
    return line + (f" {tags}" if tags else ""), shown


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
    inside = run(root, "rev-parse", "--git-dir", check=False)
    if inside is None or inside.returncode != 0:
        return None
    done = run(root, "config", "--get", "diff.aidp.textconv", check=False)
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return False
    run(root, "config", "diff.aidp.textconv", textconv_command())
    return True


def render_changes(result: dict[str, Any], names: dict[str, str] | None = None) -> str:
    """`tasks changes` for people: one line per change, then the TODO lists. `names`:
    how to show an id (its short id); else its hex part."""
    from aidp.core.terminal import inert

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
        verb = VERBS.get(str(change["to"]), "changed")
        was = f"{inert(change['from'])} → " if change["from"] is not None else "filed → "
        lines.append(f"~ {verb:<9} {inert(_short(change['id']))}  "
                     f"{inert(change['description'])} ({was}{inert(change['to'])})")
    for edit in result["edited"]:
        fields = "; ".join(f"{inert(key)}: {_shown(v['from'], inert, key)} → "
                           f"{_shown(v['to'], inert, key)}" for key, v in edit["fields"].items())
        lines.append(f"~ edited    {inert(_short(edit['id']))}  {inert(edit['description'])} "
                     f"({fields})")
    for gone in result["removed"]:
        lines.append(f"- removed   {inert(_short(gone['id']))}  {inert(gone['description'])}")
    lines += _record_lines(result, _short, inert)
    lines += overwritten_lines(result.get("overwritten", []), _short)
    for todo in result["todo"]:
        parts = [f"{todo[k]} {k}" for k in ("added", "completed", "changed", "removed")
                 if todo[k]]
        state = "active" if todo["active"] else "not active"
        if todo["paused"]:
            state += ", paused"
        lines.append(f"TODO {inert(todo['session'])}: {', '.join(parts) or 'state changed'} "
                     f"({state})")
    return "\n".join(lines)


def _record_lines(result: dict[str, Any], short: Callable[[str], str],
                  inert: Callable[[object], str]) -> list[str]:
    """`tasks changes`' lines for the work queue's records and records of other kinds."""
    def task(entry: dict[str, Any]) -> str:
        tid = entry.get("id")
        named = inert(short(tid)) if isinstance(tid, str) else "(no task)"
        return f"{named}  {inert(entry.get('description'))}"

    out = []
    for note in result.get("notes", []):
        text = note["text"] if len(note["text"]) <= 60 else note["text"][:59] + "…"
        who = f" (by {inert(note['author'])})" if note.get("author") else ""
        out.append(f"+ note      {task(note)}: {inert(text)!s}{who}")
    for link in result.get("links", []):
        other = inert(short(link["other"])) if link["other"] else ""
        if link["kind"] == "blocked_by":
            out.append(f"- unblocked {task(link)} (no longer waits on {other})" if link["removed"]
                       else f"+ blocked   {task(link)} (waits on {other})")
        else:
            out.append(f"~ epic      {task(link)} "
                       f"({'no epic' if link['removed'] else 'in epic ' + other})")
    for claim in result.get("claims", []):
        verb, how = ("released", "was") if claim["released"] else ("claimed", "by")
        out.append(f"~ {verb:<9} {task(claim)} ({how} {inert(claim['assignee'])})")
    for record in result.get("other", []):
        of = f" (task {inert(short(record['id']))})" if record.get("id") else ""
        out.append(f"? record    {inert(record['record'])}: a '{inert(record['type'])}' "
                   f"record this version does not show{of}")
    return out


def overwritten_lines(entries: list[dict[str, Any]], short: Callable[[str], str], *,
                      yours: bool = False) -> list[str]:
    """One line per value a merge overwrote (git.changes.overwritten). `yours`: as
    `sync` tells it, from the side of the person who pulled ("ours")."""
    from aidp.core.terminal import inert

    def who(entry: dict[str, Any], side: str) -> str:
        if yours and side == "ours":
            return "yours"
        by = entry.get("kept_by" if side != entry["side"] else "lost_by") or ""
        return f"from {inert(by)}" if by else f"from {side}"

    out = []
    for entry in entries:
        task = f"{inert(short(entry['id']))} {inert(entry.get('description'))}"
        other = "theirs" if entry["side"] == "ours" else "ours"
        if yours and entry.get("claim_lost") and entry["side"] == "ours":
            out.append(f"! {task}: your change to {inert(entry['lost'])} did not apply: it "
                       f"was {inert(entry['kept'])} ({who(entry, other)}) before you saw it; "
                       f"it stays {inert(entry['kept'])}")
            continue
        field = f"tag {inert(entry['tag'])}" if entry["field"] == "tags" else entry["field"]
        mark = "!" if yours and entry["side"] == "ours" else "~"
        out.append(f"{mark} {task}: {field} {_shown(entry['lost'], inert, field)} "
                   f"({who(entry, entry['side'])}) replaced by "
                   f"{_shown(entry['kept'], inert, field)} ({who(entry, other)})")
    return out


def told_lines(claims: list[dict[str, Any]], replaced: list[dict[str, Any]],
               short: Callable[[str], str]) -> list[str]:
    """What `sync` tells beside the conflicts: one line per claim race on a task you held
    (git.outcomes.claim_outcomes) and per value of yours a fast-forward replaced
    (git.outcomes.replaced_values)."""
    from aidp.core.terminal import inert

    out = []
    for entry in claims:
        task = f"{inert(short(entry['id']))} {inert(entry.get('description'))}"
        by = f" (from {inert(entry['by'])})" if entry.get("by") else ""
        if entry["won"]:
            names = ", ".join(inert(n) for n in entry["others"])
            out.append(f"✓ {task}: you hold it; the claim of {names}{by} came after yours")
        elif entry.get("taken_over"):
            out.append(f"! {task}: {inert(entry['holder'])}{by} took it over when your lease "
                       "ran out; you no longer hold it")
        else:
            out.append(f"! {task}: {inert(entry['holder'])} holds it{by}: their claim came "
                       "first; you no longer hold it")
    for entry in replaced:
        task = f"{inert(short(entry['id']))} {inert(entry.get('description'))}"
        by = f" (from {inert(entry['kept_by'])})" if entry.get("kept_by") else ""
        field = entry["field"]
        out.append(f"~ {task}: {field} {_shown(entry['lost'], inert, field)} → "
                   f"{_shown(entry['kept'], inert, field)}{by}")
    return out


def _shown(value: object, inert: Callable[[object], str], key: str = "") -> str:
    if key == details.BODY:  # its first line and its length, not pages of it
        return inert(details.preview(value))
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return "[" + ", ".join(inert(v) for v in value) + "]"
    return inert(value)
