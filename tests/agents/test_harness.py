"""The harness itself, without any agent CLI: the fake model server's four dialects and
its step choice, the installer's pin handling, and the world's refusal to start
anything unconfigured."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import install
import pytest
from fakemodel import (
    END_TEXT,
    SIDE_TEXT,
    Conversation,
    FakeModelServer,
    Scenario,
    aidp_tool,
    error,
    plan,
    render,
    shell,
    text,
    todo_write,
)
from harness import AgentWorld


def post(url: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def sse_data(raw: str) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


BASH = {"name": "Bash", "input_schema": {}}


def test_the_server_binds_loopback_only() -> None:
    with FakeModelServer() as server:
        assert server.url.startswith("http://127.0.0.1:") and server.port > 0


def test_anthropic_steps_follow_the_history_not_the_request_count() -> None:
    scenario = Scenario.of(shell("aidp todo tick 1"), text("Done ticking."))
    with FakeModelServer(scenario) as server:
        first = {"model": "m", "stream": True, "tools": [BASH],
                 "messages": [{"role": "user", "content": "go"}]}
        for _ in range(2):  # a retry of the same request gets the same answer
            status, raw = post(f"{server.url}/v1/messages", first)
            assert status == 200
            starts = [e for e in sse_data(raw) if e["type"] == "content_block_start"]
            assert starts[0]["content_block"]["name"] == "Bash"
            delta = next(e for e in sse_data(raw) if e["type"] == "content_block_delta")
            assert json.loads(delta["delta"]["partial_json"])["command"] == "aidp todo tick 1"
        second = {**first, "messages": first["messages"] + [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                               "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}]}
        status, raw = post(f"{server.url}/v1/messages", second)
        deltas = [e["delta"].get("text") for e in sse_data(raw) if e["type"] == "content_block_delta"]
        assert deltas == ["Done ticking."]
        # A side request (no tools) gets a short text and does not count as a step.
        status, raw = post(f"{server.url}/v1/messages", {"model": "m", "messages": [
            {"role": "user", "content": "title?"}]})
        assert json.loads(raw)["content"][0]["text"] == SIDE_TEXT
        kinds = [r.kind for r in server.requests]
        assert kinds == ["main", "main", "main", "side"]
        assert [r.step for r in server.main_requests()] == [0, 0, 1]


def test_responses_dialect_renders_codex_tools() -> None:
    scenario = Scenario.of(plan([("A", "in_progress")]), shell("ls"))
    tools = [{"type": "function", "name": "exec_command"},
             {"type": "function", "name": "update_plan"}]
    with FakeModelServer(scenario) as server:
        body = {"model": "m", "stream": True, "tools": tools,
                "input": [{"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "go"}]}]}
        status, raw = post(f"{server.url}/v1/responses", body)
        done = [e for e in sse_data(raw) if e["type"] == "response.output_item.done"]
        assert done[0]["item"]["name"] == "update_plan"
        assert json.loads(done[0]["item"]["arguments"]) == {
            "plan": [{"step": "A", "status": "in_progress"}]}
        assert sse_data(raw)[-1]["type"] == "response.completed"
        body["input"] += [{"type": "function_call", "name": "update_plan", "call_id": "c"},
                          {"type": "function_call_output", "call_id": "c", "output": "ok"}]
        status, raw = post(f"{server.url}/v1/responses", body)
        assert status == 200
        done = [e for e in sse_data(raw) if e["type"] == "response.output_item.done"]
        assert json.loads(done[0]["item"]["arguments"]) == {"cmd": "ls"}


def test_chat_completions_and_gemini_dialects() -> None:
    scenario = Scenario.of(shell("aidp todo show"))
    with FakeModelServer(scenario) as server:
        chat = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}],
                "tools": [{"type": "function", "function": {"name": "bash"}}]}
        status, raw = post(f"{server.url}/v1/chat/completions", chat)
        assert status == 200 and raw.rstrip().endswith("data: [DONE]")
        calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in sse_data(raw)
                 if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
        assert calls[0]["function"]["name"] == "bash"
        gemini = {"contents": [{"role": "user", "parts": [{"text": "go"}]}],
                  "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}]}
        url = f"{server.url}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        status, raw = post(url, gemini)
        part = sse_data(raw)[0]["candidates"][0]["content"]["parts"][0]
        assert part["functionCall"] == {"name": "run_shell_command",
                                        "args": {"command": "aidp todo show",
                                                 "description": "Run a command"}}
        status, raw = post(f"{server.url}/v1beta/models/x:countTokens", gemini)
        assert json.loads(raw) == {"totalTokens": 10}


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/messages", {"stream": True, "tools": [BASH], "messages": []}),
    ("/v1/responses", {"tools": [{"name": "exec_command"}], "input": []}),
    ("/v1/chat/completions", {"tools": [{"function": {"name": "bash"}}], "messages": []}),
    ("/v1beta/models/m:generateContent", {"tools": [{"functionDeclarations": [{"name": "x"}]}]}),
])
def test_every_dialect_answers_an_error_step_with_its_status(path: str, body: dict) -> None:
    with FakeModelServer(Scenario.of(error(401))) as server:
        status, raw = post(server.url + path, body)
        assert status == 401 and "Invalid API key" in raw


def test_conversations_are_chosen_by_the_prompt_and_end_with_done() -> None:
    scenario = Scenario((Conversation((text("continued"),), when="You have an active task"),
                         Conversation((text("first"),))))
    with FakeModelServer(scenario) as server:
        def ask(prompt: str, history: list | None = None) -> str:
            body = {"tools": [BASH], "messages": [{"role": "user", "content": prompt},
                                                  *(history or [])]}
            return json.loads(post(f"{server.url}/v1/messages", body)[1])["content"][0]["text"]

        assert ask("Do it") == "first"
        assert ask("You have an active task: A") == "continued"
        past_the_end = [{"role": "assistant", "content": "first"}, {"role": "user", "content": "?"}]
        assert ask("Do it", past_the_end) == END_TEXT


def test_claude_tasks_plan_takes_two_responses() -> None:
    responses = render([plan([("A", "in_progress"), ("B", "pending")]),
                        plan([("A", "completed"), ("B", "in_progress")])],
                       {"TaskCreate", "TaskUpdate"})
    assert [[name for name, _ in r.calls] for r in responses] == [
        ["TaskCreate", "TaskCreate"], ["TaskUpdate"], ["TaskUpdate", "TaskUpdate"]]
    assert responses[1].calls[0][1] == {"taskId": "1", "status": "in_progress"}


PLAN = [("A", "in_progress"), ("B", "pending")]
TODO_WRITE_ARGS = {"items": [{"content": "A", "status": "in_progress"},
                             {"content": "B", "status": "pending"}]}


@pytest.mark.parametrize("name", ["mcp__aidp__todo_write", "mcp__aidp.todo_write",
                                  "mcp_aidp_todo_write", "aidp_todo_write", "aidp-todo_write"])
def test_a_cli_without_a_plan_tool_plans_with_aidps_todo_write(name: str) -> None:
    responses = render([plan(PLAN)], {"Bash", name})
    assert [r.calls for r in responses] == [[(name, TODO_WRITE_ARGS)]]
    # A CLI with its own plan tool keeps it, unless aidp's tool is asked for by name.
    assert render([plan(PLAN)], {"TodoWrite", name})[0].calls[0][0] == "TodoWrite"
    assert render([todo_write(PLAN)], {"TodoWrite", name})[0].calls == [(name, TODO_WRITE_ARGS)]


def test_a_deferred_tool_is_loaded_with_toolsearch_first() -> None:
    steps = [plan(PLAN), plan([("A", "completed")]), text("Done.")]
    before = render(steps, {"Bash", "ToolSearch"}, frozenset({"mcp__aidp__todo_write"}))
    assert [[n for n, _ in r.calls] for r in before] == [
        ["ToolSearch"], ["mcp__aidp__todo_write"], ["mcp__aidp__todo_write"], []]
    assert before[0].calls[0][1] == {"query": "select:mcp__aidp__todo_write"}
    # Once loaded, the tool is offered (still marked deferred): the same responses, so
    # the step a request gets does not change.
    after = render(steps, {"Bash", "ToolSearch", "mcp__aidp__todo_write"},
                   frozenset({"mcp__aidp__todo_write"}))
    assert after == before


def test_claudes_deferred_tools_are_read_from_the_request() -> None:
    scenario = Scenario.of(plan(PLAN))
    listing = ("The following deferred tools are now available via ToolSearch. Their schemas "
               "are NOT loaded.\nWebFetch\nmcp__aidp__todo_write\n\nAvailable agent types")
    body = {"stream": False, "tools": [BASH, {"name": "ToolSearch"}], "messages": [
        {"role": "user", "content": "go"},
        {"role": "system", "content": [{"type": "text", "text": listing}]}]}
    with FakeModelServer(scenario) as server:
        status, raw = post(f"{server.url}/v1/messages", body)
        assert status == 200
        assert json.loads(raw)["content"][0]["input"] == {"query": "select:mcp__aidp__todo_write"}
        assert server.main_requests()[0].parsed.deferred == {"WebFetch", "mcp__aidp__todo_write"}


def test_codex_mcp_tools_come_in_a_namespace_and_are_called_in_it() -> None:
    tools = [{"type": "function", "name": "exec_command"},
             {"type": "namespace", "name": "mcp__aidp", "tools": [
                 {"type": "function", "name": "todo_write"},
                 {"type": "function", "name": "tasks_file"}]}]
    with FakeModelServer(Scenario.of(plan(PLAN))) as server:
        body = {"stream": True, "tools": tools, "input": [
            {"type": "message", "role": "user", "content": "go"}]}
        status, raw = post(f"{server.url}/v1/responses", body)
        assert status == 200
        done = [e for e in sse_data(raw) if e["type"] == "response.output_item.done"]
        assert (done[0]["item"]["namespace"], done[0]["item"]["name"]) == ("mcp__aidp", "todo_write")
        assert json.loads(done[0]["item"]["arguments"]) == TODO_WRITE_ARGS
    # Any of aidp's tools, by its name in `aidp mcp`.
    assert render([aidp_tool("tasks_file", {"description": "X"})],
                  {"exec_command", "mcp__aidp.tasks_file"})[0].calls == [
        ("mcp__aidp.tasks_file", {"description": "X"})]


def test_a_step_without_its_tool_is_never_sent_and_is_reported() -> None:
    scenario = Scenario.of(plan(PLAN))
    with FakeModelServer(scenario) as server:
        body = {"stream": False, "tools": [BASH], "messages": [{"role": "user", "content": "go"}]}
        status, raw = post(f"{server.url}/v1/messages", body)
        assert status == 200
        answer = json.loads(raw)["content"]
        assert [part["type"] for part in answer] == ["text"]  # no call to a missing tool
        assert server.unrendered() == [
            "the CLI offered no plan tool (nor aidp's todo_write) (offered: Bash)"]
        server.requests.clear()  # this test's missing tool was on purpose
    responses = render([shell("ls")], {"TodoWrite"})
    assert responses[0].calls == [] and responses[0].missing is not None


def test_pins_are_rewritten_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both copies of the pins are rewritten: work on temporary copies, never on the
    # repository's own files.
    real = (install.VERSIONS_FILE, install.VERIFIED_FILE)
    untouched = [path.read_bytes() for path in real]
    pins = tmp_path / "versions.toml"
    pins.write_text(install.VERSIONS_FILE.read_text())
    verified = tmp_path / "verified.py"
    verified.write_text(install.VERIFIED_FILE.read_text())
    monkeypatch.setattr(install, "VERSIONS_FILE", pins)
    monkeypatch.setattr(install, "VERIFIED_FILE", verified)
    install.rewrite_pins({"codex": "9.9.9"})
    text = pins.read_text()
    assert 'package = "@openai/codex"\nversion = "9.9.9"' in text
    assert text.count('version = "9.9.9"') == 1
    assert '"codex": ("npm", "@openai/codex", "9.9.9")' in verified.read_text()
    assert [path.read_bytes() for path in real] == untouched
    with pytest.raises(RuntimeError, match=r"cannot find the version of \[cli\.nope\]"):
        install.rewrite_pins({"nope": "1"})


def test_a_world_never_starts_anything_unconfigured(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        world = AgentWorld("codex", tmp_path, server)
        with pytest.raises(RuntimeError, match="not configured"):
            world.aidp("--version")


def test_the_proxy_refuses_and_records_other_hosts() -> None:
    with FakeModelServer() as server:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": server.url}))
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open("http://example.invalid/update-check", timeout=10)
        assert refused.value.code == 403
        assert [r.path for r in server.outside()] == ["http://example.invalid/update-check"]
        # Through the proxy to the server itself is served as usual.
        with opener.open(f"{server.url}/v1/models", timeout=10) as response:
            assert json.loads(response.read())["data"][0]["id"]
        assert len(server.outside()) == 1
        server.requests.clear()  # this test's attempt was on purpose
