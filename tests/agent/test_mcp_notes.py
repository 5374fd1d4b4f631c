"""`aidp run`'s note for a call of aidp's own tools (`aidp mcp`), read from each CLI's
JSON events under the name that CLI gives the tool: what the call plans, files or
changes, as the note of TodoWrite says "2 items"."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from aidp.agent import agents
from aidp.agent.events import Plan, Tool, aidp_tool

PLAN = {"items": [{"content": "Read the code", "status": "completed"},
                  {"content": "Fix it", "status": "in_progress", "activeForm": "Fixing"}]}


def notes(*events: dict[str, Any]) -> list[Any]:
    reader = agents.output_reader()
    items = []
    for event in events:
        items.extend(reader.feed(orjson.dumps(event).decode()))
    items.extend(reader.finish())
    return items


def claude(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}]}}


def codex(tool: str, arguments: object) -> dict[str, Any]:
    return {"type": "item.started", "item": {
        "id": "item_3", "type": "mcp_tool_call", "server": "aidp", "tool": tool,
        "arguments": arguments, "status": "in_progress"}}


def gemini(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "timestamp": "t", "tool_name": name, "tool_id": "g1",
            "parameters": arguments}


def opencode(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "timestamp": 1795455277714, "sessionID": "ses_1", "part": {
        "type": "tool", "tool": name, "callID": "c1",
        "state": {"status": "completed", "input": arguments, "output": "{}"}}}


def copilot(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool.execution_start", "id": "x", "timestamp": "t", "parentId": "p",
            "data": {"toolName": name, "arguments": arguments}}


@pytest.mark.parametrize(("event", "note"), [
    (claude("mcp__aidp__todo_write", PLAN), "mcp__aidp__todo_write: 2 items"),
    (codex("todo_write", PLAN), "aidp.todo_write: 2 items"),
    (codex("todo_write", orjson.dumps(PLAN).decode()), "aidp.todo_write: 2 items"),
    (gemini("mcp_aidp_todo_write", PLAN), "mcp_aidp_todo_write: 2 items"),
    (opencode("aidp_todo_write", PLAN), "aidp_todo_write: 2 items"),
    (copilot("aidp-todo_write", PLAN), "aidp-todo_write: 2 items"),
])
def test_a_todo_write_through_aidp_mcp_says_how_many_items_in_every_cli(
        event: dict[str, Any], note: str) -> None:
    items = notes(event)
    assert [i.note for i in items if isinstance(i, Tool)] == [note]
    # The server keeps that plan itself: the note is no second plan for aidp run to apply.
    assert not [i for i in items if isinstance(i, Plan)]


@pytest.mark.parametrize(("tool", "arguments", "summary"), [
    ("tasks_file", {"description": "Handle the\n  draft flag", "tags": ["cli"]},
     "Handle the draft flag"),
    ("tasks_update", {"id": "2c1c", "status": "done"}, "2c1c done"),
    ("tasks_update", {"id": "2c1c", "status": "abandoned", "reason": "Fixed upstream"},
     "2c1c abandoned: Fixed upstream"),
    ("tasks_claim", {"id": "8cf0"}, "8cf0"),
    ("tasks_claim", {}, "the first ready task"),
    ("tasks_show", {"id": "8cf0"}, "8cf0"),
    ("tasks_list", {"status": "done", "tag": "mcp", "limit": 5}, "status done, tag mcp, limit 5"),
    ("tasks_list", {}, ""),
    ("tasks_ready", {"limit": 3}, "limit 3"),
    ("todo_read", {}, ""),
    ("todo_write", {"items": []}, "0 items"),
])
def test_each_of_aidps_tools_gets_the_words_that_say_what_the_call_does(
        tool: str, arguments: dict[str, Any], summary: str) -> None:
    assert notes(claude(f"mcp__aidp__{tool}", arguments)) == [
        Tool(f"mcp__aidp__{tool}", summary)]
    assert notes(codex(tool, arguments)) == [Tool(f"aidp.{tool}", summary)]


def test_only_aidps_tools_under_aidps_server_name_get_its_words() -> None:
    for name in ("mcp__aidp__todo_write", "mcp__aidp.tasks_file", "aidp.tasks_list",
                 "mcp_aidp_tasks_ready", "aidp__tasks_claim", "aidp_tasks_update",
                 "aidp-todo_read", "todo_write"):
        assert aidp_tool(name) is not None, name
    for name in ("mcp__github__todo_write", "todo_writer", "TodoWrite", "todowrite",
                 "aidp_tasks_delete", "mcp__aidp__", None, 7):
        assert aidp_tool(name) is None, name
    # Another server's tool of the same name keeps the usual summary (its first words).
    other = claude("mcp__github__tasks_update", {"id": "17", "status": "done"})
    assert notes(other) == [Tool("mcp__github__tasks_update", "17")]
