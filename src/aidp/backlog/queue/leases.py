"""Leases: a claim is held for a while, not forever (docs/guide.md, "Leases").

A claim record carries its lease: `lease` (its length in seconds) and `lease_until`
(when it runs out). The holder renews it by claiming the task again, and aidp renews it
for the holder while its agent works (`aidp run`, `aidp mcp`, the hooks:
aidp.backlog.queue.renewal), each at most once per half lease, so the tasklist gains
one line per half lease per working agent, not one per command. A claim whose lease
ran out is **stale**: `ready` offers its task after the fresh ones and `claim` takes it
over (aidp.backlog.queue.claims).

A lease is judged by the stamps in its record and the local clock, nothing else:
stale from its end, with no grace. A record written on a machine whose clock is ahead
is believed only up to one lease ahead of this clock: a lease whose start (its end less
its length) is later than that is taken as run out, so a stamp from the future never
keeps a task held (a planted `9999-…` included). A claim written before leases existed
(no `lease`, no `lease_until`) has the default lease from its `claimed_at`.

Pure apart from the clock; what acts on leases (finding stale claims, telling a holder
it lost one, renewing) is aidp.backlog.queue.renewal.
"""


import re
from collections.abc import Iterable

from aidp.core.errors import InvalidInput
from aidp.core.model import UNKNOWN_TS, Record, format_ts, next_updated_at, now_micros, ts_of
from aidp.core.plain import Plain

SECOND = 1_000_000
DEFAULT_LEASE = 30 * 60 * SECOND  # docs/guide.md, "Leases": why 30 minutes
MIN_LEASE = SECOND
MAX_LEASE = 7 * 86_400 * SECOND
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_DURATION = re.compile(r"(?:\d+[smhd])+")
_PART = re.compile(r"(\d+)([smhd])")
LEASE_FORMS = ("a duration such as 90s, 20m, 2h or 1h30m (whole numbers with s, m, h or "
               "d, from 1s to 7d)")


def parse_lease(text: str, *, what: str = "--lease") -> int:
    """A lease length (µs) from `90s`, `20m`, `2h`, `1d`, `1h30m`; InvalidInput (exit 2)
    naming the accepted forms for anything else, zero and negative ones included."""
    value = text.strip().lower() if isinstance(text, str) else ""
    if not _DURATION.fullmatch(value):
        why = "a lease cannot be negative" if value.startswith("-") else "not a duration"
        raise InvalidInput(f"Invalid {what} {text!r}: {why}; use {LEASE_FORMS}")
    micros = sum(int(n) * _UNITS[unit] for n, unit in _PART.findall(value)) * SECOND
    if micros < MIN_LEASE:
        raise InvalidInput(f"Invalid {what} {text!r}: a lease of zero never holds; use "
                           f"{LEASE_FORMS}")
    if micros > MAX_LEASE:
        raise InvalidInput(f"Invalid {what} {text!r}: longer than 7d; use {LEASE_FORMS}")
    return micros


def span(micros: int) -> str:
    """A duration as people read it: 42s, 5m, 3h 5m, 2d 4h."""
    seconds = (max(0, micros) + SECOND // 2) // SECOND
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m" + (f" {seconds}s" if seconds and minutes < 10 else "")
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h" + (f" {minutes}m" if minutes else "")
    days, hours = divmod(hours, 24)
    return f"{days}d" + (f" {hours}h" if hours else "")


# --- judging a claim's lease ----------------------------------------------------------------


class Lease(Plain):
    """A claim's lease as judged at `now`: who holds it, when it runs out (`until`, µs,
    as recorded), its `length`, whether it is `stale`, and `ahead`: how far (µs) its
    start is past this clock beyond what is believed (0: its stamps are believed)."""

    _fields = ("assignee", "until", "length", "stale", "ahead", "now")

    def __init__(self, assignee: str, until: int, length: int, stale: bool, ahead: int,
                 now: int) -> None:
        self.assignee = assignee
        self.until = until
        self.length = length
        self.stale = stale
        self.ahead = ahead
        self.now = now

    @property
    def due(self) -> bool:
        """Its holder's renewal would write: half of it ran out (or all of it)."""
        return self.stale or self.now >= self.until - self.length // 2

    def said(self) -> str:
        """How it stands, for people: `lease ran out 5m ago`, `lease runs 12m more`, or
        why a stamp from the future is not believed."""
        if self.ahead:
            return (f"lease stamped {span(self.ahead)} ahead of this machine's clock, "
                    "taken as run out")
        if self.stale:
            return f"lease ran out {span(self.now - self.until)} ago"
        return f"lease runs {span(self.until - self.now)} more"


def length_of(claim: Record) -> int:
    """The claim's lease length (µs): its `lease` in seconds when that is a usable one,
    else the default (a claim written before leases, or a hand edit)."""
    seconds = claim.get("lease")
    if type(seconds) is int or type(seconds) is float:
        micros = seconds * SECOND
        if MIN_LEASE <= micros <= MAX_LEASE:
            return int(micros)
    return DEFAULT_LEASE


def judge(claim: Record, now: int | None = None) -> Lease:
    """The lease of an active claim at `now` (default: the clock now)."""
    at = now_micros() if now is None else now
    length = length_of(claim)
    until = ts_of(claim, "lease_until")
    if until == UNKNOWN_TS:
        start = ts_of(claim, "claimed_at")
        if start == UNKNOWN_TS:
            start = ts_of(claim)
        until = start + length if start != UNKNOWN_TS else UNKNOWN_TS
    # Its start (renewal) past this clock by more than one lease: a clock ahead, or a
    # planted stamp. Not believed: taken as run out (and said so), never held longer.
    ahead = until - length - at if until != UNKNOWN_TS else 0
    ahead = ahead if ahead > length else 0
    stale = until == UNKNOWN_TS or at >= until or ahead > 0
    return Lease(str(claim.get("assignee", "?")), until, length, stale, ahead, at)


def active(claims: Iterable[Record]) -> list[Record]:
    """The claims in effect until released (aidp.backlog.queue.folded.state's rule),
    earliest first (claimed_at, then name): the first holds the task."""
    found = [c for c in claims if type(c.get("assignee")) is str and c["assignee"]
             and not c.get("released_at")]
    found.sort(key=lambda c: (ts_of(c, "claimed_at"), c["assignee"]))
    return found


def lease_fields(length: int, now: int) -> Record:
    """The keys of a claim record held for `length` (µs) from `now`."""
    return {"lease": length // SECOND if length % SECOND == 0 else length / SECOND,
            "lease_until": format_ts(now + length)}


def renewed(claim: Record, length: int, now: int) -> Record:
    """`claim` written again, held for `length` (µs) from `now`; claimed_at as it was
    (the earliest claim holds a task: a renewal keeps its place)."""
    return {**claim, **lease_fields(length, now), "updated_at": format_ts(next_updated_at(claim))}
