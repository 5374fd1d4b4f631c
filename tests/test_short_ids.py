"""tasks.short_ids: the shortest hex prefix (≥ 4) that resolve_id reads as that task and
no other — the same answer whichever way the fold can look ids up."""

from __future__ import annotations

import json
import re
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from aidp.backlog import tasks
from aidp.core.errors import AidpError
from aidp.tasklist.fold import Fold
from aidp.tasklist.questions import common_length, shared_in_sorted


class OneSearchEach(Fold):
    """A fold that answers each id with searches of its own, as the store's index does:
    the hex parts just below and just above it (the plain fold answers them all in one
    pass over its ids)."""

    def shared_prefixes(self, hexes, at_least: int) -> dict[str, int]:
        found = {}
        for tid, mine in hexes.items():
            near = sorted((t.rpartition("_")[2], t) for t in
                          self.ids_with_prefix(mine[:at_least], last_part=True) if t != tid)
            below = [h for h, _t in near if h < mine][-1:]
            above = [h for h, _t in near if h >= mine][:1]
            found[tid] = max((common_length(mine, h.lower()) for h in below + above),
                             default=0)
        return found


def every_way(found: dict, shown_for: list[str]) -> list[dict[str, str]]:
    """short_ids as the plain fold answers, as an index answers (its neighbours), and
    from every id in sorted order (what the store does for many ids)."""
    answers = [tasks.short_ids(Fold(tasks=dict(found)), shown_for),
               tasks.short_ids(OneSearchEach(tasks=dict(found)), shown_for)]
    with patch.object(OneSearchEach, "shared_prefixes", lambda self, hexes, at_least:
                      shared_in_sorted(sorted((t.rpartition("_")[2], t) for t in self.tasks),
                                       hexes, at_least)):
        answers.append(tasks.short_ids(OneSearchEach(tasks=dict(found)), shown_for))
    return answers


def by_definition(found: dict, tid: str) -> str:
    hex_part = tid.rpartition("_")[2]
    for length in range(tasks.MIN_ID_PREFIX, len(hex_part) + 1):
        try:
            if tasks.resolve_id(Fold(tasks=dict(found)), hex_part[:length]) == tid:
                return hex_part[:length]
        except AidpError:
            continue
    return tid


# A two-letter alphabet makes long shared prefixes (and equal hex parts) common.
hex_parts = st.text(alphabet="ab", min_size=4, max_size=9)
ids = st.lists(st.builds(lambda stamp, h: f"task_{stamp}_{h}", st.integers(1, 3), hex_parts),
               min_size=1, max_size=40, unique=True)


@settings(max_examples=150, deadline=None)
@given(ids, st.data())
def test_every_lookup_gives_the_shortest_unique_prefix(all_ids, data) -> None:
    shown_for = data.draw(st.lists(st.sampled_from(all_ids), min_size=1, max_size=70))
    plain = {tid: {"id": tid} for tid in all_ids}
    expected = {tid: by_definition(plain, tid) for tid in shown_for}
    assert every_way(plain, shown_for) == [expected] * 3


@settings(max_examples=100, deadline=None)
@given(ids, hex_parts)
def test_a_new_id_gets_the_prefix_it_will_need_once_written(all_ids, new_hex) -> None:
    new = f"task_9_{new_hex}"
    before = {tid: {"id": tid} for tid in all_ids if tid != new}
    after = {**before, new: {"id": new}}
    expected = by_definition(after, new)
    assert every_way(before, [new]) == [{new: expected}] * 3


def test_another_writers_id_that_looks_like_a_prefix_is_never_shown_for_a_task() -> None:
    # resolve_id reads "abcd" as the foreign task: ours needs one more character.
    found = {"task_1_abcd1234": {}, "abcd": {}, "task_2_ffff0000": {}}
    expected = {"task_1_abcd1234": "abcd1", "abcd": "abcd", "task_2_ffff0000": "ffff"}
    assert every_way(found, list(found)) == [expected] * 3
    assert all(tasks.resolve_id(Fold(tasks=found), s) == t for t, s in expected.items())


# --- every human view shows them; --json keeps full ids ---------------------------------

A, B, C = "task_1795000000_abcd1111", "task_1795000001_abcd2222", "task_1795000002_beef0000"


def _forge(cli, project) -> None:
    """Three tasks whose ids we choose: two share their first four hex characters."""
    made = [json.loads(cli("tasks", "add", name, "--json").out)["id"]
            for name in ("Alpha", "Bravo", "Charlie")]
    path = project / ".aidp" / "tasklist.jsonl"
    text = path.read_text()
    for old, new in zip(made, (A, B, C), strict=True):
        text = text.replace(old, new)
    path.write_text(text)


def _only_short(out: str) -> None:
    assert "task_1795" not in out, out
    assert "abcd1" in out or "abcd2" in out or "beef" in out, out


def test_every_human_view_names_tasks_by_their_shortest_prefix(cli, project,
                                                               monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "tester")
    _forge(cli, project)
    for args in (("tasks", "list"), ("tasks", "list", "--tree"), ("tasks", "ready"),
                 ("tasks", "block", "abcd1", "--on", "beef"), ("tasks", "blocked"),
                 ("tasks", "unblock", "abcd1", "--on", "beef"),
                 ("tasks", "edit", "abcd2", "-p", "high"), ("tasks", "note", "abcd2", "Hi"),
                 ("tasks", "claim", "abcd2"), ("tasks", "release", "abcd2"),
                 ("tasks", "start", "abcd1"), ("tasks", "done", "abcd1", "beef"),
                 ("tasks", "reopen", "beef"), ("tasks", "abandon", "abcd2", "Dup")):
        result = cli(*args)
        assert result.code == 0, (args, result)
        _only_short(result.out)
    assert "[abcd1] Alpha" in cli("tasks", "list", "-a").out
    cli("tasks", "block", "beef", "--on", "abcd1")
    show = cli("tasks", "show", "beef").out
    assert re.search(rf"  id +{C} \(short: beef\)\n", show), show  # the one full id: every field is shown
    assert "Blocked by\n  [abcd1] Alpha (done)" in show


def test_json_and_ids_keep_full_ids(cli, project, monkeypatch) -> None:
    monkeypatch.setenv("AIDP_ACTOR", "tester")
    _forge(cli, project)
    assert {t["id"] for t in json.loads(cli("tasks", "list", "--json").out)} == {A, B, C}
    assert set(cli("tasks", "list", "-f", "ids").out.split()) == {A, B, C}
    assert json.loads(cli("tasks", "done", "abcd1", "--json").out)["id"] == A
    assert json.loads(cli("tasks", "claim", "abcd2", "--json").out)["id"] == B
    assert {t["id"] for t in json.loads(cli("tasks", "ready", "--json").out)} == {C}


def test_a_short_id_reads_its_neighbours_not_every_id_sharing_its_prefix(log, monkeypatch
                                                                          ) -> None:
    # 3,000 ids sharing their first 10 hex characters (an import's, or a clock's): the
    # store finds the ids just below and above one in its index, where it read all
    # 3,000 (60 of `done`'s 70 ms at 25k). Counted in SQLite's steps, not in time.
    from aidp import store
    from aidp.core.model import new_task
    from aidp.store import loader

    monkeypatch.setattr(loader, "MIN_BYTES", 0)
    base = new_task("A task")
    made = [f"task_1795000000_abcdef0123{n:06x}" for n in range(3000)]
    log.append([{**base, "id": tid} for tid in made])
    fold = store.load(log)
    assert isinstance(fold, store.StoreFold)
    steps = []
    fold.db.set_progress_handler(lambda: steps.append(1), 100)
    assert tasks.short_ids(fold, [made[1234], "task_9_abcdef01230004d2ff"]) == {
        made[1234]: "abcdef01230004d2", "task_9_abcdef01230004d2ff": "abcdef01230004d2f"}
    fold.db.set_progress_handler(None, 0)
    assert len(steps) < 30, len(steps)  # ~3 with the neighbours; 3,000 ids read: ~600
    plain = {tid: {"id": tid} for tid in made}
    assert by_definition(plain, made[1234]) == "abcdef01230004d2"
