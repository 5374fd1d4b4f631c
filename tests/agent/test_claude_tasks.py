"""Claude's Tasks API (TaskCreate/TaskUpdate) as plan entries: the one shared mapping."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aidp.agent.agents.claude_tasks import ClaudeTasks


def test_create_then_update_by_id_from_the_answer() -> None:
    tasks = ClaudeTasks()
    assert tasks.create({"subject": "Write tests", "description": "d"},
                        {"task": {"id": "7", "subject": "Write tests"}}) == "7"
    assert tasks.create({"subject": "Docs", "description": ""}, {"task": {"id": "8"}}) == "8"
    assert tasks.update({"taskId": "7", "status": "in_progress"},
                        {"success": True, "taskId": "7"}) is True
    assert tasks.entries() == [{"content": "Write tests", "status": "in_progress"},
                               {"content": "Docs", "status": "pending"}]


def test_without_an_answer_ids_are_numbered_like_claude_does() -> None:
    tasks = ClaudeTasks()
    assert [tasks.create({"subject": s}) for s in ("a", "b")] == ["1", "2"]
    assert tasks.update({"taskId": "2", "status": "deleted"})
    assert tasks.create({"subject": "c"}) == "3"  # a deleted id is not reused
    assert tasks.entries() == [{"content": "a", "status": "pending"},
                               {"content": "c", "status": "pending"}]


def test_entries_follow_creation_order_whatever_order_hooks_ran_in() -> None:
    tasks = ClaudeTasks()
    for task_id in ("10", "2", "1"):
        tasks.create({"subject": f"task {task_id}"}, {"task": {"id": task_id}})
    assert [e["content"] for e in tasks.entries()] == ["task 1", "task 2", "task 10"]


def test_updates_that_change_nothing_or_failed_or_are_unknown() -> None:
    tasks = ClaudeTasks()
    tasks.create({"subject": "a"}, {"task": {"id": "1"}})
    assert tasks.update({"taskId": "1", "status": "pending"}) is False
    assert tasks.update({"taskId": "9", "status": "completed"}) is False
    assert tasks.update({"taskId": "1", "status": "completed"}, {"success": False}) is False
    assert tasks.update({"taskId": "1", "status": "bogus"}) is False
    assert tasks.update("not a dict") is False
    assert tasks.update({"taskId": "1", "subject": "  renamed   task "}) is True
    assert tasks.entries() == [{"content": "renamed task", "status": "pending"}]


def test_create_without_text_is_ignored() -> None:
    tasks = ClaudeTasks()
    assert tasks.create({"subject": "  ", "description": ""}) is None
    assert tasks.create(None) is None
    assert tasks.create({"description": "only a description"}) == "1"
    assert tasks.entries() == [{"content": "only a description", "status": "pending"}]


def test_apply_dispatches_by_tool_name() -> None:
    tasks = ClaudeTasks()
    assert tasks.apply("TaskCreate", {"subject": "x"}, {"task": {"id": "1"}})
    assert tasks.apply("TaskUpdate", {"taskId": "1", "status": "completed"})
    assert not tasks.apply("TaskList", {})
    assert tasks.entries() == [{"content": "x", "status": "completed"}]


def test_created_corrects_an_assumed_id() -> None:
    tasks = ClaudeTasks()
    assumed = tasks.create({"subject": "x"})
    tasks.created(assumed, "5")
    assert tasks.update({"taskId": "5", "status": "completed"})
    assert tasks.create({"subject": "y"}) == "6"


def test_json_round_trip_and_damage_is_dropped() -> None:
    tasks = ClaudeTasks()
    tasks.create({"subject": "a"}, {"task": {"id": "3"}})
    tasks.update({"taskId": "3", "status": "in_progress"})
    again = ClaudeTasks.from_json(tasks.to_json())
    assert again.entries() == tasks.entries() and again.highest == 3
    damaged = ClaudeTasks.from_json({"tasks": {"1": "x", "2": {"content": "b", "status": "?"},
                                               "3": {"content": "ok", "status": "pending"}},
                                     "highest": "no"})
    assert damaged.entries() == [{"content": "ok", "status": "pending"}]
    assert ClaudeTasks.from_json(None).entries() == []
    assert ClaudeTasks.from_json([1, 2]).entries() == []


calls = st.lists(
    st.one_of(
        st.tuples(st.just("TaskCreate"), st.text(max_size=8), st.none()),
        st.tuples(st.just("TaskUpdate"), st.integers(0, 6).map(str),
                  st.sampled_from(["pending", "in_progress", "completed", "deleted", "x"])),
    ),
    max_size=20,
)


@settings(max_examples=60)
@given(calls)
def test_any_sequence_gives_valid_entries_that_survive_a_round_trip(seq) -> None:
    tasks = ClaudeTasks()
    for tool, value, status in seq:
        if tool == "TaskCreate":
            tasks.create({"subject": value})
        else:
            tasks.update({"taskId": value, "status": status})
        again = ClaudeTasks.from_json(tasks.to_json())
        assert again.entries() == tasks.entries()
    for entry in tasks.entries():
        assert entry["content"].strip() == entry["content"] and entry["content"]
        assert entry["status"] in ("pending", "in_progress", "completed")
