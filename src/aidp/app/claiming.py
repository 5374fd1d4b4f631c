"""Claiming tasks: take one (atomically: in progress, with you as its assignee), and put
claimed ones back (pending, no assignee). Who claims: the name given, else AIDP_ACTOR,
else git user.email, else the login name (aidp.backlog.queue.claims)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from aidp.app.changing import Changed, lost_claims
from aidp.app.project import Project
from aidp.backlog import queue
from aidp.backlog.ids import resolve_id, short_ids
from aidp.core.plain import Plain


class Claim(Plain):
    """A claim made (or held already: `changed` False): the task, the claim record, the
    task as shown after it (`shown`: its queue keys), its lease, whether it renewed
    the actor's own claim (`renewed`) or took over one whose lease ran out (`took_over`:
    that lease), and its short id (from the state before)."""

    _fields = ("task", "claim", "changed", "shown", "renewed", "took_over", "short_ids")

    def __init__(self, claimed: queue.Claimed, short: dict[str, str]) -> None:
        self.task = claimed.task
        self.claim = claimed.claim
        self.changed = claimed.changed
        self.shown = claimed.shown
        self.renewed = claimed.renewed
        self.took_over = claimed.took_over
        self.lease = claimed.lease
        self.short_ids = short


def claim_task(project: Project, ref: str | None, *, actor: str | None = None,
               lookup: Callable[[], str] | None = None, lease: str | None = None,
               session: str | None = None, exclude: Iterable[str] = (),
               on_lost: Callable[[list[str]], None] | None = None) -> Claim:
    """Claim the task `ref` names, else the first ready one not in `exclude`, for
    `lease` (a duration: 90s, 20m, 2h; default: the project's, aidp.app.leases; a
    renewal keeps its own length). `actor`: who claims it; default: `lookup()` (asked
    once the task is known; default: the project's actor, queue.actor_lookup). A bad
    lease or actor is refused before anything is read. `session`: kept in the claim
    (who works on it, for people). `on_lost` hears, before the claim is tried, a line
    if the actor held the task and lost it (lost_claims). Refused (ClaimRefused) when
    someone else holds it with a live lease, it is closed or waits on an open task;
    NothingReady when nothing is ready."""
    from aidp.app.leases import default_lease

    length = queue.parse_lease(lease) if lease is not None else None
    if actor is not None:
        name = queue.validate_actor(actor)
        lookup = lambda: name  # noqa: E731 - the name, checked once
    elif lookup is None:
        lookup = queue.actor_lookup(project.root)
    # A new claim's lease (a renewal keeps its own); with --lease, the config is not read
    # (nor the trust gate loaded: ~6 ms of a claim's start-up).
    configured = default_lease(project.root) if length is None else length
    before = project.read()  # the claim reuses this fold (the file is unchanged till it writes)
    if on_lost is not None:
        on_lost(lost_claims(project, before,
                            [resolve_id(before, ref)] if ref is not None else []))
    claimed = queue.claim(project.log, ref, lookup, exclude=exclude, lease=length,
                          default_lease=configured, session=session)
    return Claim(claimed, short_ids(before, [claimed.task["id"]]))


def release_tasks(project: Project, refs: Sequence[str], *,
                  claimed_before: int | None = None,
                  expect: Mapping[str, str | None] | None = None) -> Changed:
    """Put the tasks `refs` names back (pending, no assignee) and, with `claimed_before`
    (µs), every task in progress held by an older claim (`expect`: what a view showed
    of `refs`' fields, aidp.backlog.queue.seen)."""
    before = project.read()
    changes = queue.release(project.log, list(refs), claimed_before=claimed_before,
                            expect=expect)
    named = [c.task["id"] for c in changes]
    return Changed(changes, short_ids(before, named), lost_claims(project, before, named))


def actor(project: Project, given: str | None) -> str:
    """Who acts: `given` (checked), else the project's actor."""
    return queue.validate_actor(given) if given is not None else queue.default_actor(project.root)


def release_left(project: Project, session: str, since: int) -> Changed:
    """Put back the tasks in progress held by a claim made in `session` at or after
    `since` (µs): `aidp run`'s agent exited without closing them, and nobody renews
    their leases any more (docs/guide.md, "Leases"). Their short ids: as the state is
    after it."""
    released = queue.release_left(project.log, session, since)
    named = [c.task["id"] for c in released]
    return Changed(released, short_ids(project.read(), named) if released else {})
