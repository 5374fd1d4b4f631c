"""A Markdown checklist of the backlog, grouped by status: open tasks as `- [ ]`,
finished ones as `- [x]`, each with its priority (and type), tags and id, its close or
abandon reason, its work queue: `@assignee`, `waits on` ids, `epic` id; then its notes
as indented items and its body (Markdown, kept as such, indented into the item after a
blank line). Read back by `tasks import --from markdown` (docs/guide.md): every
character of a text on the task's line that the layout uses (`(`, `)`, a backquote,
`#`…) is escaped with a backslash, so a line splits into its parts one way only; what
the checklist does not show (times, unknown keys) comes back as the import's own
(filed at the id's second)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from aidp.core.model import CONTROL_RE, PRIORITIES, STATUSES, TASK_ID_RE, Record, format_ts
from aidp.interchange import BadFile, Incoming
from aidp.interchange.native import check_native

TITLES = {"pending": "Pending", "in_progress": "In progress", "done": "Done",
          "abandoned": "Abandoned"}
_ESCAPED = re.compile(r"([\\`*_\[\]<>|#()])")


def _cell(text: object) -> str:
    return _ESCAPED.sub(r"\\\1", CONTROL_RE.sub(" ", str(text)))


def _code(text: object) -> str:
    """An id in a code span: nothing in it can end the span or the line."""
    return CONTROL_RE.sub(" ", str(text)).replace("`", "'")


def _indented(body: str) -> list[str]:
    """A body inside its list item: every line indented two spaces (a blank one stays
    blank), control characters but tabs as spaces."""
    return [f"  {line}" if line.strip() else "" for line in
            (CONTROL_RE.sub(lambda m: m.group() if m.group() == "\t" else " ", raw)
             for raw in body.split("\n"))]


def dump(tasks: Sequence[Record]) -> bytes:
    groups: dict[str, list[Record]] = {s: [] for s in (*STATUSES, "other")}
    for task in tasks:
        groups.get(str(task.get("status")), groups["other"]).append(task)
    lines = ["# Backlog", ""]
    for status, members in groups.items():
        if not members:
            continue
        lines += [f"## {TITLES.get(status, 'Other')} ({len(members)})", ""]
        for task in members:
            box = "x" if status in ("done", "abandoned") else " "
            text = _cell(task.get("description", ""))
            if status == "abandoned":
                text = f"~~{text}~~"
            kind = f", {_cell(task['task_type'])}" if task.get("task_type") else ""
            parts = [f"- [{box}] {text}", f"({_cell(task.get('priority', 'medium'))}{kind})"]
            parts += [f"#{_cell(t)}" for t in task.get("tags") or []]
            parts.append(f"`{task.get('id', '')}`")
            if isinstance(task.get("assignee"), str):
                parts.append(f"@{_cell(task['assignee'])}")
            if task.get("blocked_by"):
                waits = ", ".join(f"`{_code(b)}`" for b in task["blocked_by"])
                parts.append(f"(waits on {waits})")
            if isinstance(task.get("parent"), str):
                parts.append(f"(epic `{_code(task['parent'])}`)")
            reason = {"abandoned": "abandoned_reason", "done": "close_reason"}.get(status)
            if reason is not None and task.get(reason):
                parts.append(f"— {_cell(task[reason])}")
            lines.append(" ".join(parts))
            for note in task.get("notes") or ():
                who = f"{_cell(note['author'])}: " if isinstance(note.get("author"), str) else ""
                lines.append(f"  - {who}{_cell(note['text'])}")
            if isinstance(task.get("body"), str) and task["body"]:
                lines += ["", *_indented(task["body"]), ""]
        lines.append("")
    if len(lines) == 2:
        lines.append("No tasks.")
    return ("\n".join(lines).rstrip() + "\n").encode()


# --- the import ------------------------------------------------------------------------

_TEXT = r"(?:\\.|[^\\`()])*"  # a cell: no unescaped parenthesis or backquote
_TASK = re.compile(
    rf"- \[(?P<box>[ x])\] (?P<text>{_TEXT}) \((?P<priority>{_TEXT})\)"
    r"(?P<tags>(?: #(?:\\.|[^\\\s`()])+)*) `(?P<id>[^`]*)`"
    rf"(?: @(?P<who>{_TEXT}?))?"
    r"(?: \(waits on (?P<waits>`[^`]*`(?:, `[^`]*`)*)\))?"
    r"(?: \(epic `(?P<epic>[^`]*)`\))?"
    rf"(?: — (?P<reason>{_TEXT}))?$")
_HEADING = re.compile(r"## (?P<title>.+?) \(\d+\)$")
_NOTE = re.compile(rf"  - (?:(?P<author>{_TEXT}?): )?(?P<text>{_TEXT})$")
_STATUS_OF = {title: status for status, title in TITLES.items()}
_SHAPE = ("is not a line of aidp's Markdown export (`- [ ] TEXT (PRIORITY) #TAG `ID`` "
          "under a `## STATUS (N)` heading, then its notes and body indented)")


def _plain(cell: str) -> str:
    return re.sub(r"\\(.)", r"\1", cell)


def parse(text: str, name: str) -> list[Incoming]:
    """The tasks of a checklist this module wrote, with their ids (an import keeps
    them, so importing it again files nothing), status (the section), priority, type,
    tags, close or abandon reason, assignee (a claim), blockers, epic, notes and body."""
    items: list[Incoming] = []
    status: str | None = None
    current: Incoming | None = None  # the task whose notes, then body, may follow
    body: list[str] | None = None  # its body's lines, once a blank line came
    started = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        where = f"{name}: line {number}"
        if current is not None and line.startswith("  ") and line.strip():
            if body is not None:
                body.append(line[2:])
                continue
            note = _NOTE.fullmatch(line)
            if note is None:
                raise BadFile(where, _SHAPE)
            author = _plain(note["author"]) if note["author"] is not None else None
            current.notes.append((author, _plain(note["text"]), None))
            continue
        if not line.strip():
            if current is not None:
                body = [] if body is None else [*body, ""]
            continue
        _take_body(current, body, f"{name}: line {started}")
        current, body = None, None
        if line in ("# Backlog", "No tasks."):
            continue
        heading = _HEADING.fullmatch(line)
        if heading:
            status = _STATUS_OF.get(heading["title"])
            if status is None:
                raise BadFile(where, f"section {heading['title']!r} is not a status aidp "
                                     f"knows; accepted: {', '.join(TITLES.values())}")
            continue
        found = _TASK.fullmatch(line)
        if found is None or status is None:
            raise BadFile(where, _SHAPE)
        current, started = _item(found, status, where, number), number
        items.append(current)
    _take_body(current, body, f"{name}: line {started}")
    return items


def _take_body(item: Incoming | None, lines: list[str] | None, where: str) -> None:
    """The indented lines after a task (and its notes) are its body, checked as aidp
    checks one."""
    from aidp.backlog import details
    from aidp.core.errors import InvalidInput

    if item is None or not lines or not "".join(lines).strip():
        return
    try:
        item.details[details.BODY] = details.clean_body("\n".join(lines))
    except InvalidInput as exc:
        raise BadFile(where, f"its body is refused: {exc}") from None


def _item(found: re.Match[str], status: str, where: str, number: int) -> Incoming:
    from aidp.backlog import details
    from aidp.core.errors import InvalidInput

    text = found["text"]
    if status == "abandoned" and text.startswith("~~") and text.endswith("~~"):
        text = text[2:-2]
    tid = found["id"]
    if not TASK_ID_RE.fullmatch(tid):
        raise BadFile(where, f"field 'id' is not a task id (task_<seconds>_<8 hex>): {tid!r}")
    priority, _, kind = _plain(found["priority"]).partition(", ")
    if priority not in PRIORITIES:
        raise BadFile(where, f"field 'priority' has an unknown value {priority!r}; "
                             f"accepted: {', '.join(PRIORITIES)}")
    held: dict[str, str] = {}
    try:
        if kind:
            held[details.TYPE] = details.validate_type(kind)
        if status == "done" and found["reason"]:
            held[details.REASON] = details.check(reason=_plain(found["reason"]))[2] or ""
    except InvalidInput as exc:
        raise BadFile(where, str(exc)) from None
    filed = format_ts(int(tid.split("_")[1]) * 1_000_000)
    record: Record = {"id": tid, "description": _plain(text).strip(), "status": status,
                      "priority": priority, "created_at": filed, "updated_at": filed,
                      "tags": [_plain(tag) for tag in found["tags"].split(" #")[1:]]}
    if status == "in_progress":
        record["started_at"] = filed
    elif status == "done":
        record["completed_at"] = filed
    elif status == "abandoned":
        record["abandoned_at"] = filed
        if found["reason"]:
            record["abandoned_reason"] = _plain(found["reason"])
    waits = re.findall(r"`([^`]*)`", found["waits"] or "")
    who = _plain(found["who"]).strip() if found["who"] else None
    return Incoming(tid, check_native(record, where), native=True, line=number,
                    blocked_by=waits, parent=found["epic"], assignee=who, details=held)
