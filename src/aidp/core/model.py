"""Tasks, statuses, priorities, ids, timestamps and validation. Pure: no I/O.

A task is kept as the plain dict it is stored as (see docs/file-format.md), so keys
written by other versions survive a round trip untouched.
"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import orjson

from aidp.core.errors import InvalidInput

Record = dict[str, Any]

STATUSES = ("pending", "in_progress", "done", "abandoned")
OPEN_STATUSES = ("pending", "in_progress")
PRIORITIES = ("high", "medium", "low")
# Keyed by str, but looked up with whatever a file holds (a missing or odd priority: .get)
PRIORITY_RANK: dict[Any, int] = {"high": 0, "medium": 1, "low": 2}
OTHER_PRIORITY = "other"


def json_elements(records: list[Record]) -> memoryview:
    """`records` as the elements of `tasks list --json`'s indented array: each indented
    by two more spaces, joined by `,\n`, without the brackets (a view: the megabytes of
    a long list are not copied again). The one encoder of that output: the store keeps
    each open task's record so (store/fill.py's `task_row`), and cli/output.py's
    `write_batches` prints those bytes as they are, or encodes records here."""
    return memoryview(orjson.dumps(records, option=orjson.OPT_INDENT_2))[2:-2]


def priority_key(value: object) -> str:
    """THE reading of a task's stored priority, for every view (list marker, stats,
    prime, filters): exactly `high`, `medium` or `low` as written; `medium` when the key
    is missing or null (a null key counts as left out, and medium is the default); and
    `other` for anything else (`"HIGH"`, `"urgent"`: another writer's value, shown as ◇
    and counted as `other`). Sorting ranks `other` with medium (priority_rank)."""
    if value is None:
        return "medium"
    return value if type(value) is str and value in PRIORITY_RANK else OTHER_PRIORITY


def priority_rank(value: object) -> int:
    """Sort rank of a stored priority: high 0, medium (also missing, null, other) 1, low 2."""
    return PRIORITY_RANK.get(priority_key(value), 1)


MAX_DESCRIPTION = 200
MAX_TAG = 64
MAX_REASON = 1000

# Key order of the original Ruby implementation; unknown keys follow in their own order.
TASK_KEY_ORDER = (
    "id",
    "description",
    "status",
    "priority",
    "created_at",
    "updated_at",
    "session",
    "discovered_during",
    "started_at",
    "completed_at",
    "abandoned_at",
    "abandoned_reason",
    "tags",
)

TASK_ID_RE = re.compile(r"task_\d+_[0-9a-f]{8}")
# C0, DEL and C1 control characters: the ONE definition (fold, interchange, markdown use it)
CONTROL_CHARS = r"\x00-\x1f\x7f-\x9f"
CONTROL_RE = re.compile(f"[{CONTROL_CHARS}]")
# Characters a reader cannot see but that change what is shown or compared: every
# Unicode format character (Cf: bidi overrides and isolates, zero-width, tag
# characters), Zl/Zp, and the other default-ignorable code points (Hangul fillers,
# the combining grapheme joiner, variation selectors). Human output shows them as
# \uNNNN (terminal.inert); tags refuse them. U+FE0E/U+FE0F (text/emoji presentation,
# part of ordinary emoji such as a red heart) are left alone.
INVISIBLE_CHARS = (
    "\xad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f"
    "\u3164\ufe00-\ufe0d\ufeff\uffa0\ufff0-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICRO = timedelta(microseconds=1)


# --- time -------------------------------------------------------------------------


def now_micros() -> int:
    return time.time_ns() // 1000


def format_ts(micros: int) -> str:
    """UTC with microseconds, e.g. 2026-11-22T02:25:33.123456Z."""
    seconds, fraction = divmod(micros, 1_000_000)
    when = time.gmtime(seconds)
    if when.tm_year < 1000:  # strftime's %Y does not pad it to four digits
        return f"{when.tm_year:04d}" + time.strftime("-%m-%dT%H:%M:%S", when) + f".{fraction:06d}Z"
    return time.strftime("%Y-%m-%dT%H:%M:%S", when) + f".{fraction:06d}Z"


# The stamps aidp can read and write back (docs/file-format.md, "Damage"): from
# 0001-01-01T00:00:00Z to one microsecond before 9999-12-31T23:59:59.999999Z, so the
# stamp a write steps to (one microsecond later) is one too. A record whose
# `updated_at` is outside is damage (line.admit); the stamps that are only read
# (created_at, completed_at, …) are read as they are.
MIN_TS = -62_135_596_800_000_000  # 0001-01-01T00:00:00.000000Z
MAX_TS = 253_402_300_799_999_998  # 9999-12-31T23:59:59.999998Z
# Only a stamp of year 0001 or 9999 can lie outside: an offset moves it by under a day.
_EDGE_YEARS = ("0001", "9999")


# A dict, not functools.lru_cache: most lookups are misses (every line of a fold has its
# own updated_at), and an lru miss costs twice a parse; a dict miss almost nothing.
_TS_CACHE: dict[str, int | None] = {}
_TS_CACHE_SIZE = 65536


def parse_ts(value: str) -> int | None:
    """Microseconds since the epoch for any ISO-8601 timestamp; None if unreadable.

    Timestamps without an offset are taken as UTC.
    """
    found = _TS_CACHE.get(value, _TS_CACHE)
    if found is not _TS_CACHE:
        return found  # type: ignore[return-value]
    result = _micros(value) if type(value) is str else None
    if len(_TS_CACHE) >= _TS_CACHE_SIZE:
        _TS_CACHE.clear()
    _TS_CACHE[value] = result
    return result


def parse_ts_once(value: object) -> int:
    """ts_of's value for one timestamp, without the cache: for a fold's updated_at, which
    differs on nearly every line (a cache would only cost)."""
    micros = _micros(value) if type(value) is str else None
    return UNKNOWN_TS if micros is None else micros


def stamp_out_of_reach(value: object) -> bool:
    """Whether `value` is a timestamp that parses to an instant outside what aidp can read
    and write back (MIN_TS..MAX_TS): `9999-12-31T23:59:59.999999Z`, or a `-HH:MM` offset
    that moves year 9999 into year 10000. An unreadable value is not out of reach: it
    reads as UNKNOWN_TS, as before. Cheap for every other stamp (the fold calls it on
    every line): only a string of year 0001 or 9999 is parsed."""
    if type(value) is not str or not value.startswith(_EDGE_YEARS):
        return False
    micros = _micros(value)
    return micros is not None and not MIN_TS <= micros <= MAX_TS


def _micros(value: str) -> int | None:
    """The one parse of a timestamp: microseconds since the epoch, an offset-less value
    taken as UTC; None if unreadable."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return (parsed - _EPOCH) // _ONE_MICRO


# What ts_of gives a missing or unreadable timestamp: before every real one.
UNKNOWN_TS = -(1 << 62)


def ts_of(record: Record, key: str = "updated_at") -> int:
    """The record's timestamp in microseconds; unreadable or missing sorts first."""
    value = record.get(key)
    if isinstance(value, str):
        parsed = parse_ts(value)
        if parsed is not None:
            return parsed
    return UNKNOWN_TS


DAY = 86_400 * 1_000_000
CLOSED_STATUSES = ("done", "abandoned")


def week_start(micros: int) -> int:
    """Monday 00:00 UTC of the ISO week holding `micros`."""
    days = micros // DAY
    return (days - (days + 3) % 7) * DAY  # 1970-01-01 was a Thursday


def finished_at(task: Record, updated: int | None = None) -> int | None:
    """When a done or abandoned task was finished (µs); None for any other status.

    The closing stamp (`completed_at`, `abandoned_at`) when readable, never later than
    the record's own `updated_at` (a hand edit cannot put it in the future of the
    record): so a task last updated before a time was finished before it, which lets
    the store skip decoding every task closed long ago. `updated`: ts_of(task) when the
    caller has it (the store's fill: the line's fold key). Both stamps are the task's
    own: parsed without parse_ts's cache (a miss and an insert on every task of a fold).
    """
    status = task.get("status")
    if status not in CLOSED_STATUSES:
        return None
    if updated is None:
        updated = parse_ts_once(task.get("updated_at"))
    closed = parse_ts_once(task.get("completed_at" if status == "done" else "abandoned_at"))
    if closed == UNKNOWN_TS:
        return updated
    return closed if updated == UNKNOWN_TS else min(closed, updated)


def next_updated_at(previous: Record | None, now: int | None = None) -> int:
    """max(now, previous updated_at + 1 µs): a change wins even against a lagging clock."""
    return step_past(UNKNOWN_TS if previous is None else ts_of(previous), now)


def step_past(newest: int, now: int | None = None) -> int:
    """The stamp of a write that must win over `newest` (µs): max(now, newest + 1 µs),
    never past MAX_TS, so it always parses. At MAX_TS itself the write takes the same
    stamp and wins by coming later in the file (the fold's tie-break)."""
    current = now_micros() if now is None else now
    return min(max(current, newest + 1), MAX_TS)


def new_task_id(now: int | None = None) -> str:
    seconds = (now_micros() if now is None else now) // 1_000_000
    # os.urandom is what secrets.token_hex reads; importing secrets costs ~4 ms (hmac).
    return f"task_{seconds}_{os.urandom(4).hex()}"


# --- validation -------------------------------------------------------------------


def clean_text(value: str, *, what: str, limit: int) -> str:
    text = value.strip()
    if not text:
        raise InvalidInput(f"Invalid {what}: it is empty; give 1–{limit} characters")
    if len(text) > limit:
        raise InvalidInput(
            f"Invalid {what}: {len(text)} characters; at most {limit} are accepted"
        )
    if CONTROL_RE.search(text):
        raise InvalidInput(
            f"Invalid {what}: it contains control characters (newlines, escapes, …); "
            "plain text only"
        )
    return text


def validate_description(value: str) -> str:
    return clean_text(value, what="description", limit=MAX_DESCRIPTION)


def validate_reason(value: str) -> str:
    return clean_text(value, what="reason", limit=MAX_REASON)


def _choice(value: str, choices: tuple[str, ...], what: str) -> str:
    normal = value.strip().lower().replace("-", "_")
    if normal not in choices:
        raise InvalidInput(f"Invalid {what} {value!r}: use one of {', '.join(choices)}")
    return normal


def validate_priority(value: str) -> str:
    return _choice(value, PRIORITIES, "priority")


def validate_status(value: str) -> str:
    return _choice(value, STATUSES, "status")


@cache
def _tag_re() -> re.Pattern[str]:  # compiled on first use (~0.2 ms): reads never need it
    return re.compile(rf"[^\s,{CONTROL_CHARS}{INVISIBLE_CHARS}]+")


def validate_tag(value: str) -> str:
    tag = value.strip()
    if not tag or len(tag) > MAX_TAG or not _tag_re().fullmatch(tag):
        raise InvalidInput(
            f"Invalid tag {value!r}: use 1–{MAX_TAG} characters without spaces, commas, "
            "control or invisible characters"
        )
    return tag


# --- records ----------------------------------------------------------------------


def canonical(record: Record) -> Record:
    """The record with known keys in the original order, nulls left out, unknown keys kept."""
    out: Record = {}
    for key in TASK_KEY_ORDER:
        value = record.get(key)
        if value is not None:
            out[key] = value
    if "tags" not in out:
        out["tags"] = []
    for key, value in record.items():
        if key not in out and value is not None:
            out[key] = value
    return out


def new_task(
    description: str,
    *,
    priority: str = "medium",
    tags: list[str] | None = None,
    session: str | None = None,
    discovered_during: str | None = None,
    now: int | None = None,
) -> Record:
    at = now_micros() if now is None else now
    stamp = format_ts(at)
    return canonical(
        {
            "id": new_task_id(at),
            "description": validate_description(description),
            "status": "pending",
            "priority": validate_priority(priority),
            "created_at": stamp,
            "updated_at": stamp,
            "session": session or None,
            "discovered_during": discovered_during or None,
            "tags": list(dict.fromkeys(validate_tag(t) for t in tags or [])),
        }
    )


def transition(
    task: Record, status: str, *, reason: str | None = None, now: int | None = None
) -> Record:
    """The next snapshot of `task` in `status`; the caller checks it differs."""
    at = next_updated_at(task, now)
    stamp = format_ts(at)
    updated = dict(task)
    updated["status"] = status
    updated["updated_at"] = stamp
    if status == "in_progress" and not updated.get("started_at"):
        updated["started_at"] = stamp
    if status in OPEN_STATUSES:
        for key in ("completed_at", "abandoned_at", "abandoned_reason"):
            updated.pop(key, None)
    elif status == "done":
        updated["completed_at"] = stamp
        updated.pop("abandoned_at", None)
        updated.pop("abandoned_reason", None)
    elif status == "abandoned":
        updated["abandoned_at"] = stamp
        updated["abandoned_reason"] = reason
    return canonical(updated)


def task_tags(record: Record) -> list[str]:
    """A task's tags as every reader counts them (stats, filters, the snapshot's tags
    column): its distinct tags, in order; [] when it has none. A string value (a hand
    edit, a foreign tool) is that one tag, none when blank (issue 14)."""
    tags = record.get("tags")
    if type(tags) is str:
        return [tags] if tags.strip() else []
    if type(tags) is not list or not tags:
        return []
    return list(dict.fromkeys(t for t in tags if type(t) is str))


def note_out(note: Record) -> Record:
    """A note as a task shows it (list and show JSON, the store's kept elements): its
    text, and its author and time when they are text."""
    out: Record = {"text": note["text"]}
    for key in ("author", "created_at"):
        if isinstance(note.get(key), str):
            out[key] = note[key]
    return out
