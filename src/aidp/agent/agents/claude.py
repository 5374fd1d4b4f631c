"""Claude Code: `claude -p --output-format stream-json --verbose`, prompt on stdin.

Its stream-json events: `assistant` messages with `text` and `tool_use` blocks,
`user` messages (tool results), `system` (init, `api_retry`) and `result`.

Its plan: `TodoWrite` (the whole list each time), or — the default in `-p` mode since
2.1 — the Tasks API: `TaskCreate {subject}` (the id comes back in the tool result,
`tool_use_result.task.id`) and `TaskUpdate {taskId, status, subject?}`, which carries
no text: the reader keeps the task-id → entry map (aidp.agent.agents.claude_tasks) and
reports the whole plan after each change. Headless 2.1.332 offers neither (the plan
is then kept with aidp's `todo_write`); a model that calls `TodoWrite` all the same
gets "No such tool available", so a TodoWrite plan counts once its result came back
without an error.

The preset allows the aidp commands an agent's work needs (`Bash(aidp tasks add:*)`, …,
`Bash(aidp todo:*)`, `Bash(aidp prime:*)`: base.AGENT_COMMANDS; never `aidp trust`) and
nothing broader, and bounds
Claude Code's API retries (ten by default, minutes of silence) to three; each retry
is shown as it happens.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Any, ClassVar

from aidp.agent import events
from aidp.agent.agents import HOOK_EVENTS
from aidp.agent.agents.base import AGENT_COMMANDS, Adapter, Given, Hooks, McpServer, Setup
from aidp.agent.agents.claude_tasks import ClaudeTasks

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

NAME = "claude"

_KINDS = ("assistant", "user", "system", "result", "stream_event")
_CREATED = re.compile(r"Task #(\w+) created")


class _State:
    """Claude Code's task list in one invocation (aidp.agent.agents.claude_tasks, shared with
    `aidp hook claude`), and the TaskCreate calls whose answer has not come yet."""

    def __init__(self) -> None:
        self.tasks = ClaudeTasks()
        self.creating: dict[str, str] = {}  # tool_use id → assumed id
        self.writing: dict[str, list[events.Item]] = {}  # TodoWrite's plan

    def plan(self) -> list[events.Item]:
        # No tasks left (the only creation failed, or all were deleted) is no plan: a
        # TODO list the user had is never cleared by it.
        entries = self.tasks.entries()
        plan = events.read_plan(entries) if entries else None
        return [plan] if plan is not None else []


def _state(reader: events.OutputReader) -> _State:
    state: _State = reader.scratch.setdefault(NAME, _State())
    return state


def _read(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    kind = event.get("type")
    if kind not in _KINDS:
        return None
    if kind == "result" and "subtype" not in event:
        return None  # Gemini's and Copilot's `result` (Claude Code's always has a subtype)
    if kind == "assistant":
        return _assistant(reader, event)
    if kind == "user":
        return _tool_results(reader, event)
    if kind == "system":
        return _system(event)
    if kind == "result":
        items: list[events.Item] = []
        # The result repeats the last assistant message: shown only if nothing was.
        if not reader.saw_text and isinstance(event.get("result"), str):
            items.extend(reader.text(event["result"]))
        subtype = event.get("subtype")
        failed = isinstance(subtype, str) and subtype.startswith("error")
        if event.get("is_error") is True or failed:
            items.append(events.Notice(f"the agent reported an error: {_error_words(event)}"))
        items.extend(_denials(event.get("permission_denials")))
        return items
    return []  # partial stream events


def _denials(denials: object) -> list[events.Item]:
    """Tool calls Claude Code refused for want of approval: said once, at the end, with
    where to allow more (the preset allows only the aidp commands an agent needs)."""
    if not isinstance(denials, list) or not denials:
        return []
    shown = []
    for denial in denials[:3]:
        if isinstance(denial, dict):
            name = denial["tool_name"] if isinstance(denial.get("tool_name"), str) else "tool"
            what = events.summarize(denial.get("tool_input"))
            shown.append(f"{name}: {events.one_line(what, 60)}" if what else name)
    more = f" and {len(denials) - 3} more" if len(denials) > 3 else ""
    calls = "call that needs" if len(denials) == 1 else "calls that need"
    return [events.Notice(
        f"Claude Code refused {len(denials)} tool {calls} approval "
        f"({'; '.join(shown)}{more}); to allow more, give your own command line with "
        "--allowedTools (docs/agents.md)")]


def _error_words(event: dict[str, Any]) -> str:
    status = event.get("api_error_status")
    result = event.get("result")
    subtype = event.get("subtype")
    words = events.one_line(result, 160) if isinstance(result, str) and result.strip() else ""
    if not words:
        words = events.one_line(subtype if isinstance(subtype, str) else "error", 60)
    if isinstance(status, int) and str(status) not in words:
        words = f"HTTP {status}: {words}"
    return words


def _system(event: dict[str, Any]) -> list[events.Item]:
    if event.get("subtype") != "api_retry":
        return []  # init, and kinds this version does not know
    attempt, most = event.get("attempt"), event.get("max_retries")
    status, error = event.get("error_status"), event.get("error")
    delay = event.get("retry_delay_ms")
    what = " ".join(str(p) for p in (status, error) if p not in (None, "")) or "an error"
    when = f" in {delay / 1000:.1f}s" if isinstance(delay, (int, float)) else ""
    count = f" ({attempt}/{most})" if attempt is not None and most is not None else ""
    return [events.Notice(f"API error {events.one_line(what, 60)}; retrying{when}{count}")]


def _assistant(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return reader.text(content)
    if not isinstance(content, list):
        return None
    items: list[events.Item] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            items.extend(reader.text(block["text"]))
        elif block.get("type") == "tool_use":
            name, arguments = block.get("name"), block.get("input")
            if name == "TaskUpdate" and isinstance(arguments, dict):
                items.append(_update_note(_state(reader).tasks, arguments))
            elif name == "TodoWrite" and isinstance(block.get("id"), str):
                # Its plan waits for its result: the tool may not exist (2.1.332).
                called = reader.tool(name, arguments)
                items.extend(i for i in called if not isinstance(i, events.Plan))
                _state(reader).writing[block["id"]] = [
                    i for i in called if isinstance(i, events.Plan)]
            else:
                items.extend(reader.tool(name, arguments))
            if name == "TaskCreate":
                state = _state(reader)
                assumed = state.tasks.create(arguments)
                if assumed is not None:
                    if isinstance(block.get("id"), str):
                        state.creating[block["id"]] = assumed
                    items.extend(state.plan())
            elif name == "TaskUpdate" and _state(reader).tasks.update(arguments):
                items.extend(_state(reader).plan())
    return items


def _update_note(tasks: ClaudeTasks, arguments: dict[str, Any]) -> events.Tool:
    """`TaskUpdate: Write code → completed` rather than the bare task id."""
    task_id = str(arguments.get("taskId"))
    known = tasks.tasks.get(task_id)
    what = known["content"] if known else f"#{task_id}"
    status = arguments.get("status")
    change = f" → {status}" if isinstance(status, str) else ""
    return events.Tool("TaskUpdate", events.one_line(f"{what}{change}"))


def _tool_results(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item]:
    """A TodoWrite's plan counts once its result came without an error. A TaskCreate's
    answer names the new task's id: an id assumed earlier is corrected (Claude numbers
    tasks 1, 2, … so it rarely differs)."""
    state = _state(reader)
    if not state.creating and not state.writing:
        return []
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    changed = False
    written: list[events.Item] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        plan = state.writing.pop(str(block.get("tool_use_id")), None)
        if plan is not None and block.get("is_error") is not True:
            written.extend(plan)
        assumed = state.creating.pop(str(block.get("tool_use_id")), None)
        if assumed is None:
            continue
        if block.get("is_error") is True:  # the task was never created
            state.tasks.update({"taskId": assumed, "status": "deleted"})
            changed = True
            continue
        actual = _created_id(event.get("tool_use_result"), block.get("content"))
        if actual is not None and actual != assumed:
            state.tasks.created(assumed, actual)
            changed = True
    return written + (state.plan() if changed else [])


def _created_id(result: object, content: object) -> str | None:
    task = result.get("task") if isinstance(result, dict) else None
    if isinstance(task, dict) and task.get("id") is not None:
        return str(task["id"])
    text = content if isinstance(content, str) else ""
    if isinstance(content, list):
        text = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    match = _CREATED.search(text)
    return match.group(1) if match else None


WAIT_FOR_MCP = "MCP_CONNECTION_NONBLOCKING"


class Claude(Adapter):
    name = NAME
    title = "Claude Code"
    preset = ("claude -p --output-format stream-json --verbose --allowedTools "
              + " ".join(shlex.quote(f"Bash({command}:*)") for command in AGENT_COMMANDS))
    env: ClassVar[Mapping[str, str]] = {"CLAUDE_CODE_MAX_RETRIES": "3"}
    plan_tools = ("TodoWrite", "TaskCreate", "TaskUpdate")
    version_from_cli = True
    quiet_env: ClassVar[Mapping[str, str]] = {
        "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    hooks = Hooks(events=HOOK_EVENTS["claude"], trusts_stop_hook_active=True)
    # A project server's tools are refused headless until allowed ("Claude requested
    # permissions to use mcp__aidp__todo_write, but you haven't granted it yet", 2.1.332).
    setup = Setup(settings=".claude/settings.json", instructions="CLAUDE.md",
                  mcp_settings=".mcp.json", mcp_allow="mcp__{server}__{tool}")

    def read_event(self, reader: events.OutputReader, event: dict[str, Any]
                   ) -> list[events.Item] | None:
        return _read(reader, event)

    def hook_plan(self, tool: object, tool_input: dict[str, Any], tool_response: object,
                  state: dict[str, Any]) -> tuple[bool, object]:
        """TaskCreate/TaskUpdate carry no list: the task-id → entry map is kept in the
        hook's state, and the whole plan is what it holds after the change (no change:
        not a plan call)."""
        if tool not in ("TaskCreate", "TaskUpdate"):
            return super().hook_plan(tool, tool_input, tool_response, state)
        tasks = ClaudeTasks.from_json(state.get("claude_tasks"))
        changed = tasks.apply(tool, tool_input, tool_response)
        state["claude_tasks"] = tasks.to_json()
        return (True, tasks.entries()) if changed else (False, None)

    def export_session(self, session: str) -> None:
        """Claude Code runs the lines a SessionStart hook writes to $CLAUDE_ENV_FILE
        before each Bash command: the agent's own `aidp` commands then work on this
        session."""
        import os
        import shlex

        target = os.environ.get("CLAUDE_ENV_FILE")
        if not target:
            return
        try:
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(f"export AIDP_SESSION={shlex.quote(session)}\n")
        except OSError:
            pass  # the commands in the prime text name the session anyway

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """`--mcp-config JSON` (servers for this run, on top of the user's and the
        project's) and the server's tools allowed by name (`mcp__aidp__todo_write`, …),
        added to the preset's `--allowedTools` (a variadic option: the names go first,
        its own rules follow). MCP_CONNECTION_NONBLOCKING=false: Claude Code 2.1.332
        otherwise sends its first request without waiting for the server, whose tools
        then miss the model's first turn when `aidp mcp` starts slowly (a loaded
        machine); the user's own value of it is kept."""
        import json

        config = json.dumps({"mcpServers": {server.name: {"type": "stdio", **server.stdio()}}})
        allowed = [f"mcp__{server.name}__{tool}" for tool in server.tools]
        if "--allowedTools" in argv:
            at = argv.index("--allowedTools") + 1
            rest = [*argv[1:at], *allowed, *argv[at:]]
        else:
            rest = [*argv[1:], "--allowedTools", *allowed]
        wait = {} if WAIT_FOR_MCP in env else {WAIT_FOR_MCP: "false"}
        return [argv[0], "--mcp-config", config, *rest], wait
