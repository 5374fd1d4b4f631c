"""The work queue: dependencies, epics, claims and notes on top of the backlog.

The original Ruby reader drops a task line with a key it does not know, so nothing
here goes into task records (docs/file-format.md, "Other records"). Each fact is a typed
record of its own, keyed by the task id and folded by the same rule as everything else —
the greatest (updated_at, line number) per id wins:

- `dep`    `dep:<task>:<blocker>`     one dependency edge; `"removed": true` once unblocked
- `parent` `parent:<task>`            the task's epic; no `parent` key once detached
- `claim`  `claim:<task>:<assignee>`  one person's claim and its lease (`lease`,
                                      `lease_until`); `released_at` once released
- `note`   `note:<task>:<8 hex>`      one note, never changed

One record per edge, per claimant and per note (not one record per task) so that
changes made on two clones merge item by item after a union merge: nothing made on one
side is lost because the other side wrote a later snapshot.

Who holds a task: a pending task is held by nobody (a later release or reopen wins
over an older claim); otherwise the earliest active claim wins (claimed_at, then
name). Two clones that claimed the same task concurrently therefore agree, after a
merge, on the one who claimed first — what a single clone would have decided, since
the second claim would have been refused there. A closed task is held only by a claim
made before it closed: one made after it, on a clone that had not seen the close, is
not in effect once merged (there, too, it would have been refused).

An epic (a task with children) waits on its open children: it is not ready while any
of them is open, and a dependency that would make a child wait on its epic is a cycle.


    folded.py   the queue as folded: QueueState, ready/blocked, cycles, record ids, history,
                the result of a write (Change)
    edits.py    file (with links, or unless open), block/unblock, edit, note
    leases.py   a claim's lease: its length parsed, judged live or stale (pure)
    renewal.py  stale claims found, a lost claim told, leases renewed for a holder
    claims.py   claim (renewal, takeover), release, what is ready, the actor's name
    seen.py     what a view showed of a task's fields, checked under a writer's lock
"""

from __future__ import annotations

from aidp.backlog.queue.claims import (
    Claimed,
    actor_lookup,
    claim,
    default_actor,
    first_ready,
    ready,
    ready_count,
    release,
    release_left,
    release_records,
    stale,
    stale_ready,
    validate_actor,
    why_nothing_ready,
)
from aidp.backlog.queue.edits import (
    Linked,
    block,
    edit,
    file,
    note,
    unblock,
)
from aidp.backlog.queue.folded import (
    CLAIM,
    CLOSED_STATUSES,
    DEP,
    MAX_ACTOR,
    MAX_NOTE,
    NOTE,
    PARENT,
    Change,
    ClaimRefused,
    DependencyCycle,
    Entry,
    NothingReady,
    QueueState,
    blocked,
    check_cycle,
    claim_id,
    dep_id,
    describe,
    events,
    extras,
    find_path,
    linked_ids,
    list_notes,
    next_stamp,
    parent_id,
    short,
    shown,
    shown_apart,
    shown_with,
    state,
    typed_record,
    wait_graph,
    with_extras,
)
from aidp.backlog.queue.leases import (
    DEFAULT_LEASE,
    LEASE_FORMS,
    Lease,
    judge,
    parse_lease,
    span,
)
from aidp.backlog.queue.renewal import Keeper, Renewal, lost, renew
from aidp.core.model import note_out

__all__ = [
    "CLAIM",
    "CLOSED_STATUSES",
    "DEFAULT_LEASE",
    "DEP",
    "LEASE_FORMS",
    "MAX_ACTOR",
    "MAX_NOTE",
    "NOTE",
    "PARENT",
    "Change",
    "ClaimRefused",
    "Claimed",
    "DependencyCycle",
    "Entry",
    "Keeper",
    "Lease",
    "Linked",
    "NothingReady",
    "QueueState",
    "Renewal",
    "actor_lookup",
    "block",
    "blocked",
    "check_cycle",
    "claim",
    "claim_id",
    "default_actor",
    "dep_id",
    "describe",
    "edit",
    "events",
    "extras",
    "file",
    "find_path",
    "first_ready",
    "judge",
    "linked_ids",
    "list_notes",
    "lost",
    "next_stamp",
    "note",
    "note_out",
    "parent_id",
    "parse_lease",
    "ready",
    "ready_count",
    "release",
    "release_left",
    "release_records",
    "renew",
    "short",
    "shown",
    "shown_apart",
    "shown_with",
    "span",
    "stale",
    "stale_ready",
    "state",
    "typed_record",
    "unblock",
    "validate_actor",
    "wait_graph",
    "why_nothing_ready",
    "with_extras",
]
