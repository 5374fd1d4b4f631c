"""The fold rule's bulk helpers (aidp.fold): each gives what the one-line rule gives.

The plain fold and the store's build both read lines through `read_lines` and the store
orders winners by `packed` keys, so tests/test_index.py's equality of the two cannot
catch a fault shared by both: these hold them to `read_line` and `beats` directly."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from aidp.fold import beats, key_of, packed, read_line, read_lines, unpacked
from aidp.model import UNKNOWN_TS, format_ts
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
    from aidp.model import ts_of

    for value in ("2025-01-01T00:00:00.5Z", "2025-01-01T01:00:00+01:00", "2025-01-01",
                  "garbage", 5, None, ["x"]):
        record = orjson.loads(orjson.dumps({"updated_at": value}))
        assert key_of(record, 7) == (ts_of(record), 7)
