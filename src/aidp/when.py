"""Parsing `--since WHEN` and `--older-than AGE`, and printing ages. Pure."""

from __future__ import annotations

import re

from aidp.errors import InvalidInput

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE_RE = re.compile(r"(\d+)\s*([smhdw])")
AGE_FORMS = "a number with a unit s, m, h, d or w (30m, 12h, 7d, 2w)"
WHEN_FORMS = (
    "an ISO date or time (2026-11-01, 2026-11-01T09:30, 2026-11-01T09:30:00Z), "
    "an age (30m, 12h, 7d, 2w, '7d ago'), today, yesterday or now"
)


def parse_age(text: str, *, what: str = "--older-than") -> int:
    """An age like 30m, 12h, 7d, 2w in microseconds."""
    match = _AGE_RE.fullmatch(text.strip().lower())
    if not match:
        raise InvalidInput(f"Invalid {what} {text!r}: use {AGE_FORMS}")
    return int(match.group(1)) * _UNITS[match.group(2)] * 1_000_000


def parse_when(text: str, now: int, *, what: str = "--since") -> int:
    """A point in time (µs since the epoch): ISO date/time, relative age, or a keyword."""
    value = text.strip().lower()
    if value == "now":
        return now
    if value in ("today", "yesterday"):
        import time

        local = time.localtime(now // 1_000_000)
        midnight = time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))
        start = int(midnight) * 1_000_000
        return start - (86400 * 1_000_000 if value == "yesterday" else 0)
    relative = value.removesuffix("ago").strip()
    if _AGE_RE.fullmatch(relative):
        return now - parse_age(relative, what=what)
    try:
        from dateutil.parser import isoparse

        parsed = isoparse(text.strip())
    except (ValueError, OverflowError):
        raise InvalidInput(f"Invalid {what} {text!r}: use {WHEN_FORMS}") from None
    if parsed.tzinfo is None:
        parsed = parsed.astimezone()  # a time without an offset is local time
    return int(parsed.timestamp() * 1_000_000)


def age(created: int, now: int) -> str:
    """'today', '1d ago', '3d ago', … like the original `/tasks list`."""
    from aidp.model import UNKNOWN_TS

    if created == UNKNOWN_TS:
        return "age unknown"  # a missing or unreadable timestamp, not 1970
    days = max(0, now - created) // (86400 * 1_000_000)
    return "today" if days == 0 else f"{days}d ago"
