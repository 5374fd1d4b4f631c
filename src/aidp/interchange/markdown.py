"""A Markdown checklist of the backlog, grouped by status (export only): open tasks
as `- [ ]`, finished ones as `- [x]`, each with its priority (and type), tags and id,
its close or abandon reason, its work queue: `@assignee`, `waits on` ids, `epic` id;
then its body (Markdown, kept as such, indented into the item) and its notes as
indented items."""

from __future__ import annotations

from collections.abc import Sequence

from aidp.core.model import CONTROL_RE, STATUSES, Record

TITLES = {"pending": "Pending", "in_progress": "In progress", "done": "Done",
          "abandoned": "Abandoned"}


def _cell(text: object) -> str:
    import re

    value = CONTROL_RE.sub(" ", str(text))
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", value)


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
            if isinstance(task.get("body"), str) and task["body"]:
                lines += ["", *_indented(task["body"]), ""]
            for note in task.get("notes") or ():
                who = f"{_cell(note['author'])}: " if isinstance(note.get("author"), str) else ""
                lines.append(f"  - {who}{_cell(note['text'])}")
        lines.append("")
    if len(lines) == 2:
        lines.append("No tasks.")
    return ("\n".join(lines).rstrip() + "\n").encode()
