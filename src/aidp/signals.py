"""Signals in an agent's text: `File task:`, `Update task:` and `Todo pause:`. Pure.

The grammar is the original implementation's, matched case-insensitively anywhere in
a line, several per line, in the order they appear:

    File task: "DESCRIPTION" [priority: high|medium|low] [tags: a,b]
    Update task: ID status: pending|in_progress|done|abandoned [reason: "WHY"]
    Todo pause: "REASON"

The square brackets mark optional parts (they are not typed). Priority comes before
tags; tags run to the next white space and are split on commas, empty pieces dropped.
Straight or curly double quotes are accepted. Parsing never validates: an empty or
over-long description is still returned, so the caller can warn about it instead of
dropping it silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

QUOTED = r'["\u201c](?P<{name}>[^"\u201c\u201d]*)["\u201d]'

_FILE = (
    r"file\s+task\s*:\s*" + QUOTED.format(name="description")
    + r"(?:\s+priority\s*:\s*(?P<priority>high|medium|low)\b)?"
    + r"(?:\s+tags\s*:\s*(?P<tags>\S+))?"
)
_UPDATE = (
    r"update\s+task\s*:\s*(?P<ref>[^\s\"]+?)[,;]?\s+status\s*:\s*"
    # Any word: a status the backlog does not know is reported by the loop, not ignored.
    r"(?P<status>[A-Za-z][\w-]*)"
    r"(?:\s+reason\s*:\s*" + QUOTED.format(name="reason") + ")?"
)
_PAUSE = r"todo\s+pause\s*:\s*" + QUOTED.format(name="pause")

SIGNAL_RE = re.compile(
    f"(?P<file>{_FILE})|(?P<update>{_UPDATE})|(?P<todo_pause>{_PAUSE})", re.IGNORECASE
)
# What may wrap or follow an id in prose: `task_1_ab`, [task_1_ab], (ab12cd34), <…>,
# '…', **…**, and sentence punctuation; ids never start or end with any of these.
_ID_WRAPPERS = "`[]()<>'*.,;:"


@dataclass(frozen=True)
class FileTask:
    description: str
    priority: str = "medium"
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class UpdateTask:
    ref: str
    status: str
    reason: str | None = None


@dataclass(frozen=True)
class TodoPause:
    reason: str


Signal = FileTask | UpdateTask | TodoPause


def parse(line: str) -> list[Signal]:
    """Every signal in one line of agent text, in order."""
    found: list[Signal] = []
    for match in SIGNAL_RE.finditer(line):
        if match["file"] is not None:
            tags = tuple(t.strip() for t in (match["tags"] or "").split(","))
            found.append(
                FileTask(
                    description=match["description"].strip(),
                    priority=(match["priority"] or "medium").lower(),
                    tags=tuple(dict.fromkeys(t for t in tags if t)),
                )
            )
        elif match["update"] is not None:
            ref = match["ref"].strip(_ID_WRAPPERS)
            status = match["status"].lower().replace("-", "_")
            reason = match["reason"].strip() if match["reason"] else None
            found.append(UpdateTask(ref=ref, status=status, reason=reason))
        else:
            found.append(TodoPause(reason=match["pause"].strip()))
    return found


def parse_text(text: str) -> list[Signal]:
    """Every signal in a block of text, line by line."""
    return [signal for line in text.splitlines() for signal in parse(line)]


def signal_lines(text: str) -> set[str]:
    """The lines of `text` (stripped) that hold a signal: used to ignore an agent that
    merely echoes the prompt it was given, whose instructions show the grammar."""
    return {line.strip() for line in text.splitlines() if SIGNAL_RE.search(line)}
