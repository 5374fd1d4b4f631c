"""The clean-up every foreign value goes through on its way into a task (each format
module of aidp.interchange calls these; the package re-exports them), and `BadFile`,
the one error an import raises: the file, the line and the field named, exit 2."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from aidp.core.errors import InvalidInput
from aidp.core.model import (
    CONTROL_CHARS,
    CONTROL_RE,
    INVISIBLE_CHARS,
    MAX_DESCRIPTION,
    MAX_TAG,
    Record,
    canonical,
    format_ts,
    now_micros,
    parse_ts,
    stamp_out_of_reach,
)

OF_YEARS = "aidp can write (years 1 to 9999, one µs to spare)"  # model.MAX_TS

_SPACE = re.compile(r"\s+")
_TAG_BAD = re.compile(rf"[\s,{CONTROL_CHARS}{INVISIBLE_CHARS}]+")
_COLON = re.compile(r"\s*:\s*")  # "priority: high" → "priority:high"


class BadFile(InvalidInput):
    """The file cannot be imported; the message names where and what (exit 2)."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}; nothing was imported")


# --- cleaning foreign values -------------------------------------------------------


def one_line(value: object) -> str:
    """Text on one line: white space runs (newlines included) become one space, other
    control characters go."""
    text = value if isinstance(value, str) else "" if value is None else str(value)
    return CONTROL_RE.sub("", _SPACE.sub(" ", text)).strip()


def description(value: object, extra: dict[str, Any], key: str, where: str) -> str:
    """A task description from a foreign title: on one line, shortened to 200
    characters (the whole title is then kept in `extra[key]`)."""
    text = one_line(value)
    if not text:
        raise BadFile(where, f"field '{key}' is empty; a task needs a title")
    if len(text) > MAX_DESCRIPTION:
        extra.setdefault(key, value)
        text = text[: MAX_DESCRIPTION - 1].rstrip() + "…"
    return text


def tags(values: Iterable[object], extra: dict[str, Any], key: str) -> list[str]:
    """Foreign labels as aidp tags: spaces around a colon go, other spaces and commas
    become '-', at most 64
    characters. When any label had to change, the originals are kept in extra[key]."""
    out: list[str] = []
    changed = False
    originals = []
    for value in values:
        if not isinstance(value, str):
            continue
        originals.append(value)
        tag = _TAG_BAD.sub("-", _COLON.sub(":", value.strip())).strip("-")[:MAX_TAG]
        if tag != value:
            changed = True
        if tag and tag not in out:
            out.append(tag)
    if changed:
        extra.setdefault(key, originals)
    return out


def timestamp(value: object, where: str, field: str) -> str | None:
    """An ISO-8601 (or Taskwarrior's 20261123T173125Z) timestamp as aidp writes them;
    None when empty; a BadFile when unreadable."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise BadFile(where, f"field '{field}' is not a timestamp: {_shown(value)}")
    text = value.strip()
    compact = re.fullmatch(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z", text)
    if compact:
        text = "{}-{}-{}T{}:{}:{}Z".format(*compact.groups())
    micros = parse_ts(text)
    if micros is None or stamp_out_of_reach(text):
        years = f" {OF_YEARS}" if micros is not None else ""
        raise BadFile(where, f"field '{field}' is not an ISO-8601 timestamp{years}: "
                             f"{_shown(value)}")
    return format_ts(micros)


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode(errors="replace")
    text = one_line(text)
    return repr(text if len(text) <= 60 else text[:59] + "…")


def choice(value: object, mapping: dict[str, str], where: str, field: str) -> str:
    """A foreign status or priority word through `mapping` (keys lower case)."""
    key = one_line(value).lower() if isinstance(value, (str, int)) else None
    if key is None or key not in mapping:
        # (in any case); an empty key means the field may also be empty or left out
        accepted = ", ".join(sorted(k for k in mapping if k))
        if "" in mapping:
            accepted += ", or none"
        raise BadFile(where, f"field '{field}' has an unknown value {_shown(value)}; "
                             f"accepted: {accepted}")
    return mapping[key]


def build_task(fields: dict[str, Any]) -> Record:
    """A task record (without id) from mapped fields, with aidp's invariants: timestamps
    ordered sensibly, closing stamps only for the closing status."""
    task = {k: v for k, v in fields.items() if v not in (None, "")}
    status = task.get("status", "pending")
    task["status"] = status
    task.setdefault("priority", "medium")
    task.setdefault("tags", [])
    if "created_at" not in task:
        task["created_at"] = task.get("updated_at") or format_ts(now_micros())
    stamps = [task[k] for k in ("created_at", "started_at", "completed_at", "abandoned_at",
                                "updated_at") if k in task]
    task["updated_at"] = max(stamps, key=lambda s: parse_ts(s) or 0)
    if status == "done":
        task.setdefault("completed_at", task["updated_at"])
        task.pop("abandoned_at", None)
        task.pop("abandoned_reason", None)
    elif status == "abandoned":
        task.setdefault("abandoned_at", task["updated_at"])
        task.pop("completed_at", None)
    else:
        for key in ("completed_at", "abandoned_at", "abandoned_reason"):
            task.pop(key, None)
    if status == "in_progress":
        task.setdefault("started_at", task["updated_at"])
    return canonical(task)
