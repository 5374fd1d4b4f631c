"""Reading agent output: plain text and the JSON event dialects (recorded streams)."""

from __future__ import annotations

from pathlib import Path

import orjson

from aidp.agent.agents import output_reader
from aidp.agent.events import Notice, Plan, Text, Tool, plan_entries, summarize

DATA = Path(__file__).parent / "data"


def read_all(lines: list[str]) -> list:
    reader = output_reader()
    items = []
    for line in lines:
        items.extend(reader.feed(line))
    items.extend(reader.finish())
    return items


def test_plain_text_is_text_line_by_line() -> None:
    assert read_all(["hello", "", "world"]) == [Text("hello"), Text(""), Text("world")]


def test_json_that_is_no_known_event_stays_text() -> None:
    line = '{"type": "weather", "sky": "blue"}'
    assert read_all([line, '{"no": "type"}', "[1, 2]"]) == [
        Text(line), Text('{"no": "type"}'), Text("[1, 2]")
    ]


def test_recorded_claude_stream_json() -> None:
    lines = (DATA / "claude-stream-json.jsonl").read_text(encoding="utf-8").splitlines()
    items = read_all(lines)
    texts = [i.text for i in items if isinstance(i, Text)]
    assert texts == [
        "I'll start by planning the work.",
        "The tokenizer drops the last token. While reading it I noticed the error messages "
        "are not localized.",
        'File task: "Localize parser error messages" priority: low tags: i18n,parser',
    ]  # the final `result` repeats the last message and is not shown twice
    tools = [i for i in items if isinstance(i, Tool)]
    assert [t.name for t in tools] == ["TodoWrite", "Bash"]
    assert tools[0].note == "TodoWrite: 3 items"
    assert tools[1].note == 'Bash: grep -n "def tokenize" src/parser.py'
    plans = [i for i in items if isinstance(i, Plan)]
    assert plans == [Plan([
        {"content": "Read the parser module", "status": "completed"},
        {"content": "Fix the off-by-one in tokenize()", "status": "in_progress"},
        {"content": "Add a regression test", "status": "pending"},
    ])]


def test_claude_result_is_shown_when_no_assistant_text_came() -> None:
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "Done."}
    assert read_all([orjson.dumps(result).decode()]) == [Text("Done.")]


def test_claude_error_result_is_a_notice() -> None:
    result = {"type": "result", "subtype": "error_max_turns", "is_error": True}
    items = read_all([orjson.dumps(result).decode()])
    assert items == [Notice("the agent reported an error: error_max_turns")]


def test_recorded_codex_exec_json() -> None:
    lines = (DATA / "codex-exec-json.jsonl").read_text(encoding="utf-8").splitlines()
    items = read_all(lines)
    assert [i.note for i in items if isinstance(i, Tool)] == [
        "command: bash -lc 'pytest -q tests/test_io.py'",  # once, though started and completed
        "file_change: update src/io.py",
    ]
    assert [i.text for i in items if isinstance(i, Text)] == [
        "Reproduced and fixed the null check.",
        "Update task: TASKREF status: done",
        'File task: "Audit the other readers for null checks" priority: medium',
    ]
    plans = [i.entries for i in items if isinstance(i, Plan)]
    assert plans[0] == [
        {"content": "Reproduce the crash", "status": "pending"},
        {"content": "Fix the null check", "status": "pending"},
    ]
    assert plans[-1] == [
        {"content": "Reproduce the crash", "status": "completed"},
        {"content": "Fix the null check", "status": "completed"},
    ]


def test_codex_legacy_events() -> None:
    lines = [
        '{"id":"0","msg":{"type":"exec_command_begin","call_id":"c1",'
        '"command":["bash","-lc","ls"]}}',
        '{"id":"0","msg":{"type":"plan_update","plan":[{"step":"Look","status":"completed"},'
        '{"step":"Fix","status":"in_progress"}]}}',
        '{"id":"0","msg":{"type":"agent_message","message":"Todo pause: \\"need access\\""}}',
        '{"id":"0","msg":{"type":"token_count"}}',
    ]
    assert read_all(lines) == [
        Tool("command", "bash -lc ls"),
        Plan([{"content": "Look", "status": "completed"},
              {"content": "Fix", "status": "in_progress"}]),
        Text('Todo pause: "need access"'),
    ]


def delta(text: str) -> dict:
    return {"type": "message", "timestamp": "t", "role": "assistant", "content": text,
            "delta": True}


def test_gemini_stream_json_joins_deltas_into_lines() -> None:
    events = [
        {"type": "init", "timestamp": "t", "session_id": "s", "model": "gemini-2.5-pro"},
        {"type": "message", "timestamp": "t", "role": "user", "content": "the prompt"},
        delta("File ta"),
        delta('sk: "From deltas"\nand'),
        {"type": "tool_use", "timestamp": "t", "tool_name": "write_todos", "tool_id": "w1",
         "parameters": {"todos": [{"description": "Step one", "status": "in_progress"},
                                  {"description": "Gone", "status": "cancelled"}]}},
        {"type": "tool_result", "timestamp": "t", "tool_id": "w1", "status": "success"},
        delta(" more"),
        {"type": "result", "timestamp": "t", "status": "success", "stats": {}},
    ]
    items = read_all([orjson.dumps(e).decode() for e in events])
    assert items == [
        Text('File task: "From deltas"'),
        Text("and"),
        Tool("write_todos", "2 items"),
        Plan([{"content": "Step one", "status": "in_progress"}]),
        Text(" more"),
    ]


def test_gemini_plan_applies_only_once_gemini_accepted_the_call() -> None:
    # Gemini 0.61 offers write_todos only to 2.x models; a call it refuses changes nothing.
    events = [
        {"type": "tool_use", "timestamp": "t", "tool_name": "write_todos", "tool_id": "w1",
         "parameters": {"todos": [{"description": "Step one", "status": "pending"}]}},
        {"type": "tool_result", "timestamp": "t", "tool_id": "w1", "status": "error",
         "error": {"type": "tool_not_registered", "message": "Tool \"write_todos\" not found"}},
    ]
    assert read_all([orjson.dumps(e).decode() for e in events]) == [
        Tool("write_todos", "1 item")]


def test_gemini_error_result_is_a_notice_naming_the_error() -> None:
    event = {"type": "result", "timestamp": "t", "status": "error",
             "error": {"type": "unknown", "message": "[API Error: 401 bad key]"}, "stats": {}}
    assert read_all([orjson.dumps(event).decode()]) == [
        Notice("the agent reported an error: [API Error: 401 bad key]")]


def test_cursor_tool_calls() -> None:
    events = [
        {"type": "system", "subtype": "init", "model": "gpt-5"},
        {"type": "tool_call", "subtype": "started", "call_id": "c1",
         "tool_call": {"shellToolCall": {"args": {"command": "npm test"}}}},
        {"type": "tool_call", "subtype": "completed", "call_id": "c1",
         "tool_call": {"shellToolCall": {"args": {"command": "npm test"}, "result": {}}}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "All green."}]}},
    ]
    items = read_all([orjson.dumps(e).decode() for e in events])
    assert items == [Tool("shell", "npm test"), Text("All green.")]


def test_unknown_events_in_a_json_stream_are_not_shown() -> None:
    lines = ['{"type":"thread.started","thread_id":"x"}', '{"type":"future.event","x":1}', "",
             "plain warning"]
    assert read_all(lines) == [Text("plain warning")]


def test_summaries_are_one_short_line() -> None:
    assert summarize({"command": "a\nb   c"}) == "a b c"
    assert len(summarize({"command": "x" * 500})) == 100
    assert summarize({"other": "value"}) == "value"
    assert summarize(None) == ""


def test_plan_entries_reject_what_is_no_plan() -> None:
    assert plan_entries("nope") is None
    assert plan_entries([1, 2]) is None
    # A plan of nothing but bad entries is no plan (it must not clear the TODO list);
    # an empty plan is one, and a bad entry among good ones is skipped alone.
    assert plan_entries([{"content": " ", "status": "pending"}]) is None
    assert plan_entries([]) == []
    assert plan_entries([{"content": "a\x1b[31mb"}, {"content": "ok", "status": "done"}, 3]) == [
        {"content": "ok", "status": "completed"}]


# --- agent output is untrusted: no shape of event may crash the reader -----------------

from hypothesis import given, settings  # noqa: E402 - grouped with the property below
from hypothesis import strategies as st  # noqa: E402

_int64 = st.integers(-(2**63), 2**63 - 1)  # what JSON parsers (orjson) accept
_scalars = st.none() | st.booleans() | _int64 | st.text(max_size=20)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "content", "text", "name", "input", "todos", "status", "item",
                         "items", "msg", "message", "role", "delta", "tool_call", "subtype",
                         "result", "is_error", "command", "changes", "plan", "parameters"]),
        inner, max_size=5),
    max_leaves=20,
)
_types = st.sampled_from(["assistant", "user", "system", "result", "item.started",
                          "item.completed", "item.updated", "turn.failed", "error", "message",
                          "tool_use", "tool_call", "init", "thread.started"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_types, st.dictionaries(st.text(max_size=8), _values, max_size=4)
                          | _values), max_size=6))
def test_any_event_shape_is_read_without_failing(events: list) -> None:
    reader = output_reader()
    for kind, body in events:
        event = dict(body) if isinstance(body, dict) else {"payload": body}
        event["type"] = kind
        for item in reader.feed(orjson.dumps(event).decode()):
            assert isinstance(item, (Text, Tool, Plan, Notice))
            if isinstance(item, Plan):
                assert all(e["status"] in ("pending", "in_progress", "completed")
                           and isinstance(e["content"], str) for e in item.entries)
    reader.finish()


# --- Claude Code's Tasks API, retries and errors (2.1) ---------------------------------


def _assistant_tool(tool_id: str, name: str, arguments: dict) -> str:
    return orjson.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}]}}).decode()


def _tool_result(tool_id: str, text: str, result: object, *, error: bool = False) -> str:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
    if error:
        block["is_error"] = True
    return orjson.dumps({"type": "user", "message": {"role": "user", "content": [block]},
                         "tool_use_result": result}).decode()


def test_claude_tasks_api_is_mirrored_as_a_plan() -> None:
    lines = [
        _assistant_tool("t1", "TaskCreate", {"subject": "Write code", "description": "x"}),
        _assistant_tool("t2", "TaskCreate", {"subject": "Test it", "description": "y"}),
        _tool_result("t1", "Task #1 created successfully: Write code",
                     {"task": {"id": "1", "subject": "Write code"}}),
        _tool_result("t2", "Task #2 created successfully: Test it",
                     {"task": {"id": "2", "subject": "Test it"}}),
        # TaskUpdate carries no text: the id says which entry it is.
        _assistant_tool("t3", "TaskUpdate", {"taskId": "1", "status": "completed"}),
        _assistant_tool("t4", "TaskUpdate", {"taskId": "2", "status": "in_progress"}),
        _assistant_tool("t5", "TaskUpdate", {"taskId": "9", "status": "completed"}),
    ]
    plans = [i.entries for i in read_all(lines) if isinstance(i, Plan)]
    assert plans[0] == [{"content": "Write code", "status": "pending"}]
    assert plans[-1] == [{"content": "Write code", "status": "completed"},
                         {"content": "Test it", "status": "in_progress"}]
    assert len(plans) == 4  # two creations, two updates; the unknown id changes nothing


def test_claude_task_whose_creation_failed_leaves_the_plan() -> None:
    lines = [
        _assistant_tool("t1", "TaskCreate", {"subject": "Keep", "description": "x"}),
        _tool_result("t1", "Task #1 created successfully: Keep", {"task": {"id": "1"}}),
        _assistant_tool("t2", "TaskCreate", {"subject": "Refused", "description": "y"}),
        _tool_result("t2", "Error: no", "Error: no", error=True),
    ]
    plans = [i.entries for i in read_all(lines) if isinstance(i, Plan)]
    assert plans[-1] == [{"content": "Keep", "status": "pending"}]


def test_claude_todowrite_counts_once_its_result_came_without_an_error() -> None:
    """Claude Code 2.1.332 offers no TodoWrite headless: a model calling it all the same
    gets "No such tool available", and no plan was made."""
    todos = {"todos": [{"content": "Write code", "status": "in_progress", "activeForm": "x"}]}
    refused = [
        _assistant_tool("t1", "TodoWrite", todos),
        _tool_result("t1", "<tool_use_error>Error: No such tool available: TodoWrite."
                     "</tool_use_error>", None, error=True),
    ]
    items = read_all(refused)
    assert [i.note for i in items if isinstance(i, Tool)] == ["TodoWrite: 1 item"]
    assert not [i for i in items if isinstance(i, Plan)]
    taken = [_assistant_tool("t1", "TodoWrite", todos),
             _tool_result("t1", "Todos have been modified successfully.", None)]
    reader = output_reader()
    assert not [i for i in reader.feed(taken[0]) if isinstance(i, Plan)]  # not yet
    assert [i.entries for i in reader.feed(taken[1]) if isinstance(i, Plan)] == [
        [{"content": "Write code", "status": "in_progress"}]]


def test_claude_api_retries_are_shown_as_they_happen() -> None:
    retry = {"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 3,
             "retry_delay_ms": 588.3, "error_status": 500, "error": "server_error"}
    assert read_all([orjson.dumps(retry).decode()]) == [
        Notice("API error 500 server_error; retrying in 0.6s (1/3)")]


def test_claude_api_error_result_names_the_error() -> None:
    result = {"type": "result", "subtype": "success", "is_error": True,
              "api_error_status": 401, "result": "Failed to authenticate. API Error: 401 bad key"}
    items = read_all([orjson.dumps(result).decode()])
    assert items[-1] == Notice(
        "the agent reported an error: Failed to authenticate. API Error: 401 bad key")


def test_codex_todo_list_says_only_done_or_not() -> None:
    event = {"type": "item.updated", "item": {"id": "i1", "type": "todo_list", "items": [
        {"text": "Write code", "completed": True}, {"text": "Test it", "completed": False}]}}
    (plan,) = read_all([orjson.dumps(event).decode()])
    assert isinstance(plan, Plan) and plan.knows_in_progress is False
    assert plan.entries == [{"content": "Write code", "status": "completed"},
                            {"content": "Test it", "status": "pending"}]


def test_claude_permission_denials_are_said_once_with_the_way_out() -> None:
    result = {"type": "result", "subtype": "success", "is_error": False, "result": "ok",
              "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t",
                                      "tool_input": {"command": "touch x.txt"}}]}
    items = read_all([orjson.dumps(result).decode()])
    assert items[-1] == Notice(
        "Claude Code refused 1 tool call that needs approval (Bash: touch x.txt); to allow "
        "more, give your own command line with --allowedTools (docs/agents.md)")


def test_claude_task_update_note_names_the_task() -> None:
    lines = [
        _assistant_tool("t1", "TaskCreate", {"subject": "Write code", "description": "x"}),
        _assistant_tool("t2", "TaskUpdate", {"taskId": "1", "status": "completed"}),
        _assistant_tool("t3", "TaskUpdate", {"taskId": "7", "status": "completed"}),
    ]
    notes = [i.note for i in read_all(lines) if isinstance(i, Tool)]
    assert notes == ["TaskCreate: Write code", "TaskUpdate: Write code → completed",
                     "TaskUpdate: #7 → completed"]
