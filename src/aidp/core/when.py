"""Parsing `--since WHEN` and `--older-than AGE`, and printing ages. Pure."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from aidp.core.errors import InvalidInput

if TYPE_CHECKING:
    from datetime import datetime

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
    return _micros(parsed)


def _micros(parsed: datetime) -> int:
    """µs since the epoch, exactly (no float) and for every year from 1 to 9999, in any
    time zone: astimezone() and timestamp() fail near the ends of the range."""
    from datetime import UTC, datetime, timedelta

    if parsed.tzinfo is None:  # a time without an offset is local time
        try:
            parsed = parsed.astimezone()
        except (ValueError, OverflowError, OSError):
            # Beyond what the C library converts: the zone's offset as it is today.
            parsed = parsed.replace(tzinfo=datetime.now(UTC).astimezone().tzinfo)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return (parsed - epoch) // timedelta(microseconds=1)


def age(created: int, now: int) -> str:
    """'today', '1d ago', '3d ago', … like the original `/tasks list`."""
    from aidp.core.model import UNKNOWN_TS

    if created == UNKNOWN_TS:
        return "age unknown"  # a missing or unreadable timestamp, not 1970
    day = 86400 * 1_000_000
    if created > now + 60 * 1_000_000:  # a clock ahead, or a hand-edited date
        ahead = (created - now) // day
        return "in the future" if ahead == 0 else f"{ahead}d in the future"
    days = max(0, now - created) // day
    return "today" if days == 0 else f"{days}d ago"
