"""Damage fuzzing: whatever happens to the bytes of the log, reads answer, writes work.

A valid log is damaged at random — truncated, bytes flipped, conflict markers, invalid
UTF-8, NUL bytes, huge lines, JSON nested 100k deep — and then read, written and
repaired through the real CLI (in process, with --dir). Expected, every time:
- every read exits 0; stderr holds exactly one warning, naming the count of damaged
  lines and `aidp tasks repair`, when (and only when) something was damaged;
- what the read returns is exactly the fold of the lines that are still valid: no
  record is invented, no intact line is lost, the count matches an independent check;
- writes keep working and change nothing else;
- `repair` leaves a file without damage that folds to the very same tasks, and keeps
  the damaged file as a backup.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import examples

from aidp.core.model import format_ts, new_task, transition, ts_of
from aidp.tasklist.log import TaskLog, encode

CONFLICT_MARKERS = [b"<<<<<<< HEAD", b"=======", b"||||||| merged common ancestors",
                    b">>>>>>> origin/main"]
INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80",
                b"\x80", b"\xe2\x82"]
WARNING = re.compile(
    r"^Warning: skipped (\d+) damaged lines? in .*; run 'aidp tasks repair' to remove them$"
)


def base_records(count: int, seed: int) -> list[dict]:
    """A realistic log: tasks created, then moved through their statuses."""
    records: list[dict] = []
    latest: dict[str, dict] = {}
    clock = 1_795_000_000_000_000 + seed
    for n in range(count):
        clock += 1_000 + (n * 7919 + seed) % 5_000
        if latest and n % 3:
            tid = sorted(latest)[(n * 31 + seed) % len(latest)]
            status = ("in_progress", "done", "abandoned", "pending")[(n + seed) % 4]
            reason = "fuzz" if status == "abandoned" else None
            record = transition(latest[tid], status, reason=reason, now=clock)
        else:
            record = new_task(f"task number {n} [bold]ü{n}[/bold]", tags=[f"t{n % 3}"],
                              session="fuzz", now=clock)
        latest[record["id"]] = record
        records.append(record)
        if n % 5 == 4:  # the session's TODO list, a snapshot per change
            items = [{"id": f"{k:08x}", "content": f"step {k}", "status": "pending",
                      "priority": "medium", "subtasks": []} for k in range(n // 5 + 1)]
            records.append({"type": "todo_list", "id": "todo_list:fuzz", "session": "fuzz",
                            "items": items, "active": True, "paused": False,
                            "updated_at": format_ts(clock + 1)})
    return records


# --- damage ---------------------------------------------------------------------------


@st.composite
def damage(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` with one to four kinds of damage applied at random places."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(
            ["truncate", "flip", "marker", "utf8", "nul", "huge", "nested", "garbage", "splice"]
        ))
        at = draw(st.integers(0, len(out)))
        if kind == "truncate":
            del out[at:]
        elif kind == "flip" and out:
            for _ in range(draw(st.integers(1, 8))):
                i = draw(st.integers(0, len(out) - 1))
                out[i] ^= draw(st.integers(1, 255))
        elif kind == "marker":
            out[at:at] = b"\n" + draw(st.sampled_from(CONFLICT_MARKERS)) + b"\n"
        elif kind == "utf8":
            out[at:at] = draw(st.sampled_from(INVALID_UTF8))
        elif kind == "nul":
            out[at:at] = b"\x00" * draw(st.integers(1, 64))
        elif kind == "huge":
            size = draw(st.sampled_from([70_000, 1_000_000]))
            line = b'{"id":"task_1_0000beef","description":"' + b"x" * size + b'"'
            out[at:at] = b"\n" + line + draw(st.sampled_from([b"}", b""])) + b"\n"
        elif kind == "nested":
            depth = draw(st.sampled_from([1_100, 100_000]))
            opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
            out[at:at] = b"\n" + opener * depth + b"1" + closer * depth + b"\n"
        elif kind == "garbage":
            out[at:at] = draw(st.binary(min_size=1, max_size=40))
        elif kind == "splice" and out:
            start = draw(st.integers(0, len(out) - 1))
            out[at:at] = out[start:start + draw(st.integers(1, 200))]
    return bytes(out)


# --- an independent reading of a log ------------------------------------------------

_TEXT_KEYS = ("description", "status", "priority", "created_at", "updated_at", "session",
              "discovered_during", "started_at", "completed_at", "abandoned_at",
              "abandoned_reason")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _valid_task(value: object) -> bool:
    if not isinstance(value, dict) or "type" in value:
        return False
    rid = value.get("id")
    if not isinstance(rid, str) or not rid or _CONTROL.search(rid):
        return False
    if any(value.get(k) is not None and not isinstance(value.get(k), str) for k in _TEXT_KEYS):
        return False
    tags = value.get("tags")
    return tags is None or (isinstance(tags, list) and all(isinstance(t, str) for t in tags))


def reference(data: bytes) -> tuple[dict[str, dict], int]:
    """(tasks, damaged lines), read the slow and obvious way."""
    winners: dict[str, tuple[tuple[int, int], dict]] = {}
    damaged = 0
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = orjson.loads(raw.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            damaged += 1
            continue
        if isinstance(value, dict) and "type" in value:
            continue  # a typed record: another namespace, never damage
        if not _valid_task(value):
            damaged += 1
            continue
        key = (ts_of(value), number)
        if value["id"] not in winners or key > winners[value["id"]][0]:
            winners[value["id"]] = (key, value)
    return {tid: record for tid, (_key, record) in winners.items()}, damaged


def reference_typed(data: bytes) -> dict[str, dict]:
    """The typed records (TODO lists) the fold should hold."""
    winners: dict[str, tuple[tuple[int, int], dict]] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            value = orjson.loads(raw.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict) and "type" in value and isinstance(value.get("id"), str):
            key = (ts_of(value), number)
            if value["id"] not in winners or key > winners[value["id"]][0]:
                winners[value["id"]] = (key, value)
    return {rid: record for rid, (_key, record) in winners.items()}


# --- the checks -------------------------------------------------------------------------


def read_all(cli, root: Path) -> tuple[dict[str, dict], int]:
    """Every read command must answer; returns (tasks from --json, damage warned about)."""
    listed = cli("--dir", str(root), "tasks", "list", "--all", "--json")
    assert listed.code == 0, listed
    tasks = {t["id"]: t for t in orjson.loads(listed.out)}
    assert len(tasks) == len(orjson.loads(listed.out)), "an id appears twice"
    warned = _warned(listed.err)
    for args in (["tasks", "list"], ["tasks", "stats", "--json"],
                 ["tasks", "list", "--format", "csv"],
                 ["tasks", "list", "--all", "--format", "markdown"], ["todo", "list"],
                 ["todo", "show", "--session", "fuzz"],
                 ["todo", "show", "--session", "fuzz", "--json"]):
        other = cli("--dir", str(root), *args)
        assert other.code == 0, other
        assert _warned(other.err) == warned
    return tasks, warned


def _warned(err: str) -> int:
    lines = err.splitlines()
    if not lines:
        return 0
    assert len(lines) == 1, err
    match = WARNING.match(lines[0])
    assert match, err
    assert int(match.group(1)) > 0
    return int(match.group(1))


def listed(tasks: dict[str, dict]) -> dict[str, dict]:
    """What `tasks list --all` shows of a fold: every task, a status it does not know (or
    none) included, so nothing that folds is hidden."""
    return dict(tasks)


def check_damaged_log(cli, root: Path, damaged: bytes) -> None:
    path = root / ".aidp" / "tasklist.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(damaged)
    expected, expected_damage = reference(damaged)

    # reads: the fold of exactly the valid lines, one warning naming the count
    assert TaskLog(root).read().tasks == expected
    assert TaskLog(root).read().typed == reference_typed(damaged)
    tasks, warned = read_all(cli, root)
    assert tasks == listed(expected)
    assert warned == expected_damage
    assert path.read_bytes() == damaged, "a read changed the file"

    # writes keep working and touch nothing else
    added = cli("--dir", str(root), "tasks", "add", "--json", "written after the damage")
    assert added.code == 0, added
    new = orjson.loads(added.out)
    expected[new["id"]] = new
    if tasks:
        victim = min(tasks)
        done = cli("--dir", str(root), "tasks", "done", "--json", victim)
        assert done.code == 0, done
        expected[victim] = orjson.loads(done.out)
        assert expected[victim]["status"] == "done"
    todo = cli("--dir", str(root), "todo", "add", "--session", "fuzz", "added after the damage")
    assert todo.code == 0, todo
    shown = orjson.loads(cli("--dir", str(root), "todo", "show", "--session", "fuzz", "--json").out)
    assert shown["items"][-1]["content"] == "added after the damage"
    after = path.read_bytes()
    assert after.startswith(damaged), "a write rewrote earlier bytes"
    tasks, warned = read_all(cli, root)
    assert tasks == listed(expected)
    assert TaskLog(root).read().tasks == expected
    assert warned == expected_damage

    # repair: no damage left, the same tasks, the damaged file kept as a backup
    repaired = cli("--dir", str(root), "tasks", "repair", "--json")
    assert repaired.code == 0, repaired
    report = orjson.loads(repaired.out)
    assert report["damaged"] == expected_damage
    if report["rewritten"]:
        assert Path(report["backup"]).read_bytes() == after
    tasks, warned = read_all(cli, root)
    assert warned == 0
    assert tasks == listed(expected)
    assert reference(path.read_bytes()) == (expected, 0)
    again = cli("--dir", str(root), "tasks", "repair", "--json")
    assert orjson.loads(again.out)["rewritten"] is False


BASE = encode(base_records(40, seed=1))


@settings(max_examples=examples(100, 1000), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(damaged=damage(BASE))
def test_damaged_logs_read_write_and_repair(cli, damaged: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        check_damaged_log(cli, Path(folder), damaged)


BIG = encode(base_records(400, seed=2))  # past the size where reads use the snapshot cache


@settings(max_examples=examples(25, 250), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(damaged=damage(BIG))
def test_damaged_big_logs_read_write_and_repair(cli, damaged: bytes) -> None:
    """The same on a log big enough for the incremental snapshot (.aidp/cache/) to
    answer reads: the cache must see the damage, the appends and the repair exactly."""
    assert len(BIG) > 64 * 1024
    with tempfile.TemporaryDirectory() as folder:
        check_damaged_log(cli, Path(folder), damaged)


@settings(max_examples=examples(40, 400), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.binary(max_size=2_000))
def test_any_bytes_at_all(cli, data: bytes) -> None:
    """Not even a log: arbitrary bytes are read, written after and repaired."""
    with tempfile.TemporaryDirectory() as folder:
        check_damaged_log(cli, Path(folder), data)


@settings(max_examples=examples(40, 400), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, min_size=1, max_size=3) | st.dictionaries(
        st.sampled_from(["id", "status", "tags", "description", "priority", "updated_at",
                         "created_at", "type", "x"]), inner, min_size=1, max_size=6),
    max_leaves=12), max_size=8))
def test_well_formed_json_of_any_shape(cli, lines: list) -> None:
    """Valid JSON, wrong shapes: arrays, scalars, objects with fields of the wrong type."""
    good = BASE.splitlines(keepends=True)[:5]
    data = b"".join(good) + b"".join(orjson.dumps(v) + b"\n" for v in lines)
    with tempfile.TemporaryDirectory() as folder:
        check_damaged_log(cli, Path(folder), data)


# --- named cases the hidden failures of the past were made of -------------------------


NAMED = {
    "torn last line": BASE[:-17],
    "conflict in the middle": BASE[:400].rpartition(b"\n")[0] + b"\n<<<<<<< HEAD\n"
    + BASE[400:].partition(b"\n")[2] + b"=======\n>>>>>>> theirs\n",
    "nested 100k deep": b"[" * 100_000 + b"]" * 100_000 + b"\n" + BASE,
    "object nested 100k deep": BASE + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n",
    "nul bytes": BASE.replace(b"\n", b"\n\x00\x00\x00\n", 3),
    "nul filled tail (crash on ext4)": BASE + b"\x00" * 4096,
    "invalid utf-8": BASE.replace(b"task number 3", b"task number \xff\xfe"),
    "a 16 MB line": b'{"id":"task_1_0000beef","description":"' + b"y" * 16_000_000 + b"\n" + BASE,
    "crlf line ends": BASE.replace(b"\n", b"\r\n"),
    "no newline at all": BASE.replace(b"\n", b""),
    "only blank lines": b"\n  \n\t\n\r\n",
    "utf-8 byte order mark (a Windows editor)": b"\xef\xbb\xbf" + BASE,
}


def test_a_byte_order_mark_hides_no_record(cli, tmp_path: Path) -> None:
    """Saved by an editor that adds a BOM: the first record still counts and repair
    does not throw it away."""
    check_damaged_log(cli, tmp_path, b"\xef\xbb\xbf" + BASE)
    assert set(reference(BASE)[0]) <= set(TaskLog(tmp_path).read().tasks)


@pytest.mark.parametrize("name", list(NAMED))
def test_named_damage(cli, tmp_path: Path, name: str) -> None:
    check_damaged_log(cli, tmp_path, NAMED[name])


def test_the_fuzzer_can_fail(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not vacuous: a reader that drops one valid line is caught. The
    fold reads lines one at a time (add_line) and in bulk (read_lines): both lose it."""
    import aidp.tasklist.fold

    real_line, real_lines = aidp.tasklist.fold.Fold.add_line, aidp.tasklist.fold.read_lines
    winner = BASE.splitlines()[-1]  # the last line always holds its task's current state

    def lossy_line(self: aidp.tasklist.fold.Fold, raw: bytes) -> None:
        if raw == winner:
            self.lines += 1
            return
        real_line(self, raw)

    def lossy_lines(lines: list[bytes]) -> Iterator[tuple[str, str, Any]]:
        for raw, read in zip(lines, real_lines(lines), strict=True):
            yield (aidp.tasklist.fold.IGNORED, "", None) if raw == winner else read

    monkeypatch.setattr(aidp.tasklist.fold.Fold, "add_line", lossy_line)
    monkeypatch.setattr(aidp.tasklist.fold, "read_lines", lossy_lines)
    with pytest.raises(AssertionError):
        check_damaged_log(cli, tmp_path, BASE)
