"""The adapter interface (aidp.agent.agents.base) and its registry: every table the loop,
the hooks, `aidp setup`, `aidp agents` and the MCP handover use is derived from the
adapters, and an adapter that leaves out what the interface needs is refused."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

import pytest

from aidp.agent import agents, inventory, mcp_handover, presets
from aidp.agent.agents.base import Adapter, Given, Hooks, McpServer, Setup
from aidp.agent.events import Plan, Text, Tool
from aidp.agent.hook import handler
from aidp.agent.setup import integrate


def test_the_registry_holds_each_adapter_once_under_its_name() -> None:
    names = [adapter.name for adapter in agents.adapters()]
    assert len(set(names)) == len(names)
    assert all(isinstance(adapter, Adapter) for adapter in agents.adapters())
    assert {a.name for a in agents.reading()} == set(names)
    assert all(agents.get(f" {name.upper()} ") is agents.load(name) for name in names)
    assert agents.get("vim") is None


def test_presets_setup_hooks_and_agents_are_the_registrys() -> None:
    assert {a.name: a.preset for a in agents.adapters()} == presets.PRESETS
    hooked = [a.name for a in agents.adapters() if a.hooks is not None]
    assert sorted(integrate.AGENTS) == sorted(hooked) == sorted(a.name for a in agents.hooked())
    for adapter in agents.hooked():
        assert adapter.hooks is not None and adapter.setup is not None
        spec = integrate.AGENTS[adapter.name]
        assert spec.settings == adapter.setup.settings
        assert set(spec.matchers) == set(adapter.hooks.events)
        for event in adapter.hooks.events:
            assert handler.resolve(adapter.name, event.lower()) == (adapter.name, event)
    found = inventory.survey(env={"PATH": ""}, ask=False)
    assert [(i.name, i.command, i.program) for i in found] == [
        (a.name, a.preset, shlex.split(a.preset)[0]) for a in agents.adapters()]


def test_a_plan_matcher_names_the_adapters_plan_tools() -> None:
    for adapter in agents.hooked():
        assert adapter.hooks is not None
        plan_event = next(e for e, kind in adapter.hooks.events.items() if kind == "plan")
        assert integrate.AGENTS[adapter.name].matchers[plan_event] == "|".join(adapter.plan_tools)


@pytest.mark.parametrize(("program", "expected"), [
    ("/usr/local/bin/aider", "aider"), ("C:\\tools\\Cursor-Agent.exe", "cursor"),
    ("codex", "codex"), ("python3", None),
])
def test_a_command_line_of_your_own_finds_its_cli(program: str, expected: str | None) -> None:
    found = agents.for_command(None, program)
    assert (found.name if found else None) == expected


def test_own_text_lines_are_read_only_for_the_program_run() -> None:
    line = "litellm.AuthenticationError: bad key"
    aider = agents.output_reader(agents.get("aider"))
    assert aider.feed(line)[0] != Text(line) and aider.failure is not None
    plain = agents.output_reader(agents.get("claude"))
    assert plain.feed(line) == [Text(line)] and plain.failure is None


def test_every_plan_tool_is_read_as_a_plan_from_any_agent() -> None:
    todos = [{"content": "Step", "status": "pending"}]
    for tool in ("TodoWrite", "write_todos", "todowrite", "updateTodos", "todo_write"):
        reader = agents.output_reader()
        items = reader.tool(tool, {"todos": todos})
        assert items[1:] == [Plan([{"content": "Step", "status": "pending"}])], tool
    assert agents.output_reader().tool("bash", {"todos": todos}) == [Tool("bash", "1 item")]


def test_hook_plans_per_adapter() -> None:
    state: dict[str, Any] = {}
    claude, codex, gemini = (agents.load(n) for n in ("claude", "codex", "gemini"))
    plan = [{"step": "x", "status": "pending"}]
    assert codex.hook_plan("update_plan", {"plan": plan}, None, state) == (True, plan)
    assert gemini.hook_plan("write_todos", {"todos": plan}, None, state) == (True, plan)
    assert gemini.hook_plan("update_plan", {"plan": plan}, None, state) == (False, None)
    is_plan, raw = claude.hook_plan("TaskCreate", {"subject": "Write it"},
                                    {"task": {"id": "1"}}, state)
    assert is_plan and raw == [{"content": "Write it", "status": "pending"}]
    assert "claude_tasks" in state  # kept for the next hook process


def test_gemini_uses_the_server_its_project_registers() -> None:
    # Otherwise a home of its own for the run: tests/agent/test_gemini_home.py.
    gemini = agents.load("gemini")
    server = mcp_handover.server_for({})
    assert gemini.hand_mcp(["gemini"], server, {}, registered=lambda: True) == (["gemini"], {})


def _hand(argv: list[str], server: McpServer, env: dict[str, str], *,
          registered: Callable[[], bool]) -> Given | None:
    return None


def test_an_adapter_without_name_title_or_preset_is_refused() -> None:
    with pytest.raises(TypeError, match="sets no title, preset"):
        type("Half", (Adapter,), {"name": "half", "hand_mcp": _hand})


def test_an_adapter_with_hooks_needs_setup_and_the_reverse() -> None:
    with pytest.raises(TypeError, match="hooks and setup go together"):
        type("Hooked", (Adapter,), {
            "name": "x", "title": "X", "preset": "x", "hand_mcp": _hand,
            "hooks": Hooks({"A": "start", "B": "prompt", "C": "plan", "D": "stop"})})
    with pytest.raises(TypeError, match="hooks and setup go together"):
        type("Setup", (Adapter,), {
            "name": "x", "title": "X", "preset": "x", "hand_mcp": _hand,
            "setup": Setup("a.json", "A.md", "m.json")})


def test_hooks_map_each_kind_once() -> None:
    with pytest.raises(ValueError, match="once to each"):
        Hooks({"A": "start", "B": "stop"})


def test_an_adapter_must_say_how_it_takes_an_mcp_server() -> None:
    cls = type("NoMcp", (Adapter,), {"name": "x", "title": "X", "preset": "x"})
    with pytest.raises(TypeError, match="hand_mcp"):
        cls()
