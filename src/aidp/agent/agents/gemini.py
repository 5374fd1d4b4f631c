"""Gemini CLI: `gemini --output-format stream-json --prompt=PROMPT`.

Its stream-json events: `init`, `message` (assistant text, possibly in deltas),
`tool_use` and `tool_result` (write_todos is its plan), `error`, and `result`
(`status: "error"` with the API's error when the run failed).

The preset, checked against Gemini CLI 0.61:

- `GEMINI_CLI_TRUST_WORKSPACE=true` in its environment: headless Gemini refuses any
  folder it has not been told to trust (exit 55), i.e. every fresh clone. The variable
  rather than `--skip-trust`: Gemini reads its settings — the project's
  `.gemini/settings.json`, where `aidp setup gemini` puts its hooks — before it parses
  its arguments, and `--skip-trust` only sets this variable while parsing, so with it
  the project's settings and hooks are left out. A value you set yourself wins
  (`GEMINI_CLI_TRUST_WORKSPACE=false` keeps Gemini's restricted mode).
- `--allowed-tools=run_shell_command(aidp tasks add),…,run_shell_command(aidp todo),
  run_shell_command(aidp prime),write_todos`: headless Gemini offers no shell tool and
  no plan tool unless they are allowed; this allows the shell for the aidp commands an
  agent's work needs (base.AGENT_COMMANDS, by prefix; a chain `a && b` is checked part
  by part; never `aidp trust`), and its plan tool. (Gemini offers write_todos only with a
  Gemini 2.x model; with Gemini 3 models it has no plan tool, and the TODO list is
  kept through `aidp todo` commands.)
- `--prompt=PROMPT` in one argument, so a prompt starting with `-` is the prompt.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any, ClassVar

from aidp.agent import events
from aidp.agent.agents import HOOK_EVENTS
from aidp.agent.agents.base import AGENT_COMMANDS, Adapter, Given, Hooks, McpServer, Setup

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

NAME = "gemini"

_KINDS = ("init", "message", "tool_use", "tool_result", "error", "result")
_PLAN_TOOL = "write_todos"


def _read(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    kind = event.get("type")
    # opencode's events share some kinds; they carry a `part` or a `sessionID`.
    if kind not in _KINDS or "part" in event or "sessionID" in event:
        return None
    if kind == "result" and "status" not in event:
        return None  # Copilot's `result` (sessionId, exitCode)
    if kind == "message":
        if event.get("role") != "assistant":
            return []
        content = event.get("content")
        if not isinstance(content, str):
            return []
        if event.get("delta") is True:
            reader.partial += content
            return reader.flush_partial(final=False)
        return reader.flush_partial(final=True) + reader.text(content)
    if kind == "tool_use":
        name = event.get("tool_name")
        if not isinstance(name, str):
            return None
        items = reader.flush_partial(final=True)
        parameters = event.get("parameters")
        if name == _PLAN_TOOL:
            # The plan applies once Gemini accepted the call (its tool_result): a
            # write_todos the CLI refused (not offered to this model) changes nothing.
            pending = reader.scratch.setdefault(NAME, {})
            pending[str(event.get("tool_id"))] = parameters
            return [*items, events.Tool(name, events.summarize(parameters))]
        return items + reader.tool(name, parameters)
    if kind == "tool_result":
        pending = reader.scratch.get(NAME, {})
        parameters = pending.pop(str(event.get("tool_id")), None)
        if parameters is None or event.get("status") != "success":
            return []
        plan = events.read_plan(parameters.get("todos") if isinstance(parameters, dict)
                                else None)
        return [plan] if plan is not None else []
    if kind == "error":
        return [events.Notice(events.one_line(event.get("message") or "error"))]
    if kind == "result":
        items = reader.flush_partial(final=True)
        if event.get("status") == "error":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            words = events.one_line(message or "no reason given", 200)
            items.append(events.Notice(f"the agent reported an error: {words}"))
        return items
    return []


class Gemini(Adapter):
    name = NAME
    title = "Gemini CLI"
    preset = ("gemini --output-format stream-json "
              + shlex.quote("--allowed-tools=" + ",".join(
                  [*(f"run_shell_command({command})" for command in AGENT_COMMANDS),
                   _PLAN_TOOL]))
              + " --prompt={prompt}")
    env: ClassVar[Mapping[str, str]] = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}
    plan_tools = (_PLAN_TOOL,)
    version_from_cli = True
    hooks = Hooks(events=HOOK_EVENTS["gemini"], block_decision="deny",
                  final_reply="prompt_response")
    setup = Setup(
        settings=".gemini/settings.json", instructions="GEMINI.md",
        mcp_settings=".gemini/settings.json",
        hook_names={"SessionStart": "aidp-prime", "BeforeAgent": "aidp-prompt",
                    "AfterTool": "aidp-plan", "AfterAgent": "aidp-continue"},
        # headless Gemini offers only tools that need no confirmation
        mcp_entry={"trust": True})

    def read_event(self, reader: events.OutputReader, event: dict[str, Any]
                   ) -> list[events.Item] | None:
        return _read(reader, event)

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """Gemini CLI (0.61) takes MCP servers only from its settings files and extensions,
        not on its command line (its system settings files, GEMINI_CLI_SYSTEM_*_PATH, are
        skipped unless they and every folder above them are root's). When the project's
        `.gemini/settings.json` registers aidp's (`aidp setup gemini --mcp`), Gemini
        starts that one, with its own environment, which holds the run's AIDP_DIR and
        AIDP_SESSION. Otherwise the run gets a home of its own (GEMINI_CLI_HOME) whose
        user settings are the user's plus aidp's server (.gemini_home); None when the
        user's settings cannot be read as JSON or already name a server `aidp`."""
        from aidp.agent.agents.gemini_home import run_home

        if registered():
            return argv, {}
        home = run_home(env, server)
        return (argv, {"GEMINI_CLI_HOME": str(home)}) if home is not None else None
