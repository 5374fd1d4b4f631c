"""The fold: which record a line is, which record wins, and the plain fold of lines.

The state is a pure function of the lines: per id, the record with the greatest
(updated_at, line number) wins. Tasks and typed records (those with a "type" key)
fold into two separate namespaces, so a typed record can never show up as a task.
Both readers — the plain fold (`Fold` below) and the store (`aidp.store`: its cold
build and its refresh) — decide through these functions (`read_line`, `key_of`,
`beats`); tests/test_index.py holds their answers equal on random logs.

Field-level merge (docs/file-format.md, "Field-level merge"): per field
group, the latest task record that set it wins (per its `task_fields` record; without
one a record sets every group). Unless clones changed a task concurrently, that is its
latest record: readers keep one winner per task and `settle` each later record (WINS,
LOSES, CONFLICT); only conflicted tasks are refolded (aidp.tasklist.fields.merge_task). Per task a
store keeps the winner, `partial` (it came with a companion) and `pending` companions.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from aidp.core.model import (
    OPEN_STATUSES,
    UNKNOWN_TS,
    Record,
    parse_ts_once,
)
from aidp.core.model import (
    task_tags as task_tags,  # its home is model; fold.task_tags stays for callers
)
from aidp.core.plain import Plain
from aidp.tasklist.line import admit, parse_line
from aidp.tasklist.questions import Questions

# (updated_at in µs, line number): the fold's order.
FoldKey = tuple[int, int]

TASK = "task"
TYPED = "typed"
IGNORED = "ignored"  # a typed record without a string id: a kind this version cannot fold
DAMAGED = "damaged"  # a task line without a usable id


def place(record: dict[str, Any]) -> tuple[str, str]:
    """(namespace, id) of a parsed record: TASK or TYPED with its id, or IGNORED or
    DAMAGED with an empty id."""
    rid = record.get("id")
    if "type" in record:
        return (TYPED, rid) if isinstance(rid, str) else (IGNORED, "")
    if not isinstance(rid, str) or not rid:
        return DAMAGED, ""
    return TASK, rid


def key_of(record: dict[str, Any], line: int) -> FoldKey:
    """The record's fold key: (updated_at in µs, UNKNOWN_TS when unreadable, line). Not
    through model.parse_ts's cache: each line has an updated_at of its own (a cache
    miss and insert on every line cost as much as the parse)."""
    return (parse_ts_once(record.get("updated_at")), line)


def packed(key: FoldKey, seq: int = 0) -> int:
    """A fold key, and the line its id first came on (`seq`), as one int ordered as the
    key: `beats(k, p)` is `packed(k) > packed(p)` (lines differ). The store's build keeps
    one per id of the log: 44 bytes where a tuple of tuples took 200."""
    return ((key[0] - UNKNOWN_TS) << 80) | (key[1] << 40) | seq


def unpacked(value: int) -> tuple[FoldKey, int]:
    """(fold key, seq) of a `packed` value."""
    return ((value >> 80) + UNKNOWN_TS, (value >> 40) & _MASK), value & _MASK


_MASK = (1 << 40) - 1  # lines and seqs below 2**40


def read_line(raw: bytes) -> tuple[str, str, Record | None]:
    """(namespace, id, record) of one line (without its newline): TASK or TYPED with the
    id and record; IGNORED for a blank line or a typed kind this version cannot fold;
    DAMAGED (record None) for anything else. Every reader of lines (the plain fold
    below, the store's build and refresh) starts here."""
    record = parse_line(raw)
    if record is None:
        return (DAMAGED if raw.strip() else IGNORED), "", None
    kind, rid = place(record)
    return kind, rid, (record if kind in (TASK, TYPED) else None)


def read_lines(lines: list[bytes]) -> Iterator[tuple[str, str, Record | None]]:
    """read_line of each of `lines`, in bulk (the plain fold and the store's build read
    every line through here): the same answers, without three calls per line."""
    loads, error = orjson.loads, orjson.JSONDecodeError
    for raw in lines:
        try:
            value = loads(raw)
        except error:
            record = parse_line(raw)  # blank, behind a byte order mark, or damage
        else:
            record = admit(value, raw)
        if record is None:
            yield (DAMAGED if raw.strip() else IGNORED), "", None
            continue
        if "type" not in record:
            yield TASK, record["id"], record  # admit checked it is a non-empty string
        elif type(rid := record.get("id")) is str:
            yield TYPED, rid, record
        else:
            yield IGNORED, "", None


@contextmanager
def no_gc(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic garbage collection while lines are folded: every gen-2 pass walks all
    the records held so far (a quarter of the CPU of a fold of 100k events), and
    folding makes no reference cycles.

    `freeze`, for a process that ends after one command (the CLI's TaskLog, all but
    `mcp` and `run`: TaskLog.freeze): what the fold made then lives until the process
    ends, and no collection walks it again (gc.freeze; refcounting still frees it): the
    passes after a plain fold of 100k events and the one at exit cost ~0.3 s of CPU (the
    first list after a clone, 1.3-1.9 s). Never in a long-running process: cyclic
    garbage alive at a freeze would never be collected."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if collecting:
            gc.enable()


def beats(key: FoldKey, previous: FoldKey | None) -> bool:
    """Whether a record with `key` replaces the current winner (None: there is none)."""
    return previous is None or key > previous


# --- the plain fold: lines in, state out ----------------------------------------------


class Fold(Plain, Questions):
    """The folded state of a log, plus what it takes to extend it with later lines. The
    questions asked of it (`aidp.tasklist.questions.Questions`) are answered by loops over it."""

    _fields: tuple[str, ...] = ("tasks", "typed", "task_keys", "typed_keys", "damaged",
                                "lines", "ends_with_newline")
    tasks: dict[str, Record]
    typed: dict[str, Record]
    typed_keys: dict[str, FoldKey]
    task_keys: dict[str, FoldKey]

    def __init__(
        self,
        tasks: dict[str, Record] | None = None,
        typed: dict[str, Record] | None = None,
        task_keys: dict[str, FoldKey] | None = None,
        typed_keys: dict[str, FoldKey] | None = None,
        damaged: int = 0,
        lines: int = 0,  # lines consumed, so line numbers continue across appends
        ends_with_newline: bool = True,
    ) -> None:
        self.tasks = {} if tasks is None else tasks
        self.typed = {} if typed is None else typed
        self.task_keys = {} if task_keys is None else task_keys
        self.typed_keys = {} if typed_keys is None else typed_keys
        self.damaged = damaged
        self.lines = lines
        self.ends_with_newline = ends_with_newline
        # Field-level merge bookkeeping (see the module's docstring); not compared:
        self.fielded = False  # a task_fields record was seen: tasks go through settle
        self.pending: dict[tuple[str, Any], Record] = {}  # companion by (task, updated_at)
        self.partial: set[str] = set()  # tasks whose winner came with a companion
        self.conflicted: set[str] = set()  # tasks whose merge is no single record
        # What readers derive from this state and keep with it (todos.state's index of
        # TODO lists), by their own key; not compared, dropped with the fold:
        self.derived: dict[str, Any] = {}
        # Where the lines this fold holds end in each file it read (worktrees.fold: the
        # path, how many bytes, the last of them), when it can be carried on from there,
        # and the last of those files whose own lines are about each task (tasklist.carry);
        # not compared:
        self.sources: tuple[tuple[Any, int, bytes], ...] | None = None
        self.last_file: dict[str, int] = {}

    def copy(self) -> Fold:
        """A fold of the same lines that later lines can be added to, leaving this one as
        it is (the records themselves are shared: no reader changes one)."""
        new = Fold(dict(self.tasks), dict(self.typed), dict(self.task_keys),
                   dict(self.typed_keys), self.damaged, self.lines, self.ends_with_newline)
        new.fielded, new.pending = self.fielded, dict(self.pending)
        new.partial, new.conflicted = set(self.partial), set(self.conflicted)
        new.last_file = dict(self.last_file)
        return new

    def add_line(self, raw: bytes) -> None:
        """Fold one more line (without its newline) into the state."""
        self.lines += 1
        kind, rid, record = read_line(raw)
        if record is None:
            self.damaged += kind == DAMAGED
            return
        self._take(kind, rid, record, self.lines)

    def add_record(self, record: Record, line: int) -> None:
        kind, rid = place(record)
        self._take(kind, rid, record, line)

    def _take(self, kind: str, rid: str, record: Record, line: int) -> None:
        if kind == TASK:
            if self.fielded:
                self._add_fielded(record, rid, line)
                return
            records, keys = self.tasks, self.task_keys
        elif kind == TYPED:
            if record["type"] == FIELDS:
                self.fielded = True
                hold(self.pending, record)
                return
            records, keys = self.typed, self.typed_keys
        else:
            if kind == DAMAGED:
                self.damaged += 1
            return  # IGNORED: a typed record of a kind we cannot fold, not damage
        key = key_of(record, line)
        if beats(key, keys.get(rid)):
            keys[rid] = key
            records[rid] = record

    def _add_fielded(self, record: Record, rid: str, line: int) -> None:
        key = key_of(record, line)
        spec = self.pending.pop((rid, record.get("updated_at")), None) if self.pending else None
        previous = self.task_keys.get(rid)
        if previous is None or rid in self.conflicted:
            verdict = WINS if previous is None or key > previous else LOSES
        else:
            verdict = settle(self.tasks[rid], previous,
                             rid in self.partial, record, key, spec)
            if verdict == CONFLICT:
                self.conflicted.add(rid)
                verdict = WINS if key > previous else LOSES  # the winner's key stays exact
        if verdict == WINS:
            self.task_keys[rid] = key
            self.tasks[rid] = record
            if spec is None:
                self.partial.discard(rid)
            else:
                self.partial.add(rid)

    def add_lines(self, lines: list[bytes], tasks: dict[str, int] | None = None,
                  mark: int = 0) -> list[bool]:
        """Fold these lines (without their newlines); whether each was damage. `tasks`:
        each task id a record of these lines is about gets `mark` there."""
        take, flags = self._take, []
        for kind, rid, record in read_lines(lines):
            self.lines += 1
            if record is None:
                self.damaged += kind == DAMAGED
                flags.append(kind == DAMAGED)
            else:
                take(kind, rid, record, self.lines)
                flags.append(False)
                if tasks is not None and kind == TASK:
                    tasks[rid] = mark
        return flags

    def feed(self, data: bytes) -> None:
        """Fold a chunk of the file that starts at a line boundary."""
        if not data:
            return
        parts = data.split(b"\n")
        tail = parts.pop()  # after the last newline: b"" or a torn last line
        take, line, tasks, keys = self._take, self.lines, self.tasks, self.task_keys
        for kind, rid, record in read_lines(parts):
            line += 1
            if record is None:
                self.damaged += kind == DAMAGED
            elif kind == TASK and not self.fielded:  # _take's usual case, inline
                key = (parse_ts_once(record.get("updated_at")), line)  # key_of
                old = keys.get(rid)
                if old is None or key > old:  # beats
                    keys[rid] = key
                    tasks[rid] = record
            else:
                take(kind, rid, record, line)
        self.lines = line
        if tail:
            self.add_line(tail)
            self.ends_with_newline = False
        else:
            self.ends_with_newline = True


# --- field-level merge: the rule -------------------------------------------------------

FIELDS = "task_fields"
# The field groups a companion names; a group's keys always move together.
FIELD_GROUPS = ("description", "priority", "status", "tags")
STATUS_KEYS = ("status", "started_at", "completed_at", "abandoned_at", "abandoned_reason")
_CLOSED = ("done", "abandoned")
WINS, LOSES, CONFLICT = 1, 0, 2  # settle's verdicts


def companion_key(record: Record) -> tuple[str, str] | None:
    """(task id, updated_at) of the task record a task_fields record goes with."""
    task, stamp = record.get("task"), record.get("updated_at")
    if type(task) is not str or type(stamp) is not str:
        return None
    return task, stamp


def hold(pending: dict[tuple[str, Any], Record], record: Record) -> None:
    """Keep a task_fields record in `pending` until the task record it goes with comes
    (by its companion_key; the plain fold and the store's fill alike)."""
    waiting = companion_key(record)
    if waiting is not None:
        pending[waiting] = record


def groups_of(spec: Record | None) -> tuple[str, ...]:
    """The groups a record sets: all without a companion; else the known ones it names."""
    if spec is None:
        return FIELD_GROUPS
    named = spec.get("fields")
    if type(named) is not list:
        return ()
    key = tuple(n for n in named if type(n) is str)  # hashable: strings only count
    found = _GROUPS.get(key)
    if found is None:
        found = tuple([g for g in FIELD_GROUPS if g in key])
        if len(_GROUPS) < 256:
            _GROUPS[key] = found
    return found


_GROUPS: dict[tuple[Any, ...], tuple[str, ...]] = {}


def texts(spec: Record, key: str) -> list[str]:
    found = spec.get(key)
    return [t for t in found if type(t) is str] if type(found) is list else []


def field_value(record: Record, group: str) -> object:
    if group == "tags":
        return frozenset(task_tags(record))
    if group == "status":
        return tuple(record.get(k) for k in STATUS_KEYS)
    return record.get(group)


def _with_ops(tags: list[str], spec: Record) -> frozenset[str]:
    removed = set(texts(spec, "tags_removed"))
    return frozenset([t for t in tags if t not in removed] + texts(spec, "tags_added"))


def status_class(record: Record, spec: Record | None) -> str:
    """C: closes the task; B: moves it between open states as seen from an open state
    (a claim, a start, a release), which never wins over a close it did not see; O: any
    other status set (a reopen, a record without a companion)."""
    status = record.get("status")
    if status in _CLOSED:
        return "C"
    if spec is not None and spec.get("from") in OPEN_STATUSES and status in OPEN_STATUSES:
        return "B"
    return "O"


def _same(a: Record, b: Record, group: str) -> bool:
    """field_value(a, group) == field_value(b, group), cheaply (settle runs per line)."""
    if group == "status":
        return all(a.get(key) == b.get(key) for key in STATUS_KEYS)
    if group == "tags":
        tags = a.get("tags")
        return (tags == b.get("tags") and type(tags) is list) or (
            frozenset(task_tags(a)) == frozenset(task_tags(b)))
    return bool(a.get(group) == b.get(group))


def settle(current: Record, current_key: FoldKey, current_partial: bool,
           record: Record, key: FoldKey, spec: Record | None) -> int:
    """What `record` (fold key `key`, companion `spec` or None) does to a task whose
    merged state is its winning record `current` (`current_partial`: that winner came
    with a companion): WINS (the merge is `record`), LOSES (it stays `current`), or
    CONFLICT (the merge is neither: fold the task with aidp.tasklist.fields.merge_task)."""
    groups = groups_of(spec)
    if key > current_key:
        if spec is not None:
            for group in FIELD_GROUPS:
                if group not in groups and not _same(record, current, group):
                    return CONFLICT  # its writer had not seen a change it did not make
            if ("status" in groups and status_class(record, spec) == "B"
                    and current.get("status") in _CLOSED):
                return CONFLICT  # a claim that had not seen the task closed
            if "tags" in groups and (_with_ops(task_tags(current), spec)
                                     != frozenset(task_tags(record))):
                return CONFLICT
        return WINS
    if not current_partial:
        return LOSES  # the winner set every group, later
    for group in groups:
        if group == "tags" and spec is not None:
            if _with_ops(task_tags(current), spec) != frozenset(task_tags(current)):
                return CONFLICT
        elif not _same(record, current, group):
            return CONFLICT
    return LOSES
