"""A task as a text to edit in `$VISUAL`/`$EDITOR`, and that text read back as an edit
(`aidp tasks edit ID` with no field option; docs/guide.md, "aidp tasks edit").

The text, as `git commit` gives its message: comment lines explaining, the title on its
own line, one line per field, then a separator line and the body, which is kept exactly
as written below it (Markdown headings start with `#` too, so comments are only read
above the separator). What the edit changes is what differs from the draft it was
made from, field by field: a field someone else changed meanwhile stays theirs unless
it was changed here too. Pure: no file, no editor.
"""

from __future__ import annotations

from aidp.backlog import details
from aidp.core.errors import InvalidInput
from aidp.core.model import Record, priority_key, task_tags

SEPARATOR = "--- body (Markdown, up to 64 KiB): everything below this line ---"
FIELDS = ("priority", "type", "tags")


class Edit:
    """What an edited draft changes (None / empty: nothing of that field)."""

    def __init__(self) -> None:
        self.description: str | None = None
        self.priority: str | None = None
        self.task_type: str | None = None
        self.add_tags: list[str] = []
        self.remove_tags: list[str] = []
        self.body: str | None = None

    def empty(self) -> bool:
        return (self.description is None and self.priority is None and self.task_type is None
                and not self.add_tags and not self.remove_tags and self.body is None)


def values(task: Record, held: Record) -> dict[str, str]:
    """The draft's values of a task (`held`: its keys from details.shown, body included)."""
    return {"title": str(task.get("description", "")),
            "priority": priority_key(task.get("priority")),
            "type": str(held.get(details.TYPE, details.DEFAULT_TYPE)),
            "tags": ", ".join(task_tags(task)),
            "body": str(held.get(details.BODY, ""))}


def compose(task: Record, held: Record, short: str) -> str:
    """The text an editor is opened on."""
    shown = values(task, held)
    lines = [
        f"# Editing task {short} ({task.get('id')}). Lines starting with '#' above the",
        "# body's separator are ignored. The first line is the title (1-200 characters);",
        "# then one field a line: priority (high, medium, low), type (task, bug, feature,",
        "# chore, epic), tags (separated by commas). Below the separator, the body.",
        "# Save the file unchanged, or empty it, and nothing changes.",
        shown["title"],
        *(f"{name}: {shown[name]}".rstrip() for name in FIELDS),
        SEPARATOR,
    ]
    return "\n".join(lines) + "\n" + (shown["body"] + "\n" if shown["body"] else "")


def read(text: str, before: dict[str, str]) -> Edit | None:
    """The edit an edited draft asks for, against the draft's `before` values; None when
    the file was emptied (nothing but white space and comments). A bad line or value is
    refused (InvalidInput) before anything is written."""
    text = text.replace("\r\n", "\n")
    head, found, body = text.partition("\n" + SEPARATOR + "\n")
    if not found and text.rstrip("\n").endswith("\n" + SEPARATOR):
        head, found, body = text.rstrip("\n").rpartition("\n" + SEPARATOR)[0], SEPARATOR, ""
    lines = [line for line in head.split("\n")
             if line.strip() and not line.lstrip().startswith("#")]
    if not found:
        if not lines:
            return None
        raise InvalidInput("Invalid edit: the body's separator line is missing (keep the "
                           f"line {SEPARATOR!r}, or empty the file to change nothing)")
    if not lines:
        if body.strip():
            raise InvalidInput("Invalid edit: the title line is missing; give 1-200 characters")
        return None
    after = dict(before, title=lines[0].strip(), body=body)
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        key = name.strip().lower()
        if not colon or key not in FIELDS:
            raise InvalidInput(f"Invalid edit: line {line.strip()!r} is not a field; "
                               f"use one of {', '.join(FIELDS)} as 'name: value'")
        after[key] = value.strip()
    return _changes(before, after)


def _changes(before: dict[str, str], after: dict[str, str]) -> Edit:
    edit = Edit()
    if after["title"] != before["title"]:
        edit.description = after["title"]
    if after["priority"].lower() != before["priority"]:
        edit.priority = after["priority"]
    if after["type"].lower() != before["type"]:
        edit.task_type = after["type"]
    old = [t.strip() for t in before["tags"].split(",") if t.strip()]
    new = [t.strip() for t in after["tags"].split(",") if t.strip()]
    edit.add_tags = [t for t in dict.fromkeys(new) if t not in old]
    edit.remove_tags = [t for t in old if t not in new]
    if details.clean_body(after["body"]) != details.clean_body(before["body"]):
        edit.body = after["body"]
    return edit
