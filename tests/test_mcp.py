"""`aidp mcp` spoken to as an agent speaks to it: a real `python -m aidp mcp` process,
newline-delimited JSON-RPC 2.0 on its stdin and stdout (docs/mcp.md)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from aidp import todos
from aidp.tasklist.log import TaskLog

# A guard against a hung server, never a timing assertion: a healthy answer comes in
# well under a second; the suite fails instead of hanging when none comes.
ANSWER_GUARD = 60


class Client:
    """A plain JSON-RPC client of one `aidp mcp` process."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "aidp", "mcp"], cwd=cwd, env=env or dict(os.environ),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send_line(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        line = self.lines.get(timeout=ANSWER_GUARD)
        assert line, f"the server closed stdout; stderr: {self.stderr()}"
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0"
        return message

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_line(json.dumps(message).encode())
        answer = self.answer()
        assert answer["id"] == self.next_id
        return answer

    def start(self) -> dict[str, Any]:
        answer = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "aidp-tests", "version": "1"}})
        self.send_line(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        return answer

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": tool}
        if arguments is not None:
            params["arguments"] = arguments
        result: dict[str, Any] = self.request("tools/call", params)["result"]
        return result

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=ANSWER_GUARD)
        return code

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")


def text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"])


def data(result: dict[str, Any]) -> Any:
    assert result["isError"] is False, text(result)
    return json.loads(result["content"][0]["text"])


@pytest.fixture
def client(project: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AIDP_SESSION", "mcp-test")
    monkeypatch.setenv("AIDP_ACTOR", "agent-1")
    started = Client(project)
    started.start()
    yield started
    if started.proc.poll() is None:
        started.proc.kill()
        started.proc.wait()


def lines_of(project: Path) -> bytes:
    path = project / ".aidp" / "tasklist.jsonl"
    return path.read_bytes() if path.exists() else b""


# --- the protocol -------------------------------------------------------------------------


def test_initialize_names_the_server_and_offers_tools(project: Path) -> None:
    c = Client(project)
    answer = c.start()["result"]
    assert answer["serverInfo"]["name"] == "aidp"
    assert "tools" in answer["capabilities"]
    assert c.close() == 0


def test_tools_list_is_exactly_the_eight_tools_and_small(client: Client) -> None:
    listed = client.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in listed] == ["todo_write", "todo_read", "tasks_file",
                                           "tasks_show", "tasks_list", "tasks_ready",
                                           "tasks_claim", "tasks_update"]
    for tool in listed:
        assert tool["inputSchema"]["type"] == "object"
        assert tool["description"]
    # Every agent pays for these on every request: docs/mcp.md caps them ("Size"
    # gives the figure).
    size = len(json.dumps(listed, separators=(",", ":")))
    assert size < 6000, size


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on(
        client: Client) -> None:
    client.send_line(b"this is not json {")
    answer = client.answer()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    assert answer["error"]["message"].startswith("Parse error: Invalid JSON")
    client.send_line(b"[" * 100_000 + b"]" * 100_000)  # JSON, but nested past any use
    answer = client.answer()
    assert answer["error"]["code"] == -32700 and "recursion" in answer["error"]["message"]
    client.send_line(b'{"jsonrpc": "2.0", "id": 41, "method": 7}')
    answer = client.answer()
    assert answer["id"] == 41 and answer["error"]["code"] == -32600
    client.send_line(b"[1, 2]")
    assert client.answer()["error"]["code"] == -32600
    # still serving
    assert data(client.call("todo_read"))["items"] == []


def test_every_request_is_answered_whatever_its_id(client: Client, project: Path) -> None:
    # MCP ids are strings or integers. One that is neither cannot be answered under its
    # own id: an invalid-request error with id null, and the call is not run. (The SDK's
    # transport read these as notifications: no answer, and a tools/call silently lost.)
    call = {"name": "tasks_file", "arguments": {"description": "Never filed"}}
    for raw_id in ("1.5", "null", "true", "[1]", "2.0", "1e3", '{"n": 1}'):
        client.send_line(b'{"jsonrpc": "2.0", "id": %s, "method": "tools/call", "params": %s}'
                         % (raw_id.encode(), json.dumps(call).encode()))
        answer = client.answer()
        assert answer["id"] is None, raw_id
        assert answer["error"]["code"] == -32600, raw_id
        assert answer["error"]["message"].startswith(
            "Invalid request: the id must be a string or an integer, not "), raw_id
    # the same with a key the SDK refuses besides the id
    client.send_line(b'{"jsonrpc": "2.0", "id": true, "method": "tools/list", "params": 3}')
    assert client.answer()["error"]["code"] == -32600
    assert lines_of(project) == b""
    # strings and integers (negative, zero, large) are answered under their own id
    for good_id in ("a", "", -1, 0, 2**70):
        client.send_line(json.dumps({"jsonrpc": "2.0", "id": good_id,
                                     "method": "tools/list"}).encode())
        answer = client.answer()
        assert answer["id"] == good_id and "tools" in answer["result"]
    # a notification (no id at all) is never answered, even for a method that
    # answers a request: the next answer is the next request's
    client.send_line(b'{"jsonrpc": "2.0", "method": "tools/list"}')
    client.send_line(b'{"jsonrpc": "2.0", "method": "notifications/nothing-known"}')
    assert data(client.call("todo_read"))["items"] == []


def test_an_unknown_method_is_a_json_rpc_error(client: Client) -> None:
    answer = client.request("tasks/explode")
    assert answer["error"]["code"] == -32601


def test_the_server_exits_cleanly_when_stdin_closes(client: Client) -> None:
    assert client.close() == 0
    assert "Traceback" not in client.stderr()


def test_requests_read_before_stdin_closed_are_answered(project: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDP_SESSION", "drain")
    c = Client(project)
    c.start()
    plan = {"items": [{"content": "Last words", "status": "pending"}]}
    c.send_line(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                            "params": {"name": "todo_write", "arguments": plan}}).encode())
    assert c.proc.stdin is not None
    c.proc.stdin.close()
    answer = c.answer()
    assert answer["id"] == 99 and answer["result"]["isError"] is False
    assert c.proc.wait(timeout=ANSWER_GUARD) == 0


# --- the tools ----------------------------------------------------------------------------


def test_todo_write_replaces_the_sessions_list_as_todo_show_json(client: Client,
                                                                  project: Path) -> None:
    written = data(client.call("todo_write", {"items": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading"},
        {"content": "Write the fix", "status": "in_progress"},
        {"content": "Run the tests", "status": "pending", "priority": "high"},
    ]}))
    assert written["session"] == "mcp-test" and written["active"] is True
    assert [(i["content"], i["status"]) for i in written["items"]] == [
        ("Read the code", "completed"), ("Write the fix", "in_progress"),
        ("Run the tests", "pending")]
    assert written["items"][2]["priority"] == "high"
    # what `aidp todo show` sees, from the file
    todo = todos.current(TaskLog(project).read(), "mcp-test")
    assert [i["content"] for i in todo.visible] == ["Read the code", "Write the fix",
                                                     "Run the tests"]
    assert data(client.call("todo_read")) == written
    # the whole list each time
    again = data(client.call("todo_write", {"items": [{"content": "Run the tests",
                                                       "status": "completed"}]}))
    assert [i["content"] for i in again["items"]] == ["Run the tests"]
    cleared = data(client.call("todo_write", {"items": []}))
    assert cleared["items"] == [] and cleared["active"] is False


def test_tasks_file_list_ready_claim_update(client: Client, project: Path) -> None:
    filed = data(client.call("tasks_file", {"description": "Fix the flaky login test",
                                            "priority": "high", "tags": ["tests"]}))
    assert filed["description"] == "Fix the flaky login test"
    assert filed["priority"] == "high" and filed["tags"] == ["tests"]
    assert filed["session"] == "mcp-test"
    other = data(client.call("tasks_file", {"description": "Write docs"}))
    # the same description again: nothing filed, the open task returned
    again = client.call("tasks_file", {"description": "fix the  flaky login test"})
    assert data(again)["id"] == filed["id"] and "Not filed again" in text(again)

    listed = data(client.call("tasks_list"))
    assert {t["id"] for t in listed} == {filed["id"], other["id"]}
    assert [t["id"] for t in data(client.call("tasks_list", {"tag": "tests"}))] == [filed["id"]]
    assert data(client.call("tasks_list", {"limit": 1})) == listed[:1]

    ready = data(client.call("tasks_ready"))
    assert [t["id"] for t in ready] == [filed["id"], other["id"]]  # high priority first

    claimed = data(client.call("tasks_claim"))
    assert claimed["id"] == filed["id"] and claimed["status"] == "in_progress"
    assert claimed["assignee"] == "agent-1"
    short = other["id"].split("_")[2][:6]
    assert data(client.call("tasks_claim", {"id": short}))["id"] == other["id"]

    done = data(client.call("tasks_update", {"id": filed["id"], "status": "done"}))
    assert done["status"] == "done" and "completed_at" in done
    dropped = data(client.call("tasks_update", {"id": short, "status": "abandoned",
                                                "reason": "not needed"}))
    assert dropped["abandoned_reason"] == "not needed"
    assert data(client.call("tasks_list")) == []
    assert {t["status"] for t in data(client.call("tasks_list", {"status": "all"}))} == {
        "done", "abandoned"}
    nothing = client.call("tasks_claim")
    assert nothing["isError"] is True and "Nothing ready" in text(nothing)


def test_tasks_file_takes_a_body_and_tasks_show_returns_the_task_whole(
        client: Client, project: Path, cli) -> None:
    filed = data(client.call("tasks_file", {
        "description": "Crash on an empty config", "type": "bug",
        "body": "## Steps\n1. run it with HOME=\n\n## Done when\n- it says so"}))
    assert (filed["task_type"], filed["body"]) == (
        "bug", "## Steps\n1. run it with HOME=\n\n## Done when\n- it says so")
    epic = cli("tasks", "add", "Config epic", "-q").out.strip()
    assert cli("tasks", "edit", filed["id"], "--parent", epic).code == 0
    assert cli("tasks", "note", filed["id"], "seen on macOS too").code == 0
    shown = data(client.call("tasks_show", {"id": filed["id"][-8:][:4]}))
    assert json.loads(cli("tasks", "show", filed["id"], "--json").out) == shown
    assert (shown["parent"], shown["notes"][0]["text"], shown["body"]) == (
        epic, "seen on macOS too", filed["body"])
    assert data(client.call("tasks_show", {"id": epic}))["children"] == [filed["id"]]
    done = data(client.call("tasks_update", {"id": filed["id"], "status": "done",
                                             "reason": "Guarded the empty file"}))
    assert done["close_reason"] == "Guarded the empty file"


BAD_CALLS = [
    ("todo_write", {"items": [{"content": "x", "status": "done"}]},
     "Invalid argument 'items[0].status': \"done\" is not one of pending, in_progress, completed"),
    ("todo_write", {"items": [{"content": "x"}]}, "Missing argument 'items[0].status'"),
    ("todo_write", {"items": "x"}, "Invalid argument 'items': expected an array, got a string"),
    ("todo_write", {}, "Missing argument 'items'"),
    ("todo_write", {"items": [{"content": "  ", "status": "pending"}]},
     "Invalid argument 'items[0].content': it is empty"),
    ("todo_write", {"items": [{"content": "a\x1b[2Jb", "status": "pending"}]},
     "Invalid argument 'items[0].content': it contains control characters"),
    ("todo_write", {"items": [{"content": "x", "status": "pending", "id": "1"}]},
     "Unknown argument 'items[0].id': accepted are content, status, activeForm, priority"),
    ("tasks_file", {"description": "x" * 201},
     "Invalid argument 'description': 201 characters; at most 200 are accepted"),
    ("tasks_file", {"description": "x", "priority": "urgent"},
     "Invalid argument 'priority': \"urgent\" is not one of high, medium, low"),
    ("tasks_file", {"description": "x", "tags": ["two words"]},
     "Invalid argument 'tags[0]': "),
    ("tasks_file", {"description": "x", "body": "a\x1b[2Jb"},
     "Invalid argument 'body': it contains the control character U+001B"),
    ("tasks_file", {"description": "x", "body": "x" * 65_537},
     "Invalid argument 'body': 65537 characters; at most 65536 are accepted"),
    ("tasks_file", {"description": "x", "body": "é" * 40_000},
     "Invalid argument 'body': 80,000 bytes; at most 64 KiB"),
    ("tasks_file", {"description": "x", "type": "story"},
     "Invalid argument 'type': \"story\" is not one of task, bug, feature, chore, epic"),
    ("tasks_show", {}, "Missing argument 'id'"),
    ("tasks_show", {"id": "abcd"}, "Task not found: abcd"),
    ("tasks_update", {"id": "abcd", "status": "in_progress", "reason": "x"},
     "Invalid argument 'reason': it goes only with status done or abandoned"),
    ("tasks_list", {"status": "blocked"},
     "Invalid argument 'status': \"blocked\" is not one of pending, in_progress, done, "
     "abandoned, open, all"),
    ("tasks_list", {"limit": -1}, "Invalid argument 'limit': -1; use a whole number from 0"),
    ("tasks_list", {"limit": "5"}, "Invalid argument 'limit': expected an integer, got a string"),
    ("tasks_ready", {"limit": True}, "Invalid argument 'limit': expected an integer, got a boolean"),
    ("tasks_update", {"id": "abcd", "status": "finished"},
     "Invalid argument 'status': \"finished\" is not one of pending, in_progress, done, abandoned"),
    ("tasks_update", {"status": "done"}, "Missing argument 'id'"),
    ("tasks_update", {"id": "abcd", "status": "done"}, "Task not found: abcd"),
    ("tasks_claim", {"id": "ab"}, "Invalid argument 'id': 2 characters; at least 4 are needed"),
    ("todo_read", {"session": "x"}, "Unknown argument 'session': accepted are no arguments"),
    ("tasks_explode", {}, "Unknown tool 'tasks_explode'"),
]


def test_bad_arguments_are_one_line_tool_errors_and_nothing_is_written(
        client: Client, project: Path) -> None:
    # One server for every case (each start loads the SDK): each refusal leaves the
    # file as it was, and the server answers the next call.
    data(client.call("tasks_file", {"description": "Already here"}))
    for tool, arguments, says in BAD_CALLS:
        before = lines_of(project)
        result = client.call(tool, arguments)
        assert result["isError"] is True, (tool, arguments)
        message = text(result)
        assert message.startswith(says), (tool, arguments, message)
        assert "\n" not in message and "pydantic" not in message and "Traceback" not in message
        assert lines_of(project) == before, (tool, arguments)


def test_one_bad_item_refuses_the_whole_plan(client: Client, project: Path) -> None:
    data(client.call("todo_write", {"items": [{"content": "Keep me", "status": "pending"}]}))
    before = lines_of(project)
    result = client.call("todo_write", {"items": [
        {"content": "Fine", "status": "pending"},
        {"content": "y" * 201, "status": "pending"}]})
    assert result["isError"] is True and "items[1].content" in text(result)
    assert lines_of(project) == before
    assert [i["content"] for i in data(client.call("todo_read"))["items"]] == ["Keep me"]


def test_arguments_that_are_no_object_get_an_error_not_a_crash(client: Client) -> None:
    answer = client.request("tools/call", {"name": "todo_read", "arguments": [1]})
    assert "error" in answer or answer["result"]["isError"] is True
    assert data(client.call("todo_read"))["items"] == []


# --- the session --------------------------------------------------------------------------


def test_the_session_is_the_one_the_agents_hooks_use(project: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """No AIDP_SESSION: the server started by an agent keeps its plan in the session the
    agent's hooks push on. Here the test process plays the agent: its hook runs (a child
    of it, as the agent's hooks are) and the server it starts find each other by it."""
    monkeypatch.delenv("AIDP_SESSION", raising=False)
    payload = json.dumps({"session_id": "claude-session-42", "hook_event_name": "SessionStart",
                          "source": "startup", "cwd": str(project)})
    hook = subprocess.run([sys.executable, "-m", "aidp", "hook", "claude", "SessionStart"],
                          input=payload, capture_output=True, text=True, cwd=project,
                          timeout=ANSWER_GUARD)
    assert hook.returncode == 0, hook.stderr
    c = Client(project)
    c.start()
    written = data(c.call("todo_write", {"items": [{"content": "Hooked", "status": "pending"}]}))
    assert written["session"] == "claude-session-42"
    assert c.close() == 0
    # the stop hook pushes on that list
    stop = json.dumps({"session_id": "claude-session-42", "hook_event_name": "Stop",
                       "stop_hook_active": False, "cwd": str(project)})
    hook = subprocess.run([sys.executable, "-m", "aidp", "hook", "claude", "Stop"],
                          input=stop, capture_output=True, text=True, cwd=project,
                          timeout=ANSWER_GUARD)
    assert json.loads(hook.stdout)["decision"] == "block"
    assert "You have an active task: Hooked" in json.loads(hook.stdout)["reason"]


def test_without_hooks_or_aidp_session_the_session_is_the_persons_own(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AIDP_SESSION", raising=False)
    c = Client(project)
    c.start()
    assert data(c.call("todo_read"))["session"] == "default"  # no git here: the last default (docs/todo.md, "Sessions")
    assert c.close() == 0


def test_hook_state_names_the_session_of_the_agent_process(project: Path) -> None:
    from aidp.agent.hook.state import ancestors, process_key, session_of_agent

    assert ancestors(os.getpid(), 1) == [os.getppid()]
    me, parent, init = (process_key(pid) for pid in (os.getpid(), os.getppid(), 1))
    folder = project / ".aidp" / "hooks"
    folder.mkdir(parents=True)
    (folder / "claude-old.json").write_text(json.dumps(
        {"session": "old", "agents": [me, init], "updated": 100}))
    (folder / "claude-new.json").write_text(json.dumps(
        {"session": "new", "agents": [parent, me], "updated": 200}))
    (folder / "gemini-other.json").write_text(json.dumps(
        {"session": "other", "agents": [init], "updated": 300}))
    (folder / "broken.json").write_text("{not json")
    assert session_of_agent(project, os.getpid()) == "new"  # the most recently updated
    assert session_of_agent(project, 1) == "other"
    assert session_of_agent(project, os.getppid()) == "new"
    (folder / "claude-bare.json").write_text(json.dumps(  # an older aidp's bare pids
        {"session": "bare", "pids": [os.getpid()], "updated": 900}))
    assert session_of_agent(project, os.getpid()) == "new"


def test_a_client_that_stops_reading_ends_the_server_quietly(project: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "aidp", "mcp"], cwd=project,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.close()  # gone before the server could answer anything
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    _, err = proc.communicate((json.dumps(hello) + "\n").encode(), timeout=ANSWER_GUARD)
    assert proc.returncode == 0
    assert err == b""


def test_docs_give_the_size_of_tools_list(client: Client) -> None:
    import re

    listed = client.request("tools/list")["result"]["tools"]
    size = len(json.dumps(listed, separators=(",", ":")))
    docs = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text()
    stated = re.search(r"`tools/list` is ([\d,]+) characters", docs)
    assert stated is not None and int(stated.group(1).replace(",", "")) == size


def test_every_schema_keyword_is_one_the_argument_check_knows() -> None:
    """aidp checks arguments itself (toolserver.tools.check): a keyword it does not know
    would be advertised to the model and never enforced."""
    from aidp.toolserver.tools import TOOLS

    known = {"type", "enum", "minLength", "maxLength", "minimum", "maximum", "maxItems",
             "items", "properties", "required", "additionalProperties", "description"}

    def walk(schema: dict[str, Any], where: str) -> None:
        assert set(schema) <= known, (where, set(schema) - known)
        for key, sub in schema.get("properties", {}).items():
            walk(sub, f"{where}.{key}")
        if "items" in schema:
            walk(schema["items"], f"{where}[]")
        if schema.get("type") == "object":
            assert schema.get("additionalProperties") is False, where

    for name, (_, schema) in TOOLS.items():
        walk(schema, name)


def test_a_project_folder_that_does_not_exist_stops_the_server_at_once(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIDP_DIR", str(project / "missing"))
    proc = subprocess.run([sys.executable, "-m", "aidp", "mcp"], input=b"", cwd=project,
                          capture_output=True, timeout=ANSWER_GUARD)
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("Error: Invalid AIDP_DIR")
    assert proc.stdout == b""


def test_the_server_sees_what_other_commands_wrote_meanwhile(client: Client, cli) -> None:
    """A server lives as long as its agent: each call reads the tasklist as it is now."""
    assert data(client.call("tasks_list")) == []
    assert data(client.call("todo_read"))["items"] == []
    tid = cli("tasks", "add", "Filed from the shell", "-q").out.strip()
    cli("--session", "mcp-test", "todo", "add", "Planned from the shell")
    assert [t["id"] for t in data(client.call("tasks_list"))] == [tid]
    assert [i["content"] for i in data(client.call("todo_read"))["items"]] == [
        "Planned from the shell"]
    cli("tasks", "done", tid)
    assert data(client.call("tasks_list")) == []


def test_a_pid_the_system_reused_is_not_the_same_agent(project: Path) -> None:
    from aidp.agent.hook.state import process_key, session_of_agent

    me = os.getpid()
    assert process_key(me) == process_key(me) and process_key(me).startswith(f"{me}")
    folder = project / ".aidp" / "hooks"
    folder.mkdir(parents=True)
    (folder / "claude-gone.json").write_text(json.dumps(
        {"session": "gone", "pids": [me], "agents": [f"{me}@1"], "updated": 100}))
    if "@" in process_key(me):  # start times known (Linux): the stale state is not ours
        assert session_of_agent(project, me) is None
    (folder / "claude-mine.json").write_text(json.dumps(
        {"session": "mine", "pids": [me], "agents": [process_key(me)], "updated": 50}))
    assert session_of_agent(project, me) == "mine"


def test_tasks_list_through_the_store_lists_what_a_plain_fold_lists(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tasks_list asks the fold (the store's query decodes only the tasks it lists): the
    same tasks, order and limit as from a plain fold, with their queue keys."""
    from aidp import store
    from aidp.app.project import Project, StoreReader
    from aidp.backlog import queue as work_queue
    from aidp.backlog import tasks
    from aidp.store import loader
    from aidp.toolserver import tools

    log = TaskLog(project)
    ids = [tasks.add(log, f"Task {n}", tags=["even"] if n % 2 == 0 else [])["id"]
           for n in range(30)]
    work_queue.block(log, ids[2], [ids[3]])
    tasks.set_status(log, [ids[4]], "done")
    asks: list[dict[str, Any]] = [{}, {"limit": 5}, {"tag": "even", "limit": 3},
                                  {"status": "all"}, {"status": "done"}]

    def listed(place: tools.Place) -> list[Any]:
        answers = []
        for args in asks:
            outcome = tools.call(place, "tasks_list", args)
            assert not outcome.is_error, outcome.texts
            answers.append(json.loads(outcome.texts[0]))
        return answers

    monkeypatch.setattr(loader, "MIN_BYTES", 0)  # the store, even for a file this small
    through_store = tools.Place(Project(project, reader=StoreReader()), lambda: "s")
    from_store = listed(through_store)
    assert isinstance(through_store.project.read(), store.StoreFold)
    plain = tools.Place(Project(project), lambda: "s")  # no reader: a plain fold
    assert not isinstance(plain.project.read(), store.StoreFold)
    assert from_store == listed(plain)
    everything, five, even, every, done = from_store
    assert [t["id"] for t in five] == ids[::-1][:5]
    assert [t["id"] for t in even] == [ids[28], ids[26], ids[24]]
    assert len(everything) == 29 and len(every) == 30 and [t["id"] for t in done] == [ids[4]]
    assert next(t for t in everything if t["id"] == ids[2])["blocked_by"] == [ids[3]]
