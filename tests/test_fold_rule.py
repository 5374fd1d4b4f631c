"""The fold rule's bulk helpers (aidp.tasklist.fold): each gives what the one-line rule gives.

The plain fold and the store's build both read lines through `read_lines` and the store
orders winners by `packed` keys, so tests/test_index.py's equality of the two cannot
catch a fault shared by both: these hold them to `read_line` and `beats` directly."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aidp.core.model import UNKNOWN_TS, format_ts
from aidp.tasklist.fold import DAMAGED, Fold, beats, key_of, packed, read_line, read_lines, unpacked
from tests.test_index import lines

odd_lines = st.sampled_from([
    b"\xef\xbb\xbf", b"\xef\xbb\xbf   ", b"\xef\xbb\xbf{\"id\": \"task_1_aa\"}", b" {} ",
    b"{\"type\": \"todo_list\", \"id\": 3}", b"{\"id\": \"\"}", b"\t", b"null", b"\xff\xfe",
    b"{\"id\": \"task_1_ac\", \"updated_at\": \"9999-12-31T23:59:59.999999Z\"}",
])


@given(st.lists(st.one_of(lines, odd_lines), max_size=30))
def test_read_lines_answers_as_read_line_does(batch: list[bytes]) -> None:
    parts = b"\n".join(batch).split(b"\n")  # a fielded line is two lines
    assert list(read_lines(parts)) == [read_line(raw) for raw in parts]


stamps = st.one_of(st.none(), st.just("not a time"),
                   st.integers(-(1 << 61), 1 << 61).map(format_ts),
                   st.sampled_from(["0001-01-01T00:00:00Z", "2025-01-01T00:00:00+14:00"]))


@given(st.tuples(stamps, st.integers(1, 1 << 39)), st.tuples(stamps, st.integers(1, 1 << 39)),
       st.integers(0, 1 << 39))
def test_packed_keys_order_as_the_fold_keys(a: tuple, b: tuple, seq: int) -> None:
    ka, kb = (key_of({"updated_at": s}, line) for s, line in (a, b))
    if ka[1] == kb[1]:
        return  # two records never share a line
    assert beats(ka, kb) == (packed(ka) > packed(kb, seq))
    assert unpacked(packed(ka, seq)) == (ka, seq)
    assert packed((UNKNOWN_TS, 1)) < packed(ka) or ka == (UNKNOWN_TS, 1)


def test_key_of_reads_updated_at_as_ts_of_does() -> None:
    from aidp.core.model import ts_of

    for value in ("2025-01-01T00:00:00.5Z", "2025-01-01T01:00:00+01:00", "2025-01-01",
                  "garbage", 5, None, ["x"]):
        record = orjson.loads(orjson.dumps({"updated_at": value}))
        assert key_of(record, 7) == (ts_of(record), 7)


def _fold_line_by_line(datas: list[bytes], own_at: int) -> Fold:
    """worktrees.fold's rule written out line by line: the whole lines every tasklist
    starts with, once (repeats too), then each tasklist's other lines in order, without
    a line an earlier tasklist's other lines brought (repeats within one file too)."""
    from aidp.tasklist.fields import resolve

    def split(data: bytes) -> list[bytes]:
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        return lines

    splits = [split(data) for data in datas]
    # A tasklist with no whole line (none, or one line without its newline) takes no part
    # in the lines every tasklist starts with: its line comes after.
    whole = [n for n, data in enumerate(datas) if b"\n" in data]
    present = whole or [own_at]
    first = splits[present[0]]
    common = 0
    while all(len(splits[n]) > common and splits[n][common] == first[common]
              and (common + 1 < len(splits[n]) or datas[n].endswith(b"\n"))
              for n in present):
        common += 1
    state, fed, damaged, seen = Fold(), [], 0, set()
    for raw in first[:common]:
        before = state.damaged
        state.add_line(raw)
        fed.append(raw)
        damaged += state.damaged != before and bool(datas[own_at])
    for n, some in enumerate(splits):
        tail = some[common:] if n in whole else some
        for raw in tail:
            if raw in seen:
                damaged += n == own_at and read_line(raw)[0] == DAMAGED
                continue
            before = state.damaged
            state.add_line(raw)
            fed.append(raw)
            damaged += n == own_at and state.damaged != before
        seen.update(tail)
    state.damaged = damaged
    state.ends_with_newline = not datas[own_at] or datas[own_at].endswith(b"\n")
    if state.conflicted:
        resolve(state, b"\n".join(fed))
    return state


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shared=st.lists(lines, max_size=12), extras=st.lists(
           st.tuples(st.integers(0, 12), st.lists(lines, max_size=4)), min_size=1, max_size=4),
       own_at=st.integers(0, 3), torn=st.booleans())
def test_worktrees_fold_equals_a_line_by_line_fold(shared, extras, own_at, torn,
                                                   tmp_path: Path) -> None:
    from aidp.tasklist import worktrees

    datas = [b"".join(p + b"\n" for p in shared[:cut] + more) for cut, more in extras]
    own_at %= len(datas)
    if torn and datas[own_at]:
        datas[own_at] = datas[own_at][:-1]
    tasklists = []
    for n, data in enumerate(datas):
        path = tmp_path / f"{os.urandom(4).hex()}.jsonl"
        path.write_bytes(data)
        tasklists.append((path, n == own_at))
    assert worktrees.fold(tasklists, datas[own_at], whole_lines=False) == \
        _fold_line_by_line(datas, own_at)


def test_shared_prefix_is_whole_common_lines() -> None:
    from aidp.tasklist.worktrees import shared_prefix

    big = b"".join(b"%07d\n" % n for n in range(400_000))  # 3.2 MB: past a megabyte step
    assert shared_prefix(big, big) == len(big)
    assert shared_prefix(big, big[:-1]) == len(big) - 8
    changed = bytearray(big)
    changed[2_500_003] ^= 1
    assert shared_prefix(big, bytes(changed)) == 2_500_003 // 8 * 8
    assert shared_prefix(b"a\nb", b"a\nb\n") == 2
    assert shared_prefix(b"", b"a\n") == 0
