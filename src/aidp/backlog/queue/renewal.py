"""Acting on leases (aidp.backlog.queue.leases): the stale claims `ready` offers, the
line that tells a holder it lost a task, and renewing an actor's leases while it works
(`renew` once, `Keeper` for a process that lives: `aidp run`, `aidp mcp`)."""


from collections.abc import Callable, Collection

from aidp.backlog.queue.folded import CLAIM, claim_id, short, state
from aidp.backlog.queue.leases import SECOND, Lease, active, judge, renewed
from aidp.core.model import Record, now_micros
from aidp.core.plain import Plain
from aidp.tasklist.log import Fold, TaskLog


class Stale(Plain):
    """An in-progress task whose holder's lease ran out: ready for a takeover."""

    _fields = ("id", "priority", "created", "lease")

    def __init__(self, tid: str, priority: str | None, created: int, lease: Lease) -> None:
        self.id = tid
        self.priority = priority
        self.created = created
        self.lease = lease


def stale(fold: Fold, now: int | None = None) -> list[Stale]:
    """The in-progress tasks whose holder's lease ran out, in the fold's order (one
    question: Questions.claims)."""
    at = now_micros() if now is None else now
    found = []
    for tid, priority, created, claims in fold.claims(("in_progress",)):
        held = active(claims)
        if held:
            lease = judge(held[0], at)
            if lease.stale:
                found.append(Stale(tid, priority, created, lease))
    return found


# --- what a holder is told ---------------------------------------------------------------


def lost(fold: Fold, tids: Collection[str], actor: Callable[[], str]) -> list[str]:
    """One line for each of `tids` that `actor` held and lost — taken over when its lease
    ran out, or held by an earlier claim from another clone after a merge — naming who
    holds it now. `actor` is asked only when some task has such a claim (most commands
    never run git for it)."""
    if not tids:
        return []
    by_task: dict[str, list[Record]] = {}
    for _rid, _key, record in fold.typed_records(tids, own=True):
        if record.get("type") == CLAIM and type(record.get("task")) is str:
            by_task.setdefault(record["task"], []).append(record)
    suspect = {tid for tid, claims in by_task.items()
               if len(active(claims)) > 1 or any(c.get("taken_over_by") for c in claims)}
    if not suspect:
        return []
    me = actor()
    out = []
    for tid in tids:
        if tid not in suspect or tid not in fold.tasks:
            continue
        line = _lost_line(fold, tid, by_task[tid], me)
        if line is not None:
            out.append(line)
    return out


def _lost_line(fold: Fold, tid: str, claims: list[Record], me: str) -> str | None:
    mine = next((c for c in claims if c.get("id") == claim_id(tid, me)), None)
    if mine is None:
        return None
    task = fold.tasks[tid]
    holder = state(fold, about=tid, own=True).holder(task)
    who = holder["assignee"] if holder is not None else None
    if who == me:
        return None
    label = short(tid, fold)
    now = f"{who} holds it now" if who is not None else "nobody holds it now"
    if mine.get("released_at"):
        taker = mine.get("taken_over_by")
        if not isinstance(taker, str):
            return None
        return (f"You no longer hold task {label}: {taker} took it over when your lease ran "
                f"out ({now}); your 'aidp tasks done {label}' still closes it")
    if holder is None:
        return None
    return (f"You no longer hold task {label}: {who} holds it now (their claim, made on "
            "another clone, came first)")


# --- renewing on the holder's behalf ---------------------------------------------------------


class Renewal(Plain):
    """What `renew` did: the tasks whose lease it renewed, and one line per task the
    actor held and lost (`lost`'s lines)."""

    _fields = ("renewed", "lost", "next_due")

    def __init__(self) -> None:
        self.renewed: list[str] = []
        self.lost: list[str] = []
        self.next_due: int | None = None  # µs: when the next renewal falls due


def renew(log: TaskLog, actor: Callable[[], str], *, tasks: Collection[str] | None = None,
          now: int | None = None) -> Renewal:
    """Renew the leases `actor` holds (on `tasks` only, when given) whose renewal is due
    (half run out), in one locked write; nothing is written when none is. Reports, too,
    the in-progress tasks it held and lost."""
    result = Renewal()
    fold = log.read()
    held = fold.claims(("in_progress",))
    if tasks is not None:
        wanted = set(tasks)
        held = [row for row in held if row[0] in wanted]
    if not held:
        return result
    me = actor()
    at = now_micros() if now is None else now
    due, mine = _due(held, me, at, result)
    result.lost = lost(fold, mine, lambda: me)
    if not due:
        return result

    def change(current: Fold) -> list[Record]:
        result.renewed.clear()
        rows = [row for row in current.claims(("in_progress",)) if row[0] in due]
        records = []
        for tid, _priority, _created, claims in rows:
            claim = next(iter(active(claims)), None)
            if claim is None or claim["assignee"] != me:
                continue  # taken over or released meanwhile
            lease = judge(claim, at)
            if lease.due:
                records.append(renewed(claim, lease.length, at))
                result.renewed.append(tid)
                when = at + lease.length // 2  # the renewal's own next one
                result.next_due = when if result.next_due is None else min(
                    result.next_due, when)
        return records

    log.update(change)
    return result


def _due(held: list[tuple[str, str | None, int, list[Record]]], me: str, at: int,
         result: Renewal) -> tuple[set[str], list[str]]:
    """The tasks `me` holds whose renewal is due, and every task `me` has a claim on
    (held or lost); `result.next_due` set to the soonest renewal not yet due."""
    due: set[str] = set()
    mine: list[str] = []
    for tid, _priority, _created, claims in held:
        if not any(c.get("assignee") == me for c in claims):
            continue
        mine.append(tid)
        current = active(claims)
        if not current or current[0]["assignee"] != me:
            continue
        lease = judge(current[0], at)
        if lease.due:
            due.add(tid)
        else:
            when = lease.until - lease.length // 2
            result.next_due = when if result.next_due is None else min(result.next_due, when)
    return due, mine


class Keeper:
    """Renews an actor's leases while it works (`aidp run` while its agent lives, `aidp
    mcp` while its client calls): `tick()` as often as convenient reads the tasklist
    only when a renewal may be due or `poll` (µs) has passed (to see claims made since),
    and tells each lost task once (`told`)."""

    def __init__(self, log: TaskLog, actor: Callable[[], str], *,
                 tasks: Collection[str] | None = None, poll: int = 10 * SECOND) -> None:
        self.log = log
        self.actor = actor
        self.tasks = tasks
        self.poll = poll
        self.next_check = 0
        self.told: set[str] = set()

    def tick(self, now: int | None = None, *, force: bool = False) -> list[str]:
        """Renew what is due; the lines about lost tasks not told before."""
        at = now_micros() if now is None else now
        if not force and at < self.next_check:
            return []
        self.next_check = at + self.poll  # (a failing renewal is not retried at once)
        done = renew(self.log, self.actor, tasks=self.tasks, now=at)
        nearest = at + self.poll
        if done.next_due is not None:
            nearest = min(nearest, max(done.next_due, at + SECOND // 10))
        self.next_check = nearest
        fresh = [line for line in done.lost if line not in self.told]
        self.told.update(fresh)
        return fresh
