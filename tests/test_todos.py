"""The TODO list core: positions, checklists, derived status, snapshots, run policies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aidp import todos
from aidp.agent import continuation
from aidp.core.errors import InvalidInput, InvalidPosition
from aidp.tasklist.log import TaskLog
from aidp.todos import TodoList
from aidp.views import render

# --- strategies -----------------------------------------------------------------------

words = st.text(alphabet="abcdef xyz", min_size=1, max_size=12).filter(lambda s: s.strip())
subtasks = st.lists(
    st.fixed_dictionaries({"content": words, "status": st.sampled_from(todos.SUBTASK_STATUSES)}),
    max_size=3,
)
items = st.lists(
    st.fixed_dictionaries({
        "content": words,
        "status": st.sampled_from(todos.ITEM_STATUSES),
        "priority": st.sampled_from(("high", "medium", "low")),
        "subtasks": subtasks,
    }),
    max_size=4,
)


def make(raw_items: list[dict], session: str = "s") -> TodoList:
    """A list as folded from a record: ids given, statuses derived."""
    numbered = []
    for n, item in enumerate(raw_items):
        subs = [dict(sub, id=f"s{n}.{m}") for m, sub in enumerate(item.get("subtasks", []))]
        numbered.append(dict(item, id=f"i{n}", subtasks=subs))
    return todos.from_record({
        "type": "todo_list", "session": session, "items": numbered,
        "active": bool(numbered), "paused": False,
    })


lists = items.map(make)

_index = st.one_of(st.integers(-2, 7).map(str), st.sampled_from(["last", "LAST", "Last", "", "01"]))
positions = st.one_of(
    _index,
    st.tuples(_index, _index).map(lambda p: f"{p[0]}.{p[1]}"),
    st.tuples(_index, _index, _index).map(".".join),
    st.text(max_size=6),
)


def valid_positions(todo: TodoList, *, insert: bool) -> set[str]:
    """The reference grammar, spelled out from the list's shape."""
    shown = todo.visible
    n = len(shown)
    found = {str(i) for i in range(1, n + (2 if insert else 1))}
    if insert or n:
        found.add("last")
    for i, item in enumerate(shown, start=1):
        m = len(item["subtasks"])
        found.update(f"{i}.{j}" for j in range(1, m + (2 if insert else 1)))
        if insert or m:
            found.add(f"{i}.last")
    return found


def shape(todo: TodoList) -> list[dict]:
    return [todos.item_out(i) for i in todo.visible]


# --- positions ------------------------------------------------------------------------


@settings(max_examples=300)
@given(lists, positions, st.booleans())
def test_a_position_is_accepted_exactly_when_it_can_be_applied(todo, text, insert):
    expected = text in valid_positions(todo, insert=insert)
    try:
        target = todos.locate(todo, text, insert=insert)
    except InvalidPosition as exc:
        assert not expected, f"{text!r} should be accepted"
        assert str(exc).endswith(f"use {todos.POSITION_FORMS}")
        return
    assert expected, f"{text!r} was accepted for {shape(todo)}"
    if insert:
        after, placed = todos.add(todo, text, "new thing")
        assert placed == target
        where = after.visible[target.item]
        if target.subtask is None:
            assert where["content"] == "new thing"
            assert len(after.visible) == len(todo.visible) + 1
        else:
            assert where["subtasks"][target.subtask]["content"] == "new thing"
    else:
        after, gone_target, _gone = todos.delete(todo, text)
        assert gone_target == target
        removed = sum(1 + len(i["subtasks"]) for i in todo.visible) - sum(
            1 + len(i["subtasks"]) for i in after.visible
        )
        assert removed == (1 + len(todo.visible[target.item]["subtasks"]) if target.subtask is None else 1)


@settings(max_examples=300)
@given(lists, positions, st.sampled_from(["high", None]))
def test_add_then_delete_restores_the_list(todo, text, priority):
    try:
        target = todos.locate(todo, text, insert=True)
    except InvalidPosition:
        return
    if target.subtask is not None:
        priority = None  # subtasks take no priority
    added, placed = todos.add(todo, text, "temporary", priority=priority)
    restored, _, gone = todos.delete(added, placed.label())
    assert gone["content"] == "temporary"
    assert shape(restored) == shape(todo)
    assert restored.active == todo.active
    assert todos.same(restored, todo)


@pytest.mark.parametrize(
    "text", ["0", "-1", "1.2.3", "abc", "1.", "last.1", "LAST", ".1", "1.0", "", " 1", "1 ", "+1", "01", "１", "last.last"]
)
def test_malformed_positions_name_the_accepted_forms(text):
    with pytest.raises(InvalidPosition) as caught:
        todos.parse_position(text)
    assert str(caught.value) == f"Invalid position {text!r}: use {todos.POSITION_FORMS}"


def test_out_of_range_positions_say_why_and_list_the_accepted_forms():
    todo = make([{"content": "a", "status": "pending", "priority": "low",
                  "subtasks": [{"content": "a1", "status": "pending"}]}])
    cases = {
        ("3", False): "the list has 1 item, so N goes from 1 to 1",
        ("3", True): "the list has 1 item, so N goes from 1 to 2 (2 appends)",
        ("2.1", True): "there is no item 2 (the list has 1 item)",
        ("1.2", False): "item 1 has 1 subtask, so M goes from 1 to 1",
        ("1.3", True): "item 1 has 1 subtask, so M goes from 1 to 2 (1.2 appends)",
    }
    for (text, insert), why in cases.items():
        with pytest.raises(InvalidPosition) as caught:
            todos.locate(todo, text, insert=insert)
        assert str(caught.value) == f"Invalid position {text!r}: {why}; use {todos.POSITION_FORMS}"
    with pytest.raises(InvalidPosition, match="'last': there are no active TODOs; use N, last"):
        todos.locate(TodoList("s"), "last")


# --- derived status -------------------------------------------------------------------


@given(st.lists(st.sampled_from(todos.SUBTASK_STATUSES), min_size=1, max_size=8),
       st.sampled_from(todos.ITEM_STATUSES))
def test_an_item_with_a_checklist_has_a_derived_status(statuses, own):
    item = {"content": "x", "status": own,
            "subtasks": [{"content": str(i), "status": s} for i, s in enumerate(statuses)]}
    done = statuses.count("completed")
    expected = "pending" if done == 0 else "completed" if done == len(statuses) else "in_progress"
    assert todos.derived_status(item) == expected
    assert todos.progress(item) == (done, len(statuses))


operations = st.lists(
    st.tuples(st.sampled_from(["add", "delete", "tick", "start"]), positions), max_size=12
)


@settings(max_examples=200)
@given(lists, operations)
def test_statuses_stay_derived_through_any_sequence_of_changes(todo, ops):
    apply = {
        "add": lambda t, p: todos.add(t, p, "x")[0],
        "delete": lambda t, p: todos.delete(t, p)[0],
        "tick": lambda t, p: todos.tick(t, p)[0],
        "start": lambda t, p: todos.start(t, p)[0],
    }
    for op, text in ops:
        try:
            todo = apply[op](todo, text)
        except InvalidInput:
            continue
        for item in todo.visible:
            assert item["status"] in todos.ITEM_STATUSES
            if item["subtasks"]:
                assert item["status"] == todos.derived_status(item)
        assert todo.active == bool(todo.visible) or not todo.items
    # What is stored is what folds back.
    record = todos.to_record(todo, "2026-11-22T00:00:00.000000Z")
    assert todos.same(todos.from_record(record), todo)


def test_an_item_with_a_checklist_cannot_be_ticked_or_started_by_hand():
    todo = make([{"content": "a", "status": "pending", "priority": "low",
                  "subtasks": [{"content": "a1", "status": "pending"},
                               {"content": "a2", "status": "completed"}]}])
    for verb, fn in (("tick", todos.tick), ("start", todos.start)):
        with pytest.raises(InvalidInput) as caught:
            fn(todo, "1")
        assert str(caught.value) == (
            f"Cannot {verb} item 1: it has a checklist (1.1, 1.2) and its status follows it; "
            "tick its subtasks instead, e.g. 'aidp todo tick 1.1'"
        )
    with pytest.raises(InvalidInput, match=r"Cannot start subtask 1\.2"):
        todos.start(todo, "1.2")
    after, _ = todos.tick(todo, "1.1")
    assert after.visible[0]["status"] == "completed"
    again, _ = todos.tick(after, "1.last")  # ticked already: unchanged (issue 35)
    assert again is after
    after, _ = todos.untick(after, "1.last")
    assert after.visible[0]["status"] == "in_progress"
    with pytest.raises(InvalidInput, match=r"Cannot untick item 1: .* e\.g\. 'aidp todo untick 1\.1'"):
        todos.untick(todo, "1")


def test_deleting_the_last_subtask_gives_the_item_back_its_own_status():
    todo, _ = todos.add(TodoList("s"), "last", "item")
    todo, _ = todos.start(todo, "1")
    todo, _ = todos.add(todo, "1.last", "check")
    assert todo.visible[0]["status"] == "pending"
    todo, _, _ = todos.delete(todo, "1.1")
    assert todo.visible[0]["status"] == "in_progress"
    assert todos.OWN_STATUS not in todo.visible[0]
    assert todos.OWN_STATUS not in str(todos.show_json(todo))


def test_subtasks_take_no_priority():
    todo, _ = todos.add(TodoList("s"), "last", "item")
    with pytest.raises(InvalidInput, match="subtasks are a checklist without priorities"):
        todos.add(todo, "1.1", "check", priority="high")


# --- clear, load, pause, plans --------------------------------------------------------


def test_clear_keeps_the_items_and_the_next_add_starts_afresh():
    todo, _ = todos.add(TodoList("s"), "last", "old")
    cleared = todos.clear(todo)
    assert cleared is not None and not cleared.active
    assert [i["content"] for i in cleared.items] == ["old"]
    assert render.todo_text(cleared) == "No active TODOs"
    assert todos.clear(cleared) is None
    fresh, target = todos.add(cleared, "last", "new")
    assert target == todos.Target(0)
    assert [i["content"] for i in fresh.items] == ["new"]


def test_load_copies_a_list_and_activates_it():
    source, _ = todos.add(TodoList("a"), "last", "one")
    source, _ = todos.add(source, "1.last", "one.one")
    loaded = todos.load(TodoList("b"), todos.clear(source))
    assert loaded.session == "b" and loaded.active
    assert shape(loaded) == shape(source)
    loaded.items[0]["subtasks"][0]["content"] = "changed"
    assert source.items[0]["subtasks"][0]["content"] == "one.one"


def test_user_prompt_rule():
    empty = TodoList("s", paused=True, pause_reason="why")
    assert continuation.on_user_prompt(empty) == TodoList("s")
    todo, _ = todos.add(TodoList("s"), "last", "a")
    todo, _ = todos.add(todo, "last", "b")
    todo = todos.pause(todo, "blocked on review")
    kept = continuation.on_user_prompt(todo)
    assert kept.active and not kept.paused and kept.pause_reason is None
    assert shape(kept) == shape(todo)
    done, _ = todos.tick(todo, "1")
    done, _ = todos.tick(done, "2")
    cleared = continuation.on_user_prompt(done)
    assert not cleared.active and not cleared.paused
    assert [i["content"] for i in cleared.items] == ["a", "b"]


def test_continuation_names_the_first_in_progress_else_the_first_pending_item():
    todo, _ = todos.add(TodoList("s"), "last", "a")
    todo, _ = todos.add(todo, "last", "b")
    todo, _ = todos.add(todo, "last", "c")
    todo, _ = todos.tick(todo, "1")
    assert continuation.continuation_item(todo)["content"] == "b"
    todo, _ = todos.start(todo, "3")
    assert continuation.continuation_item(todo)["content"] == "c"
    todo, _ = todos.add(todo, "2.last", "b1")
    todo, _ = todos.tick(todo, "2.1")  # b is now derived complete: 1/1
    todo, _ = todos.add(todo, "2.last", "b2")  # 1/2: derived in_progress, before c
    assert continuation.continuation_item(todo)["content"] == "b"
    assert continuation.continuation_item(todos.clear(todo)) is None
    assert continuation.continuation_item(TodoList("s")) is None


@given(st.booleans(), st.integers(0, 5), st.integers(0, 5), st.booleans(), st.booleans(), st.booleans())
def test_continuation_decision(progressed, attempts, maximum, paused, active, all_done):
    todo, _ = todos.add(TodoList("s"), "last", "a")
    if all_done:
        todo, _ = todos.tick(todo, "1")
    if paused:
        todo = todos.pause(todo, "blocked")
    if not active:
        todo = todos.clear(todo)
    expected = (not progressed and attempts < maximum and not paused and active and not all_done)
    assert continuation.should_continue(todo, progressed=progressed, attempts=attempts,
                                 max_attempts=maximum) is expected


def test_pause_validates_the_reason():
    with pytest.raises(InvalidInput, match="Invalid reason: it is empty"):
        todos.pause(TodoList("s"), "  ")
    assert todos.pause(TodoList("s"), " wait ").pause_reason == "wait"


def test_set_plan_takes_claude_and_codex_shapes():
    todo, _ = todos.add(TodoList("s"), "last", "Write tests", priority="high")
    old_id = todo.items[0]["id"]
    claude = todos.set_plan(todo, [
        {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
        {"content": "Ship", "status": "pending"},
    ])
    assert claude.active
    assert [(i["content"], i["status"], i["priority"]) for i in claude.items] == [
        ("Write tests", "in_progress", "high"), ("Ship", "pending", "medium")]
    assert claude.items[0]["id"] == old_id
    codex = todos.set_plan(TodoList("s"), [{"step": "Plan", "status": "completed"},
                                           {"step": "Do", "status": "in-progress"}])
    assert [(i["content"], i["status"]) for i in codex.items] == [("Plan", "completed"),
                                                                  ("Do", "in_progress")]
    assert not todos.set_plan(claude, []).active
    with pytest.raises(InvalidInput, match="Invalid plan entry 1 status 'blocked'"):
        todos.set_plan(todo, [{"content": "x", "status": "blocked"}])
    with pytest.raises(InvalidInput, match="Invalid plan entry 2: it has no content"):
        todos.set_plan(todo, [{"content": "x", "status": "pending"}, {"status": "pending"}])


# --- rendering ------------------------------------------------------------------------


def test_render_show_is_the_agents_view():
    todo, _ = todos.add(TodoList("main"), "last", "Build parser", priority="high")
    todo, _ = todos.add(todo, "last", "Docs", priority="low")
    todo, _ = todos.add(todo, "1.last", "Lexer")
    todo, _ = todos.add(todo, "1.last", "Grammar")
    todo, _ = todos.tick(todo, "1.1")
    todo = todos.pause(todo, "needs a decision")
    assert render.todo_text(todo) == (
        "TODO list (session: main) — 0/2 completed\n"
        "1. [IN_PROGRESS] (HIGH) Build parser (1/2)\n"
        "   1.1 [COMPLETED] Lexer\n"
        "   1.2 [PENDING] Grammar\n"
        "2. [PENDING] (LOW) Docs\n"
        "Paused: needs a decision"
    )


def test_session_names_and_contents_are_shown_inert():
    todo = todos.from_record({"type": "todo_list", "session": "x\x1b[2J", "active": True,
                              "items": [{"id": "1", "content": "evil\x1b]0;t\x07", "status": "pending"}]})
    text = render.todo_text(todo)
    assert "\x1b" not in text and "\x07" not in text
    assert "x\\x1b[2J" in text and "evil\\x1b]0;t\\x07" in text


# --- the log --------------------------------------------------------------------------


def test_change_appends_small_records_and_an_unchanged_list_writes_nothing(log: TaskLog):
    after = todos.change(log, "s", lambda t: todos.add(t, "last", "a")[0])
    data = log.path.read_bytes()
    assert data.count(b"\n") == 2  # the new list's head, and its item
    assert todos.current(log.read(), "s").items == after.items
    assert todos.change(log, "s", lambda t: None).items == after.items
    assert todos.change(log, "s", lambda t: t).items == after.items
    assert log.path.read_bytes() == data
    with pytest.raises(InvalidPosition):
        todos.change(log, "s", lambda t: todos.delete(t, "2")[0])
    assert log.path.read_bytes() == data


def test_every_change_wins_the_fold_even_when_the_clock_lags(log: TaskLog):
    future = "2999-01-01T00:00:00.000000Z"
    record = todos.to_record(todos.add(TodoList("s"), "last", "a")[0], future)
    log.append([record])
    after = todos.change(log, "s", lambda t: todos.add(t, "last", "b")[0])
    assert after.updated_at == "2999-01-01T00:00:00.000001Z"
    assert [i["content"] for i in todos.current(log.read(), "s").items] == ["a", "b"]


def test_a_hand_edited_record_folds_to_something_usable(log: TaskLog):
    log.path.parent.mkdir(parents=True, exist_ok=True)
    log.path.write_bytes(
        b'{"type":"todo_list","id":"todo_list:s","session":"s","active":true,'
        b'"items":[{"content":"ok","status":"weird","priority":"urgent","extra":1},7,'
        b'{"no":"content"},{"content":"c","subtasks":[{"content":"s1","status":"?"},"x"]}],'
        b'"updated_at":"2026-01-01T00:00:00Z"}\n'
    )
    todo = todos.current(log.read(), "s")
    assert [(i["content"], i["status"], i["priority"]) for i in todo.items] == [
        ("ok", "pending", "medium"), ("c", "pending", "medium")]
    assert todo.items[0]["extra"] == 1
    assert todo.items[1]["subtasks"][0]["status"] == "pending"


scalars = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(
    ["", "x", "pending", "completed", "in_progress", "high", "2026-01-01T00:00:00Z"])
record_keys = st.sampled_from(["session", "items", "active", "paused", "pause_reason", "updated_at",
                               "content", "status", "priority", "subtasks", "id", "own_status"])
loose_subtask = st.dictionaries(record_keys, scalars, max_size=4)
loose_item = st.dictionaries(record_keys, scalars | st.lists(loose_subtask | scalars, max_size=2),
                             max_size=6)


@settings(max_examples=100)
@given(st.dictionaries(record_keys, scalars | st.lists(loose_item | scalars, max_size=3), max_size=6))
def test_any_todo_record_folds_renders_and_takes_changes(raw):
    record = {**raw, "type": "todo_list", "id": "todo_list:s"}
    todo = todos.from_record(record)
    render.todo_text(todo)
    todos.show_json(todo)
    continuation.on_user_prompt(todo)
    continuation.continuation_item(todo)
    for item in todo.items:
        assert isinstance(item["content"], str)
        assert item["status"] in todos.ITEM_STATUSES
    added, _ = todos.add(todo, "last", "new")
    assert added.visible[-1]["content"] == "new"
    again = todos.from_record(todos.to_record(added, "2026-11-22T00:00:00.000000Z"))
    assert todos.same(again, added)
