"""The store (aidp.store) gives exactly the answers of a full fold, whatever happened to
the log or to the database in between: appends, torn and completed lines, rewrites
with a new inode or in place, truncation, repair, compact, and a corrupt, copied,
locked or missing cache."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp import store
from aidp.backlog import details, queue, tasks
from aidp.core import model
from aidp.core.model import OPEN_STATUSES, STATUSES, format_ts
from aidp.store import fill, loader
from aidp.store import questions as store_questions
from aidp.tasklist import fold, line, maintenance
from aidp.tasklist.log import Fold, TaskLog, read_stamp, stat_key, write_stamp
from aidp.tasklist.stamp import NO_KEY
from aidp.views import render

# Modest by default; AIDP_INDEX_EXAMPLES=2000 for a long local run.
EXAMPLES = int(os.environ.get("AIDP_INDEX_EXAMPLES", "80"))
FIXTURES = [HealthCheck.function_scoped_fixture]  # each example makes its own folder
DATABASE = Path(".aidp") / store.CACHE_DIR / store.NAME


@pytest.fixture(autouse=True)
def always_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test files are tiny: use the store for every size, in many small steps."""
    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    monkeypatch.setattr(loader, "STRICT", True)
    monkeypatch.setattr(line, "CHUNK", 64)  # many chunks, even for tiny files
    monkeypatch.setattr(fill, "FLUSH_ROWS", 1)  # rows written (and replaced) one by one


def assert_same(log: TaskLog, got: Fold | None = None, full: Fold | None = None) -> Fold:
    """store.load(log) (or `got`) answers exactly like a full fold (or `full`), through
    every accessor."""
    asked = got is None
    full = log.full_fold() if full is None else full
    got = store.load(log) if got is None else got
    cache = log.dir / store.CACHE_DIR
    if (asked and full.tasks and full.ends_with_newline and not cache.is_symlink()
            and (cache.is_dir() or not cache.exists())
            and log.path.stat().st_size >= loader.MIN_BYTES):
        assert isinstance(got, store.StoreFold)  # the store answered, not a fallback
    # The typed records about one task (tasks show): the store's query, asked before
    # anything reads all of them; None (all of them) last.
    many = [*IDS, *(f"none_{n}" for n in range(70))]  # more ids than typed records
    for about in (*IDS, "nope", IDS[:3], [IDS[4], "nope", IDS[0]], many, (), None):
        assert list(got.typed_records(about)) == list(full.typed_records(about))
        own = list(full.typed_records(about, own=True))
        assert list(got.typed_records(about, own=True)) == own
        assert own == [r for r in full.typed_records() if about is None or (
            isinstance(task := r[2].get("task"), str) and task in (
                [about] if isinstance(about, str) else about))]
        for mine in (False, True):  # a listing's links: no body read
            kept = list(full.typed_records(about, own=mine, skip=("body",)))
            assert list(got.typed_records(about, own=mine, skip=("body",))) == kept
            assert kept == [r for r in full.typed_records(about, own=mine)
                            if r[2].get("type") != "body"]
    assert queue.state(got) == queue.state(full)
    assert queue.state(got, bodies=True) == queue.state(full, bodies=True)
    assert list(got.tasks) == list(full.tasks)
    assert len(got.tasks) == len(full.tasks)
    assert {k: got.tasks[k] for k in got.tasks} == full.tasks
    assert got.tasks == full.tasks
    assert got.task_keys_now() == full.task_keys_now() == full.task_keys
    assert list(got.task_keys_now()) == list(full.task_keys)
    # every typed record and its key, in the fold's order; one of them by id; a kind
    assert list(got.typed_records()) == list(full.typed_records()) == [
        (rid, full.typed_keys[rid], record) for rid, record in full.typed.items()]
    for rid in [*list(full.typed)[:3], "no such record"]:
        assert got.typed_record(rid) == full.typed_record(rid) == full.typed.get(rid)
    for kinds in (("dep",), ("todo_head", "todo_item"), (), ("",), ("", "note")):
        assert list(got.typed_records(kinds=kinds)) == list(full.typed_records(kinds=kinds))
        # a type that is no text (the row's kind NULL) is of no kind: left out, kept
        assert list(got.typed_records(skip=kinds)) == list(full.typed_records(skip=kinds))
    if isinstance(got, store.StoreFold):  # no table rebuilt on an attribute: asked
        assert not hasattr(got, "typed") and not hasattr(got, "task_keys")
    assert (got.damaged, got.lines, got.ends_with_newline) == (
        full.damaged, full.lines, full.ends_with_newline)
    for statuses in (("pending",), OPEN_STATUSES, STATUSES, ("odd",)):
        assert got.select(statuses) == full.select(statuses)
        assert got.summaries(statuses) == full.summaries(statuses)
        assert got.priority_counts(statuses) == full.priority_counts(statuses)
        assert got.oldest(statuses) == full.oldest(statuses)
        bounds = [model.UNKNOWN_TS, *(n * 86_400_000_000 for n in range(-1, 16))]
        assert got.created_at_most(statuses, bounds) == full.created_at_most(statuses, bounds)
        shuffled = [bounds[5], bounds[0], bounds[5], bounds[2]]  # any order, repeats
        assert got.created_at_most(statuses, shuffled) == full.created_at_most(statuses,
                                                                                shuffled)
    assert got.status_counts() == full.status_counts()
    for wanted in (None, ("pending",), OPEN_STATUSES, STATUSES, ("odd",), ()):
        expected: dict[str, int] = {}
        for task in full.tasks.values():
            if wanted is None or task.get("status") in wanted:
                for tag in fold.task_tags(task):
                    expected[tag] = expected.get(tag, 0) + 1
        assert got.tag_counts(wanted) == expected
        assert full.tag_counts(wanted) == expected
        for kind in ("created", "finished"):
            assert got.week_counts(kind, wanted) == full.week_counts(kind, wanted)
            assert got.week_counts(kind, wanted, since=3 * 86_400_000_000) == (
                full.week_counts(kind, wanted, since=3 * 86_400_000_000))
    assert tasks.fold_stats(got) == tasks.stats(full.tasks.values())
    links = queue.state(full)
    # ready: one query on the store, the typed records' rule in the plain fold, and that
    # rule the same as queue.state's (pending, nothing open waited on, best first).
    open_ids = {t for t, _p, _c in full.summaries(OPEN_STATUSES)}
    ready = [row for row in full.summaries(("pending",))
               if not any(w in open_ids for w in links.waits(row[0]))]
    ready.sort(key=lambda row: (model.priority_rank(row[1]), row[2]))
    assert full.ready() == ready
    for limit in (None, 0, 1, 3):
        for priorities in ((), ("high",), ("medium", "low")):
            for exclude in ((), IDS[:2], [t for t, _p, _c in ready[:1]]):
                expected = full.ready(limit, priorities=priorities, exclude=exclude)
                assert got.ready(limit, priorities=priorities, exclude=exclude) == expected
    # blocked: one query on the store, equal to queue.state's rule (open tasks waiting
    # on open ones: dependencies, then children; best first, pending before in progress
    # among equals).
    blocked = [(tid, priority, created, status, [w for w in links.waits(tid) if w in open_ids])
               for status in OPEN_STATUSES for tid, priority, created in full.summaries((status,))]
    blocked = [row for row in blocked if row[4]]
    blocked.sort(key=lambda row: (model.priority_rank(row[1]), row[2]))
    assert full.blocked() == blocked
    assert got.blocked() == blocked
    # claims: one query on the store (an in-progress task's claims, for its lease)
    for statuses in (("in_progress",), OPEN_STATUSES, STATUSES, ("odd",), ()):
        assert got.claims(statuses) == full.claims(statuses)
        claims = {}
        for record in full.typed.values():
            if record.get("type") == "claim" and isinstance(record.get("task"), str):
                claims.setdefault(record["task"], []).append(record)
        assert full.claims(statuses) == [(tid, priority, created, claims[tid])
                                         for tid, priority, created in full.summaries(statuses)
                                         if tid in claims]
    now = model.now_micros()  # prime's count: the fresh ones, then the stale ones
    stale = queue.stale_ready(full, now=now)
    assert queue.stale_ready(got, now=now) == stale
    assert queue.ready_count(got, now) == queue.ready_count(full, now) == len(ready) + len(stale)
    # each task's type: a column of its last task_type row, as queue.state reads it
    types = {tid: details.value_of(held.get(details.TYPE), details.TYPE, details.DEFAULT_TYPE)
             for tid, held in links.details.items() if details.TYPE in held}
    assert got.task_types() == full.task_types() == types
    for query in QUERIES:  # tasks list: every filter, sort and limit, as one query
        expected_found = tasks.find(full.tasks.values(), query, links)
        for answer in (got, full):  # with the whole queue state, or folding what it needs
            assert tasks.find_in(answer, query, links) == expected_found
            assert tasks.find_in(answer, query) == expected_found
        for answer in (got.find(query), full.find(query)):  # None: narrowed answers
            assert answer is None or tasks.Found(*answer) == expected_found
        if query.grep is None and query.assignee is None:  # --type too: one query
            assert got.find(query) is not None or not isinstance(got, store.StoreFold)
        # list --json's bytes: the store's open tasks as kept, the plain fold's encoded
        assert full.find_encoded(query) is None
        encoded = got.find_encoded(query)
        if encoded is not None:  # a pending task's as shown (its links joined: store.shown)
            assert encoded == [(bytes(model.json_elements(
                queue.shown(full, [t]) if t.get("status") == "pending" else [t])),
                None if t.get("status") == "pending" else t["id"])
                for t in expected_found.tasks]
        elif (isinstance(got, store.StoreFold) and query.grep is None
              and query.assignee is None and query.statuses is not None):
            assert not set(query.statuses) <= set(OPEN_STATUSES)
        for narrow in (got.narrowed(query), full.narrowed(query)):
            assert tasks.find(narrow, query, links) == expected_found
    # list --all, streamed (2 at a time here)
    everything = tasks.query(full.tasks.values(), tasks.Query(statuses=None))
    for answer in (got, full):
        assert [t for batch in answer.newest_first(2) for t in batch] == everything
    for tid in [*list(full.tasks)[:3], "x"]:
        part = tid.rpartition("_")[2][:4]
        for answer in (got, full):
            assert answer.ids_with_prefix(part, last_part=True) == sorted(
                t for t in full.tasks if t.rpartition("_")[2].startswith(part))
            assert answer.ids_with_prefix(tid[:6], last_part=False) == sorted(
                t for t in full.tasks if t.startswith(tid[:6]))
        mine = {tid: tid.rpartition("_")[2].lower(), "task_1_" + part + "0": part + "0"}
        assert got.shared_prefixes(mine, 4) == full.shared_prefixes(mine, 4)
        if isinstance(got, store.StoreFold):  # and every id in the index's order
            with pytest.MonkeyPatch.context() as patched:
                patched.setattr(store_questions, "SHARED_BULK", 0)
                assert got.shared_prefixes(mine, 4) == full.shared_prefixes(mine, 4)
    some = [*list(full.tasks)[::-2], *list(full.tasks)[:1]]  # any order, repeats
    assert got.tasks_of(some) == full.tasks_of(some) == [full.tasks[tid] for tid in some]
    for answer in (got, full):
        with pytest.raises(KeyError):
            answer.tasks_of([*some, "nope"])
    for tid in [*list(full.tasks)[:3], "nope", IDS[0]]:
        assert (tid in got.tasks) == (tid in full.tasks)
        assert got.tasks.get(tid) == full.tasks.get(tid)
    return got


QUERIES = [
    tasks.Query(statuses=statuses, priorities=priorities, tags=tags, session=session,
                created_from=since, created_before=before, sort=sort, limit=limit, grep=grep)
    for statuses, priorities, tags, session, since, before, sort, limit, grep in [
        (OPEN_STATUSES, (), (), None, None, None, "created", None, None),
        (None, (), (), None, None, None, "created", 2, None),
        (("pending",), ("high",), ("a",), None, None, None, "updated", None, None),
        (STATUSES, ("medium", "other"), ("b", "a"), None, 0, None, "priority", 1, None),
        (("done", "odd"), ("low", "high"), (), None, None, 10 * 86_400_000_000, "updated",
         3, None),
        (None, (), ("ü",), "s1", None, None, "created", None, None),
        (OPEN_STATUSES, ("high",), (), None, None, None, "priority", 2, "DO"),
        ((), (), (), None, None, None, "created", None, None),
    ]] + [tasks.Query(statuses=statuses, assignee=name, grep=grep, limit=limit)
          for statuses, name, grep, limit in [
              (OPEN_STATUSES, "x", None, None), (None, "X", None, 1), (STATUSES, "x", "n", None),
              (None, None, "N", None), (("done",), "nobody", None, None)]] + [
    tasks.Query(statuses=statuses, types=types, limit=limit, sort=sort)
    for statuses, types, limit, sort in [
        (None, ("bug",), None, "created"), (OPEN_STATUSES, ("task", "feature"), 2, "priority"),
        (STATUSES, ("task",), None, "updated"), (None, ("epic", "odd"), 1, "created"),
        (OPEN_STATUSES, ("bug", "task"), None, "created"), (("pending",), ("bug",), 2, "updated")]]


# --- random logs -------------------------------------------------------------------------

IDS = [f"task_17000000{n}_{n:04x}ab{n:02x}" for n in range(6)] + ["x", "a_b_c"]


# The shapes of `tags` a task line may have: the tags column must count them as
# fold.task_tags does (duplicates once, a missing or empty list as none, a string as
# one tag: a hand edit, issue 14).
TAG_SHAPES = ("one", "none", "missing", "twice", "two", "text")


def task_line(tid: str, status: str, stamp: int, extra: str, shape: str = "one") -> bytes:
    day = 86_400_000_000  # stamps days apart, so tasks fall in different weeks
    record = {"id": tid, "description": f"do {extra}", "status": status,
              "priority": ("high", "medium", "low", None, "URGENT")[len(extra) % 5],
              "created_at": format_ts(stamp * 3 * day), "updated_at": format_ts(stamp * 5 * day)}
    if "a" in extra:
        record["session"] = "s1"
    if status in ("done", "abandoned") and len(extra) != 1:
        record[f"{'completed' if status == 'done' else 'abandoned'}_at"] = format_ts(
            (stamp + 1) * 4 * day)
    if shape != "missing":
        record["tags"] = {"one": [extra], "none": [], "twice": [extra, extra],
                          "two": [extra, "b"], "text": extra}[shape]
    return orjson.dumps(record)


task_lines = st.builds(task_line, st.sampled_from(IDS), st.sampled_from([*STATUSES, "odd"]),
                       st.integers(0, 4), st.text("ab ü,", max_size=3),
                       st.sampled_from(TAG_SHAPES))


def fielded_line(line: bytes, fields: list[str], added: list[str], removed: list[str],
                 seen: str, n: int) -> bytes:
    """A task line with its task_fields record before it (field-level merge): two lines."""
    task = orjson.loads(line)
    record = {"type": "task_fields", "id": f"task_fields:{task['id']}:{n:08x}",
              "task": task["id"], "fields": fields, "tags_added": added,
              "tags_removed": removed, "from": seen, "updated_at": task["updated_at"]}
    return orjson.dumps(record) + b"\n" + line


fielded_lines = st.builds(
    fielded_line, task_lines,
    st.lists(st.sampled_from(["description", "priority", "status", "tags", "odd"]),
             max_size=3, unique=True),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
    st.lists(st.sampled_from(["a", "b", "c"]), max_size=2),
    st.sampled_from(["pending", "in_progress", "done"]), st.integers(0, 1 << 20))
lines = st.one_of(
    task_lines,
    fielded_lines,
    task_lines.map(lambda line: b"\xef\xbb\xbf" + line),  # an editor's byte order mark
    st.builds(lambda tid, n: orjson.dumps({"type": "todo_list", "id": tid, "items": [n],
                                           "updated_at": format_ts(n)}),
              st.sampled_from(["todo_list:a", "todo_list:b"]), st.integers(0, 3)),
    # Work-queue records (typed: queue.state folds them).
    st.builds(lambda kind, t, other, n: orjson.dumps({
        "type": kind, "id": f"{kind}:{t}:{other}", "task": t, "blocked_by": other,
        "parent": other, "assignee": other, "text": "n", "removed": n == 3,
        "claimed_at": format_ts(n), "created_at": format_ts(n), "updated_at": format_ts(n)}),
        st.sampled_from(["dep", "parent", "claim", "note"]), st.sampled_from(IDS),
        st.sampled_from(IDS), st.integers(0, 3)),
    # One behind an editor's byte order mark (read back in bulk: then each on its own).
    st.builds(lambda t, n: b"\xef\xbb\xbf" + orjson.dumps({
        "type": "dep", "id": f"dep:{t}:bom", "task": t, "blocked_by": IDS[0],
        "updated_at": format_ts(n)}), st.sampled_from(IDS), st.integers(0, 3)),
    # A task's body, type, close reason (aidp.backlog.details): records of their own
    # (and a hand-written second one about the same task, or one whose value is no
    # text: the last in the fold's order gives its type, `task` for none).
    st.builds(lambda kind, t, value, n, other: orjson.dumps({
        "type": kind, "id": f"{kind}:{t}{':2' if other else ''}", "task": t, kind: value,
        "completed_at": format_ts((n + 1) * 4 * 86_400_000_000), "updated_at": format_ts(n)}),
        st.sampled_from(["body", "task_type", "close_reason"]), st.sampled_from(IDS),
        st.sampled_from(["bug", "epic", "task", "", "odd", "why\n# x", 3, None]),
        st.integers(0, 3), st.booleans()),
    # A typed record whose type is no text, or empty (a hand edit, another tool's).
    st.builds(lambda kind, t: orjson.dumps({"type": kind, "id": f"odd:{kind}", "task": t}),
              st.sampled_from([None, 5, "", []]), st.sampled_from(IDS)),
    st.builds(lambda t, p, n: orjson.dumps({  # a parent link alone, as aidp writes it
        "type": "parent", "id": f"parent:{t}", "task": t, "parent": p,
        "updated_at": format_ts(n)}),
        st.sampled_from(IDS), st.sampled_from(IDS), st.integers(0, 3)),
    st.sampled_from([b"", b"   ", b"garbage", b"<<<<<<< HEAD", b"=======", b"{\"id\":",
                     b"[1, 2]", b"\"text\"", b"{\"id\": 5}", b"{\"type\": \"x\"}",
                     b"{\"description\": \"no id\"}", b"{\"id\": \"task_1_aa\", \"status\": 3}",
                     b"{\"id\": \"task_1_ab\",\"updated_at\":\"not a time\"}\r"]),
)


def chunk(parts: list[bytes], torn: bool) -> bytes:
    data = b"".join(p + b"\n" for p in parts)
    return data[:-1] if torn and data else data


def replace_file(path: Path, data: bytes) -> None:
    """Like git checkout: a new file (new inode) renamed over the old one."""
    temp = path.with_suffix(".new")
    temp.write_bytes(data)
    os.replace(temp, path)


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Like an editor that writes into the same inode."""
    with open(path, "r+b") as handle:
        handle.write(data)
        handle.truncate()


ops = st.one_of(
    st.tuples(st.just("append"), st.lists(lines, max_size=6), st.booleans()),
    st.tuples(st.just("complete")),
    st.tuples(st.just("replace"), st.lists(lines, max_size=8), st.booleans()),
    st.tuples(st.just("in_place"), st.lists(lines, max_size=8), st.booleans()),
    st.tuples(st.just("swap_lines"), st.integers(0, 50), st.integers(0, 50)),
    st.tuples(st.just("flip_byte"), st.integers(0, 10_000)),
    st.tuples(st.just("truncate"), st.integers(0, 10_000)),
    # Issue 16's git checkout: same inode, one line changed in the middle, lines added.
    st.tuples(st.just("grow_in_place"), st.integers(0, 50), st.lists(lines, min_size=1,
                                                                       max_size=4)),
    st.tuples(st.just("aidp_append"), st.lists(task_lines, min_size=1, max_size=3)),
    # A union merge: another branch's lines interleaved into ours, as a new file.
    st.tuples(st.just("merge"), st.lists(lines, min_size=1, max_size=5), st.integers(0, 50)),
    st.tuples(st.just("racy_ok")),  # vouch at once, as a read seconds later would
    st.tuples(st.just("repair")),
    st.tuples(st.just("compact")),
    st.tuples(st.just("cache"), st.sampled_from(
        ["delete", "garbage", "truncate", "flip", "empty", "version", "other_log",
         "stamp_garbage", "stamp_fifo", "stamp_delete", "db_fifo", "db_link", "journal",
         "swap_rows"])),
)


def apply(op: tuple, log: TaskLog, project: Path) -> None:
    path = log.path
    data = path.read_bytes() if path.exists() else b""
    kind = op[0]
    if kind == "append":
        log.ensure_dir()
        with open(path, "ab") as handle:
            handle.write(chunk(op[1], op[2]))
    elif kind == "complete":
        if data and not data.endswith(b"\n"):
            with open(path, "ab") as handle:
                handle.write(b"\n")
    elif kind == "replace":
        log.ensure_dir()
        replace_file(path, chunk(op[1], op[2]))
    elif kind == "in_place" and path.exists():
        rewrite_in_place(path, chunk(op[1], op[2]))
    elif kind == "swap_lines" and data:
        # Same size, same inode, different order: only a real check of the bytes sees it.
        parts = data.split(b"\n")
        i, j = op[1] % len(parts), op[2] % len(parts)
        parts[i], parts[j] = parts[j], parts[i]
        rewrite_in_place(path, b"\n".join(parts))
    elif kind == "flip_byte" and data:
        at = op[1] % len(data)
        rewrite_in_place(path, data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1:])
    elif kind == "truncate" and data:
        rewrite_in_place(path, data[: op[1] % (len(data) + 1)])
    elif kind == "grow_in_place" and data:
        parts = data.split(b"\n")
        i = op[1] % len(parts)
        parts[i] = parts[i].replace(b"pending", b"done   ").replace(b"high", b"low ")
        rewrite_in_place(path, b"\n".join(parts) + b"\n" + chunk(op[2], False))
    elif kind == "merge":
        log.ensure_dir()
        parts = data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")
        at = op[2] % (len(parts) + 1)
        replace_file(path, chunk([*parts[:at], *op[1], *parts[at:]], False))
    elif kind == "aidp_append":
        log.append([orjson.loads(line) for line in op[1]])
    elif kind == "racy_ok":
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(loader, "RACY_NS", 0)
            store.load(log)
    elif kind == "repair" and path.exists():
        maintenance.repair(log)
    elif kind == "compact" and path.exists():
        maintenance.compact(log)
    elif kind == "cache":
        corrupt_cache(project, op[1])


def corrupt_cache(project: Path, how: str) -> None:
    cache = project / ".aidp" / store.CACHE_DIR
    stamp = cache / "log.stamp"
    if how == "stamp_garbage" and stamp.exists():
        stamp.write_bytes(os.urandom(stamp.stat().st_size))
    elif how == "stamp_fifo" and cache.is_dir():
        stamp.unlink(missing_ok=True)
        os.mkfifo(stamp)
    elif how == "stamp_delete":
        stamp.unlink(missing_ok=True)
    path = project / DATABASE
    if how == "db_fifo" and cache.is_dir():
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        return
    if how == "db_link" and cache.is_dir():
        (cache / "elsewhere.db").write_bytes(path.read_bytes() if path.is_file() else b"")
        path.unlink(missing_ok=True)
        path.symlink_to(cache / "elsewhere.db")
        return
    if how == "journal" and cache.is_dir():  # a journal that is no database's
        (cache / (store.NAME + "-journal")).write_bytes(os.urandom(600))
        return
    if not path.is_file() or path.is_symlink():
        return
    blob = path.read_bytes()
    if how == "delete":
        path.unlink()
    elif how == "garbage":
        rewrite_in_place(path, os.urandom(len(blob)))
    elif how == "truncate":
        rewrite_in_place(path, blob[: len(blob) // 2])
    elif how == "flip":
        at = len(blob) // 2
        rewrite_in_place(path, blob[:at] + bytes([blob[at] ^ 1]) + blob[at + 1:])
    elif how == "empty":
        rewrite_in_place(path, b"")
    elif how in ("version", "swap_rows"):
        import sqlite3

        conn = sqlite3.connect(path, isolation_level=None)
        try:
            if how == "version":
                conn.execute("UPDATE meta SET v = 999 WHERE k = 'format'")
            else:  # a well-formed change aidp did not make: statuses swapped
                conn.execute("UPDATE task SET status = CASE status WHEN 'pending' THEN "
                             "'done' ELSE 'pending' END")
        except sqlite3.DatabaseError:
            pass
        finally:
            conn.close()
    elif how == "other_log":
        # A well-formed store of a different log of the same size, copied over ours.
        other = project / "other"
        other_log = TaskLog(other)
        other_log.ensure_dir()
        current = (project / ".aidp" / "tasklist.jsonl").read_bytes()
        other_log.path.write_bytes(current.replace(b"high", b"HIGH"))
        store.load(other_log)
        made = other / DATABASE
        if made.exists():
            rewrite_in_place(path, made.read_bytes())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=FIXTURES)
@given(steps=st.lists(ops, min_size=1, max_size=12))
def test_the_store_matches_the_full_fold_after_anything(steps: list, tmp_path: Path) -> None:
    project = tmp_path / f"p{os.urandom(4).hex()}"
    project.mkdir()
    log = TaskLog(project)
    for step in steps:
        apply(step, log, project)
        assert_same(log)
        assert_same(log)  # and again, from whatever store the first load left


@settings(max_examples=EXAMPLES // 2, deadline=None, suppress_health_check=FIXTURES)
@given(batches=st.lists(st.tuples(st.lists(lines, max_size=5), st.booleans()), max_size=8))
def test_appends_without_the_racy_guard(batches: list, tmp_path: Path) -> None:
    """Pure appends keep answering right when stat data is trusted at once."""
    project = tmp_path / f"p{os.urandom(4).hex()}"
    project.mkdir()
    log = TaskLog(project)
    log.ensure_dir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "RACY_NS", 0)
        for parts, torn in batches:
            with open(log.path, "ab") as handle:
                handle.write(chunk(parts, torn))
            assert_same(log)


def test_blocked_lists_what_each_task_waits_on_in_the_queues_order(log: TaskLog) -> None:
    """`tasks blocked` from the store: dependencies by their records' fold key (not the
    order the records were first written), then children; equal rank and age: pending
    before in progress, whatever the file's order; closed and removed links left out."""
    log.ensure_dir()

    def link(kind: str, task: str, other: str, stamp: int, **more: object) -> bytes:
        key = "blocked_by" if kind == "dep" else "parent"
        return orjson.dumps({"type": kind, "id": f"{kind}:{task}:{other}", "task": task,
                             key: other, "updated_at": format_ts(stamp), **more})

    started, epic, first, second, child, closed = IDS[:6]
    lines = [task_line(started, "in_progress", 1, "z"), task_line(epic, "pending", 1, "z"),
             task_line(first, "pending", 2, "bb"), task_line(second, "pending", 2, "bb"),
             task_line(child, "pending", 3, "bb"), task_line(closed, "done", 3, "bb"),
             link("dep", epic, second, 9), link("dep", epic, first, 5),
             link("dep", epic, closed, 5), link("dep", started, first, 5),
             link("dep", started, second, 5, removed=True), link("parent", child, epic, 5)]
    log.path.write_bytes(chunk(lines, False))
    got = assert_same(log)
    assert isinstance(got, store.StoreFold)
    day = 3 * 86_400_000_000  # created_at of stamp 1
    assert [(tid, status, waits) for tid, _p, _c, status, waits in got.blocked()] == [
        (epic, "pending", [first, second, child]), (started, "in_progress", [first])]
    assert got.blocked()[0][1:3] == ("medium", day)  # extra "z": medium
    assert [e.id for e in queue.blocked(got)] == [epic, started]


def test_assignee_and_grep_are_answered_from_the_tasks_own_records(log: TaskLog) -> None:
    """--assignee (casefolded, the holder only: not a released claim, not a pending
    task's) and --grep (description or note, casefolded) through the store: only the
    tasks a claim by that name is about are read, their own queue records folded."""
    log.ensure_dir()

    def claim(task: str, who: str, stamp: int, **more: object) -> bytes:
        return orjson.dumps({"type": "claim", "id": f"claim:{task}:{who}", "task": task,
                             "assignee": who, "claimed_at": format_ts(stamp),
                             "updated_at": format_ts(stamp), **more})

    held, released, waiting, second = IDS[:4]
    note = orjson.dumps({"type": "note", "id": f"note:{second}:1", "task": second,
                         "text": "Straße", "created_at": format_ts(1), "updated_at": format_ts(1)})
    log.path.write_bytes(chunk([
        task_line(held, "in_progress", 1, "z"), task_line(released, "in_progress", 1, "z"),
        task_line(waiting, "pending", 1, "z"), task_line(second, "in_progress", 1, "z"),
        claim(held, "Ann", 1), claim(released, "ann", 1, released_at=format_ts(2)),
        claim(waiting, "ANN", 1), claim(second, "bob", 1), claim(second, "ann", 2), note],
        False))
    got = assert_same(log)
    assert isinstance(got, store.StoreFold)
    mine = tasks.Query(assignee="aNN")
    assert [t["id"] for t in got.narrowed(mine)] == [held, waiting, second]
    assert [t["id"] for t in tasks.find_in(got, mine).tasks] == [held]
    assert [t["id"] for t in tasks.find_in(got, tasks.Query(grep="STRASSE")).tasks] == [second]


def test_weekly_series_before_1970_are_counted_in_their_week(log: TaskLog) -> None:
    """The store counts weeks in SQL, whose % keeps the dividend's sign: stamps before
    the epoch still fall in the week model.week_start gives them."""
    log.ensure_dir()
    stamps = ["1969-12-28T23:59:59Z", "1969-12-29T00:00:00Z", "1969-12-31T12:00:00Z",
              "1970-01-01T00:00:00Z", "1970-01-05T00:00:00Z", "1969-03-03T10:00:00Z"]
    log.path.write_bytes(b"".join(orjson.dumps({
        "id": f"task_1_{n:08x}", "description": "d", "status": "done", "created_at": stamp,
        "updated_at": stamp, "completed_at": stamp}) + b"\n" for n, stamp in enumerate(stamps)))
    got, full = store.load(log), log.full_fold()
    assert isinstance(got, store.StoreFold)
    for kind in ("created", "finished"):
        weeks = full.week_counts(kind)
        assert weeks == {model.week_start(model.parse_ts(s)): n for s, n in [
            ("1969-12-22T00:00:00Z", 1), ("1969-12-29T00:00:00Z", 3),
            ("1970-01-05T00:00:00Z", 1), ("1969-03-03T00:00:00Z", 1)]}
        assert got.week_counts(kind) == weeks
        assert got.week_counts(kind, since=model.parse_ts("1969-12-30T00:00:00Z")) == {
            w: n for w, n in weeks.items() if w >= model.parse_ts("1969-12-29T00:00:00Z")}


def test_a_torn_line_is_reread_once_completed(log: TaskLog, project: Path) -> None:
    log.ensure_dir()
    whole = task_line(IDS[0], "pending", 1, "a")
    log.path.write_bytes(chunk([task_line(IDS[1], "done", 1, "b")], False) + whole[:10])
    assert assert_same(log).damaged == 1
    assert (project / DATABASE).exists()
    with open(log.path, "ab") as handle:
        handle.write(whole[10:] + b"\n")
    fold = assert_same(log)
    assert fold.damaged == 0 and IDS[0] in fold.tasks


def test_racily_clean_same_size_rewrite_is_caught(log: TaskLog, project: Path) -> None:
    """Equal stat data is not proof while the file changed close to the check: a reader
    that verified a file changed less than RACY_NS ago vouches for nothing, so a
    same-size rewrite in place within one timestamp tick is still checked."""
    log.ensure_dir()
    first = chunk([task_line(IDS[0], "pending", 1, "a")], False)
    log.path.write_bytes(first)
    store.load(log)
    assert read_stamp(project / ".aidp")[1] == NO_KEY  # just written: racy, not vouched
    rewrite_in_place(log.path, first.replace(b'"pending"', b'"done"   '))
    assert store.load(log).tasks[IDS[0]]["status"] == "done"
    assert_same(log)


def test_stale_stamp_of_a_reused_inode_is_not_trusted(log: TaskLog, project: Path) -> None:
    """Issue 16: a store built on branch A, then `git checkout` of branch B (same log
    with one pending line rewritten to done, plus appended tasks) into a file that got
    the same inode number: the cache must not answer from branch A."""
    log.ensure_dir()
    lines = [task_line(f"task_1700000000_{n:08x}", "pending", n, "x") for n in range(200)]
    log.path.write_bytes(chunk(lines, False))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "RACY_NS", 0)  # vouch at once, as a read seconds later would
        store.load(log)
    assert read_stamp(project / ".aidp") is not None
    changed = list(lines)
    changed[100] = changed[100].replace(b'"pending"', b'"done"   ')
    changed += [task_line("task_1700000001_0000ffff", "pending", 1, "new")]
    rewrite_in_place(log.path, chunk(changed, False))  # same inode, grown
    got = assert_same(log)
    assert got.tasks["task_1700000000_00000064"]["status"] == "done"
    assert tasks.fold_stats(got)["done"] == 1


def test_a_forged_stamp_on_a_same_inode_grown_file_is_still_caught(log: TaskLog,
                                                                    project: Path) -> None:
    """Even with the stat data vouched by mistake, the cache then only trusts what it
    vouched: a file whose stat data differs in any field is checked in full."""
    log.ensure_dir()
    lines = [task_line(f"task_1700000000_{n:08x}", "pending", n, "x") for n in range(50)]
    log.path.write_bytes(chunk(lines, False))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "RACY_NS", 0)
        store.load(log)
    nonce, key, db_key = read_stamp(project / ".aidp")
    changed = list(lines)
    changed[25] = changed[25].replace(b'"pending"', b'"done"   ')
    rewrite_in_place(log.path, chunk(changed, False))
    st = os.stat(log.path)
    assert stat_key(st)[:3] == key[:3]  # same device, inode and size
    assert_same(log)
    write_stamp(project / ".aidp", nonce, key, db_key)  # the old file's data: never matches
    assert store.load(log).tasks["task_1700000000_00000019"]["status"] == "done"


def test_aidp_appends_keep_the_prefix_trusted(log: TaskLog, project: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that appends to a vouched file vouches for the result, so the next read
    does not re-read the prefix (and still answers like a full fold)."""
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "RACY_NS", 0)
        store.load(log)
    log.append([orjson.loads(task_line(IDS[1], "done", 2, "b"))])
    assert read_stamp(project / ".aidp")[1] == stat_key(os.stat(log.path))
    def no_full_check(self: object, meta: object) -> bool:
        raise AssertionError("re-read the vouched prefix")

    monkeypatch.setattr(loader._Load, "_prefix_holds", no_full_check)
    assert_same(log)


def test_reads_create_nothing_without_a_folder(tmp_path: Path) -> None:
    log = TaskLog(tmp_path / "nowhere")
    fold = store.load(log)
    assert (fold.tasks, fold.lines) == ({}, 0)
    assert not (tmp_path / "nowhere").exists()


def test_a_read_only_cache_still_reads(log: TaskLog, project: Path) -> None:
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    (project / ".aidp" / store.CACHE_DIR).write_text("not a folder")  # writes must fail
    assert_same(log)
    assert (project / ".aidp" / store.CACHE_DIR).read_text() == "not a folder"


def test_the_store_is_ignored_by_git_even_without_aidp_gitignore(log: TaskLog,
                                                                   project: Path) -> None:
    (project / ".aidp").mkdir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    store.load(log)
    assert (project / DATABASE).exists()
    assert "*" in (project / ".aidp" / store.CACHE_DIR / ".gitignore").read_text().split()
    assert not list((project / ".aidp" / store.CACHE_DIR).glob("*.tmp"))


def test_small_logs_are_folded_without_the_store(log: TaskLog, project: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loader, "MIN_BYTES", 32 * 1024)
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    assert_same(log)
    assert not (project / ".aidp" / store.CACHE_DIR).exists()


def test_the_cli_reads_through_the_store(cli, project: Path) -> None:
    ids = [cli("tasks", "add", f"task {n}", "-q").out.strip() for n in range(5)]
    assert cli("tasks", "done", ids[1][-8:-2]).code == 0
    listed = orjson.loads(cli("tasks", "list", "--status", "pending", "--json").out)
    assert sorted(t["id"] for t in listed) == sorted(ids[:1] + ids[2:])
    stats = orjson.loads(cli("tasks", "stats", "--json").out)
    assert (stats["total"], stats["pending"], stats["done"]) == (5, 4, 1)
    assert (project / DATABASE).exists()
    shown = orjson.loads(cli("tasks", "show", ids[3][-8:-3], "--json").out)
    assert shown["id"] == ids[3]


def test_rewrites_sweep_temp_files_left_by_killed_writers(log: TaskLog, project: Path) -> None:
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    store.load(log)
    cache = project / ".aidp" / store.CACHE_DIR
    old, fresh = cache / "store.db.1.dead.tmp", cache / "store.db.2.busy.tmp"
    old.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(old, (0, 0))
    (cache / store.NAME).unlink()
    assert_same(log)
    assert not old.exists() and fresh.exists()


def test_a_store_from_elsewhere_is_never_trusted(tmp_path: Path) -> None:
    """cache/ is git-ignored, but a repository can force-add one, and a person can copy
    a checkout with its cache: a database whose inode is not the one its writer
    recorded is rebuilt, even when it describes the log exactly — here it lies."""
    data = chunk([task_line(IDS[0], "pending", 1, "a"), task_line(IDS[1], "done", 2, "b")],
                 False)
    logs = []
    for name in ("theirs", "ours"):
        log = TaskLog(tmp_path / name)
        log.ensure_dir()
        log.path.write_bytes(data)
        logs.append(log)
    store.load(logs[0])
    import sqlite3

    conn = sqlite3.connect(tmp_path / "theirs" / DATABASE, isolation_level=None)
    conn.execute("UPDATE task SET status = 'abandoned'")  # what a planted file could say
    conn.close()
    for name in (store.NAME, "log.stamp"):  # its stamp too, copied along
        planted = tmp_path / "ours" / DATABASE.parent / name
        planted.parent.mkdir(exist_ok=True)
        planted.write_bytes((tmp_path / "theirs" / DATABASE.parent / name).read_bytes())
    planted_inode = (tmp_path / "ours" / DATABASE).stat().st_ino
    assert assert_same(logs[1]).tasks[IDS[0]]["status"] == "pending"
    assert (tmp_path / "ours" / DATABASE).stat().st_ino != planted_inode


def test_a_symlinked_cache_folder_is_not_written_through(log: TaskLog, project: Path,
                                                        tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    (project / ".aidp" / store.CACHE_DIR).symlink_to(outside)
    assert_same(log)
    assert list(outside.iterdir()) == []


def test_a_writer_rebuilds_the_cache_before_it_takes_the_lock(log: TaskLog, project: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """A cold read (a fresh clone, a checkout) costs a full parse: a writer does it
    before taking the lock, so other writers never wait for it (issue 16)."""
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    held_during_rebuild: list[bool] = []
    create = loader._Load._create

    def spying(self: loader._Load, path: Path, end: int) -> None:
        held_during_rebuild.append(log.writer_active())
        create(self, path, end)

    monkeypatch.setattr(loader._Load, "_create", spying)
    tasks.set_status(log, [IDS[0]], "done")
    assert held_during_rebuild == [False]
    assert assert_same(log).tasks[IDS[0]]["status"] == "done"


def test_a_read_only_cache_answers_from_the_file_and_writes_nowhere_else(
        log: TaskLog, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where .aidp/cache cannot be written, every read is a plain fold: exact after the
    file changes, and nothing is written to the user's cache folder either."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    log.ensure_dir()
    log.path.write_bytes(chunk([task_line(IDS[0], "pending", 1, "a")], False))
    (project / ".aidp" / store.CACHE_DIR).write_text("not a folder")  # writes must fail
    assert not isinstance(assert_same(log), store.StoreFold)
    with open(log.path, "ab") as handle:  # still exact after the file changes
        handle.write(chunk([task_line(IDS[0], "done", 2, "b")], False))
    assert assert_same(log).tasks[IDS[0]]["status"] == "done"
    assert not (tmp_path / "xdg").exists()


def many_tasks(n: int, status: str = "pending") -> bytes:
    return chunk([task_line(f"task_1700000000_{k:08x}", status, k % 5, "ab"[k % 2])
                  for k in range(n)], False)


def test_a_build_writes_the_task_rows_in_their_order(log: TaskLog) -> None:
    """The rows of a build go in in the table's order (seq, the rowid), page after page,
    whatever order the winning lines come in: here every task's winning line comes in
    the reverse order of the tasks. In file order the table's pages were split as they
    filled and left about half full (backlog ae41: 40% at 1M events), and a build wrote
    each page several times."""
    log.ensure_dir()
    n = 1500
    filed = [task_line(f"task_1700000000_{k:08x}", "pending", k, "ab") for k in range(n)]
    closed = [task_line(f"task_1700000000_{k:08x}", "done", 2 * n - k, "ab")
              for k in reversed(range(n))]
    log.path.write_bytes(chunk(filed + closed, False))
    got = store.load(log)
    assert isinstance(got, store.StoreFold)
    assert_same(log, got)
    unused, size = got.db.execute("SELECT sum(unused), sum(pgsize) FROM dbstat "
                                  "WHERE name = 'task' AND pagetype = 'leaf'").fetchone()
    assert unused < 0.15 * size


def test_appends_refresh_the_store_from_where_it_ended(log: TaskLog, project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """After appends the store takes the new lines only: the log is read from where
    the store ended, never again from its start, in the same database file."""
    log.ensure_dir()
    log.path.write_bytes(many_tasks(40))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "RACY_NS", 0)  # vouched at once, as a read later would be
        store.load(log)  # the first build
    inode = (project / DATABASE).stat().st_ino
    covered = log.path.stat().st_size
    starts: list[int] = []
    feed = fill.Filler.feed

    def spying(self: fill.Filler, fd: int, start: int, end: int, crc: int) -> int:
        starts.append(start)
        return feed(self, fd, start, end, crc)

    monkeypatch.setattr(fill.Filler, "feed", spying)
    for n in range(3):  # a task done, one added, another write right after
        log.append([orjson.loads(task_line("task_1700000000_00000003", "done", 9 + n, "b")),
                    orjson.loads(task_line(f"task_1700000000_0000fff{n}", "pending", 9, "c"))])
        assert assert_same(log).tasks["task_1700000000_00000003"]["status"] == "done"
        assert starts[-1] == covered
        covered = log.path.stat().st_size
    assert (project / DATABASE).stat().st_ino == inode


@pytest.mark.parametrize("how", ["flip", "garbage", "truncate", "swap_rows", "version",
                                 "stamp_delete", "db_fifo", "db_link", "journal"])
def test_a_changed_or_strange_database_is_rebuilt(log: TaskLog, project: Path,
                                                  how: str) -> None:
    """SQLite keeps no checksum of its pages: a database changed by anything but aidp
    (its stat data is not the stamp's), or something else at its path, is never
    trusted, never followed, never waited on: rebuilt, and the answers are exact."""
    log.ensure_dir()
    log.path.write_bytes(many_tasks(30) + chunk([task_line(IDS[0], "done", 3, "x")], False))
    store.load(log)
    corrupt_cache(project, how)
    got = assert_same(log)
    assert isinstance(got, store.StoreFold)
    assert (project / DATABASE).is_file() and not (project / DATABASE).is_symlink()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/self/fd")
def test_reads_and_merges_leave_no_descriptor_open(log: TaskLog,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A fold keeps its log and database open only while it lives: reads and refreshes
    must not pile up descriptors."""
    log.ensure_dir()
    log.path.write_bytes(many_tasks(20))
    opened = len(os.listdir("/proc/self/fd"))
    for n in range(60):
        fold = TaskLog(log.root).read()
        assert fold.tasks[f"task_1700000000_{n % 20:08x}"]["status"] == "pending"
        log.append([orjson.loads(task_line(f"task_1700000001_{n:08x}", "pending", 1, "a"))])
    del fold
    assert len(os.listdir("/proc/self/fd")) <= opened + 2


# --- tasks list --json through the store ---------------------------------------------

QIDS = [f"task_1700000000_{n:08x}" for n in range(6)]
queue_lines = st.one_of(
    st.builds(lambda t, b: orjson.dumps({"type": "dep", "id": f"dep:{t}:{b}", "task": t,
                                         "blocked_by": b, "updated_at": format_ts(1)}),
              st.sampled_from(QIDS), st.sampled_from(QIDS)),
    st.builds(lambda t, p: orjson.dumps({"type": "parent", "id": f"parent:{t}", "task": t,
                                         "parent": p, "updated_at": format_ts(1)}),
              st.sampled_from(QIDS), st.sampled_from(QIDS)),
    st.builds(lambda t, who: orjson.dumps({"type": "claim", "id": f"claim:{t}:{who}", "task": t,
                                           "assignee": who, "claimed_at": format_ts(2),
                                           "updated_at": format_ts(2)}),
              st.sampled_from(QIDS), st.sampled_from(["ann", "bob"])),
    st.builds(lambda t, n: orjson.dumps({"type": "note", "id": f"note:{t}:{n:08x}", "task": t,
                                         "text": "seen ü", "created_at": format_ts(n),
                                         "updated_at": format_ts(n)}),
              st.sampled_from(QIDS), st.integers(0, 3)),
)
open_task_lines = st.builds(
    lambda tid, status, created, updated, foreign: orjson.dumps({
        "id": tid, "description": "do ü \u202e", "status": status, "priority": "high",
        "created_at": format_ts(created * 1_000_000), "updated_at": format_ts(updated),
        "tags": ["a"], **({"parent": "theirs", "notes": 3} if foreign else {})}),
    st.sampled_from(QIDS), st.sampled_from(["pending", "in_progress", "done"]),
    st.integers(0, 2), st.integers(0, 9), st.booleans())


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=FIXTURES)
@given(first=st.lists(st.one_of(open_task_lines, queue_lines), max_size=14),
       later=st.lists(st.one_of(open_task_lines, queue_lines), max_size=6),
       limit=st.sampled_from([None, 0, 1, 3]))
def test_list_json_from_the_listing_equals_the_plain_fold(cli, log: TaskLog, first, later,
                                                          limit, monkeypatch) -> None:
    """`tasks list --status S --json` from the store adds the work queue's keys: byte
    for byte what the plain fold gives, before and after appends, for tasks with equal
    created stamps, with queue links, and with foreign keys named like the queue's."""
    from aidp.backlog import queue

    log.ensure_dir()
    log.path.write_bytes(chunk(first, False))
    for step in (None, later):
        if step is not None:
            with open(log.path, "ab") as handle:
                handle.write(chunk(step, False))
        full = log.full_fold()
        for statuses in (("pending",), ("pending", "in_progress")):
            words = [a for s in statuses for a in ("--status", s)]
            more = [] if limit is None else ["--limit", str(limit)]
            got = cli("tasks", "list", *words, *more, "--json")
            found = tasks.query(full.select(statuses),
                                tasks.Query(statuses=statuses, limit=limit))
            qs = queue.state(full)
            assert got.code == 0
            assert got.out.encode() == render.json_bytes(
                [queue.with_extras(qs, t) for t in found])
        # --all: every task, streamed a batch (here: 2) at a time.
        everything = [queue.with_extras(queue.state(full), t) for t in tasks.query(
            full.tasks.values(), tasks.Query(statuses=None, limit=limit))]
        more = [] if limit is None else ["--limit", str(limit)]
        assert cli("tasks", "list", "--all", *more, "--json").out.encode() == render.json_bytes(
            everything)
        assert cli("tasks", "list", "--all", *more, "-f", "jsonl").out.encode() == (
            render.jsonl_bytes(everything))
        assert cli("tasks", "list", "--all", *more, "-f", "ids").out == "".join(
            t["id"] + "\n" for t in everything)
        if full.tasks:  # the answers above came through the store
            assert (log.path.parent / DATABASE.relative_to(".aidp")).exists()


def test_list_json_shows_a_claim_holder_from_the_kept_queue_keys(cli, log: TaskLog) -> None:
    """The queue keys differ by status: a claimed task in progress shows its assignee,
    a pending one (released by a reopen) none — before and after more lines."""
    started, waiting = QIDS[0], QIDS[1]
    log.ensure_dir()
    records = [
        {"id": started, "description": "a", "status": "in_progress", "priority": "high",
         "created_at": format_ts(1), "updated_at": format_ts(1)},
        {"id": waiting, "description": "b", "status": "pending", "priority": "high",
         "created_at": format_ts(2), "updated_at": format_ts(2)},
        *({"type": "claim", "id": f"claim:{tid}:ann", "task": tid, "assignee": "ann",
           "claimed_at": format_ts(3), "updated_at": format_ts(3)} for tid in QIDS[:2]),
    ]
    log.path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    for _ in range(2):
        shown = orjson.loads(cli("tasks", "list", "--json").out)
        assert [(t["id"], t.get("assignee")) for t in shown] == [(waiting, None),
                                                                 (started, "ann")]
        log.append([{"type": "note", "id": f"note:{waiting}:0000000{n}", "task": waiting,
                     "text": "x" * 200, "created_at": format_ts(4), "updated_at": format_ts(4)}
                    for n in range(3)])


def test_tasks_changed_concurrently_are_answered_by_the_store(
        log: TaskLog) -> None:
    """Field-level merge: aidp's own changes (each with its task_fields record) and a
    task whose merge is no single line (two clones changed different fields) are
    answered by the store, with the plain fold's answers."""
    first = tasks.add(log, "first", tags=["a"])
    second = tasks.add(log, "second")
    queue.edit(log, first["id"], priority="high", add_tags=["b"])
    tasks.set_status(log, [second["id"]], "done")
    got = assert_same(log)
    assert isinstance(got, store.StoreFold)  # not a full fold
    # another clone's change of the description, made before it saw the priority
    theirs = {**first, "description": "theirs", "updated_at": format_ts(
        model.ts_of(first) + 5)}
    companion = {"type": "task_fields", "id": f"task_fields:{first['id']}:0a0b0c0d",
                 "task": first["id"], "fields": ["description"],
                 "updated_at": theirs["updated_at"]}
    with open(log.path, "ab") as handle:
        handle.write(orjson.dumps(companion) + b"\n" + orjson.dumps(theirs) + b"\n")
    got = assert_same(log)
    assert isinstance(got, store.StoreFold)  # a row holding the merged record
    merged = got.tasks[first["id"]]
    assert (merged["description"], merged["priority"], merged["tags"]) == (
        "theirs", "high", ["a", "b"])


odd_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text("aü\u2028\"\\\x00é😀 ", max_size=4),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text("kü\"", max_size=3), inner, max_size=3),
    max_leaves=6)
odd_task_lines = st.builds(
    lambda tid, status, created, priority, tags, extra, first: orjson.dumps({
        **({} if first else extra), "id": tid, "description": "dö \u202e \"x\"",
        "status": status, **({"priority": priority} if priority else {}),
        "created_at": format_ts(created * 1_000_000), "updated_at": format_ts(created),
        "tags": tags, **(extra if first else {})}),
    st.sampled_from(QIDS), st.sampled_from([*STATUSES, "odd"]), st.integers(0, 3),
    st.sampled_from([None, "high", "low", "URGENT"]), st.lists(st.sampled_from("ab"), max_size=2),
    st.dictionaries(st.sampled_from(["x", "notes", "parent", "blocked_by", "ü", "nested"]),
                    odd_values, max_size=3), st.booleans())
LIST_OPTIONS = st.lists(st.sampled_from([
    ["--status", "pending"], ["--status", "in_progress"], ["--status", "done"], ["open"],
    ["--all"], ["--sort", "updated"], ["--sort", "priority"], ["--limit", "2"],
    ["--limit", "0"], ["-p", "high"], ["-p", "medium"], ["-t", "a"], ["--grep", "dö"],
    ["--since", "1970-01-01T00:00:02Z"]]), max_size=4)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=FIXTURES)
@given(lines=st.lists(st.one_of(odd_task_lines, queue_lines), max_size=14),
       later=st.lists(st.one_of(odd_task_lines, queue_lines), max_size=4),
       options=LIST_OPTIONS)
def test_list_json_prints_the_plain_folds_bytes(cli, log: TaskLog, lines, later, options,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`tasks list --json` through the store (the open tasks' bodies written as they are
    kept) prints byte for byte what the plain fold prints, whatever the statuses, sort,
    filters and limit, for tasks with links, odd values (floats, nested objects, non-ASCII
    and escaped text) and keys other tools wrote, before and after appends."""
    log.ensure_dir()
    log.path.write_bytes(chunk(lines, False))
    argv = ["tasks", "list", *(word for option in options for word in option), "--json"]
    for step in (None, later):
        if step is not None:
            with open(log.path, "ab") as handle:
                handle.write(chunk(step, False))
        got = cli(*argv)
        monkeypatch.setattr(loader, "MIN_BYTES", 1 << 40)  # a plain fold
        plain = cli(*argv)
        monkeypatch.setattr(loader, "MIN_BYTES", 0)
        assert (got.code, got.out, got.err) == (plain.code, plain.out, plain.err)
        if lines and got.code == 0:
            assert (log.path.parent / DATABASE.relative_to(".aidp")).exists()


def test_list_json_walks_the_covering_index_in_order(log: TaskLog) -> None:
    """`list --json` of one open status, and of both, reads one range of task_created per
    status (the bodies are in the index) and never sorts: SQLite's plan for every query
    the listing runs."""
    log.ensure_dir()
    log.path.write_bytes(many_tasks(30) + many_tasks(30, "in_progress").replace(
        b"task_1700000000_", b"task_1700000001_"))
    got = store.load(log)
    assert isinstance(got, store.StoreFold)
    for statuses in (("pending",), OPEN_STATUSES):
        asked: list[str] = []
        got.db.set_trace_callback(asked.append)
        found = got.find_encoded(tasks.Query(statuses=statuses))
        got.db.set_trace_callback(None)
        assert found is not None and len(found) == 30 * len(statuses)
        plans = [row[-1] for sql in asked if sql.lstrip().startswith("SELECT")
                 for row in got.db.execute(f"EXPLAIN QUERY PLAN {sql}")]
        searches = [p for p in plans if p.startswith(("SEARCH", "SCAN"))]
        assert searches == ["SEARCH task USING COVERING INDEX task_created (status=?)"] * len(
            statuses), plans
        assert not any("TEMP B-TREE" in p for p in plans), plans


def test_list_json_of_pending_tasks_reads_no_typed_record(log: TaskLog) -> None:
    """`list --status pending --json` joins the stored elements: each pending task's
    links (blockers, parent, notes, type) are in its row (aidp.store.shown), so the
    listing asks nothing of the typed records and decodes no task (backlog 0776: at 1M
    events, 12.5k linked tasks decoded, joined and encoded again) — byte for byte the
    plain fold's, before and after a write that changes some of those links. With an
    in-progress task (a lease goes by the clock), only that one's records are read."""
    from aidp.app import listing

    log.ensure_dir()
    ids = [f"task_1700000000_{k:08x}" for k in range(40)]
    links = [
        *({"type": "dep", "id": f"dep:{t}:{ids[0]}", "task": t, "blocked_by": ids[0],
           "updated_at": format_ts(5)} for t in ids[1:30:3]),
        *({"type": "parent", "id": f"parent:{t}", "task": t, "parent": ids[1],
           "updated_at": format_ts(5)} for t in ids[2:30:5]),
        *({"type": "note", "id": f"note:{t}:1", "task": t, "text": "why",
           "created_at": format_ts(6), "updated_at": format_ts(6)} for t in ids[3:30:4]),
        {"type": "task_type", "id": f"task_type:{ids[4]}", "task": ids[4],
         "task_type": "bug", "updated_at": format_ts(5)}]
    log.path.write_bytes(many_tasks(40) + b"".join(orjson.dumps(r) + b"\n" for r in links))
    pending = tasks.Query(statuses=("pending",))
    for step in range(3):
        got = store.load(log)
        assert isinstance(got, store.StoreFold)
        asked: list[str] = []
        got.db.set_trace_callback(asked.append)
        found = listing.answer(got, pending, shape="json")
        got.db.set_trace_callback(None)
        assert found.batches is not None
        printed = b",\n".join(bytes(element) for batch in found.batches for element in batch)
        full = log.full_fold()
        expected = queue.shown(full, tasks.find_in(full, pending).tasks)
        assert printed == bytes(model.json_elements(expected))
        assert sum("blocked_by" in t or "notes" in t for t in expected) >= 10
        assert not [sql for sql in asked if "typed" in sql], asked
        if step == 0:  # a blocker removed, a note added, a task started and claimed
            log.append([{**links[0], "removed": True, "updated_at": format_ts(9)},
                        {"type": "note", "id": f"note:{ids[5]}:2", "task": ids[5],
                         "text": "later", "created_at": format_ts(9),
                         "updated_at": format_ts(9)}])
        elif step == 1:
            started = {**full.tasks[ids[7]], "status": "in_progress",
                       "updated_at": format_ts(1 << 45)}
            log.append([started, {"type": "claim", "id": f"claim:{ids[7]}:ann",
                                  "task": ids[7], "assignee": "ann",
                                  "claimed_at": format_ts(10), "updated_at": format_ts(10)}])
    both = tasks.Query(statuses=OPEN_STATUSES)
    asked.clear()
    got.db.set_trace_callback(asked.append)
    found = listing.answer(got, both, shape="json")
    got.db.set_trace_callback(None)
    assert found.batches is not None
    printed = b",\n".join(bytes(element) for batch in found.batches for element in batch)
    expected = queue.shown(full, tasks.find_in(full, both).tasks)
    assert printed == bytes(model.json_elements(expected))
    assert [t.get("assignee") for t in expected if t["id"] == ids[7]] == ["ann"]
    typed = [sql for sql in asked if "typed" in sql]
    assert len(typed) == 1 and ids[7] in typed[0] and ids[8] not in typed[0], typed


def test_a_typed_record_that_moves_to_another_task_leaves_the_first_as_it_was(
        log: TaskLog) -> None:
    """A typed record's later line may name another task than its earlier one (written
    by hand, or a tool): the store's kept element of the task it named before loses its
    link as well as the one it names now gains it (aidp.store.shown), after a refresh of
    the store as after a build."""
    from aidp.app import listing

    log.ensure_dir()
    first, second, blocker = QIDS[0], QIDS[1], QIDS[2]
    log.path.write_bytes(many_tasks(3) + orjson.dumps(
        {"type": "dep", "id": "dep:moved", "task": first, "blocked_by": blocker,
         "updated_at": format_ts(5)}) + b"\n")
    pending = tasks.Query(statuses=("pending",))
    for step in range(2):
        got = store.load(log)
        assert isinstance(got, store.StoreFold)
        found = listing.answer(got, pending, shape="json")
        assert found.batches is not None
        shown = orjson.loads(b"[" + b",".join(bytes(e) for b in found.batches for e in b) + b"]")
        full = log.full_fold()
        assert shown == queue.shown(full, tasks.find_in(full, pending).tasks)
        holder = first if step == 0 else second
        assert [t["id"] for t in shown if "blocked_by" in t] == [holder]
        log.append([{"type": "dep", "id": "dep:moved", "task": second, "blocked_by": blocker,
                     "updated_at": format_ts(6)}])


def test_the_queue_s_questions_find_typed_rows_by_task_not_by_kind(log: TaskLog) -> None:
    """Per task, the work queue's queries look its typed rows up by task (`+kind`: the
    typed_kind index, SQLite having no statistics, would walk every row of that kind for
    each task): ready and the claims read as few of SQLite's steps with 3,000 links and
    claims among closed tasks as with 300 (not timed)."""
    log.ensure_dir()
    log.path.write_bytes(many_tasks(20) + many_tasks(20, "in_progress").replace(
        b"task_1700000000_000000", b"task_1700000000_100000"))

    def closed_links(start: int, stop: int) -> None:
        done = [f"task_1700000001_{n:08x}" for n in range(start, stop)]
        log.path.write_bytes(log.path.read_bytes() + chunk([
            task_line(tid, "done", 1, "a") for tid in done] + [orjson.dumps(record) for tid in done
            for record in ({"type": "dep", "id": f"dep:{tid}:x", "task": tid, "blocked_by": done[0]},
                           {"type": "claim", "id": f"claim:{tid}:ann", "task": tid,
                            "assignee": "ann"})], False))

    def steps() -> int:
        fold = store.load(log)
        assert isinstance(fold, store.StoreFold)
        counted: list[int] = []
        fold.db.set_progress_handler(lambda: counted.append(1), 100)
        assert len(fold.ready(8)) == 8 and fold.claims(("in_progress",)) == []
        fold.db.set_progress_handler(None, 0)
        return len(counted)

    closed_links(0, 300)
    few = steps()
    closed_links(300, 3000)
    many = steps()
    assert many <= few + 2, (few, many)
