"""opencode: `opencode run --format json --print-logs --log-level ERROR`, prompt on stdin.

Its `--format json` events, one per line, each with a `sessionID` and a `part`:
`text` (`part.text`, the assistant's words), `tool_use` (`part.tool`, `part.state`
with `status`, `input`, `output`; `todowrite` is its plan), `step_start` and
`step_finish`, and `error` (`error.data.message`, with `statusCode` for an API error).

The preset, checked against opencode 1.18:

- `--format json`: in its default format opencode writes its plan and tool calls to
  stderr, as decorated text.
- the prompt on stdin: opencode joins its message arguments into one text and quotes
  an argument holding a space, so `opencode run "Fix it"` sends `"Fix it"` in quotes;
  stdin is sent as it is, and a prompt starting with `-` is the prompt.
- `--print-logs --log-level ERROR`: opencode retries an API error five times over
  about a minute without a word on stdout; its error log (on stderr) shows each
  failed attempt as it happens. Nothing else is logged at that level in a good run.
- No permission flag: opencode asks for nothing by default in `run` (its own
  `permission` settings in opencode.json apply as they are).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from aidp.agent import events
from aidp.agent.agents.base import Adapter, Given, McpServer

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


_KINDS = ("text", "tool_use", "step_start", "step_finish", "error", "reasoning")
_PLAN_TOOL = "todowrite"


def _read(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    kind = event.get("type")
    if kind not in _KINDS or "sessionID" not in event:
        return None
    part = event["part"] if isinstance(event.get("part"), dict) else {}
    if kind == "text":
        text = part.get("text")
        return reader.text(text) if isinstance(text, str) else []
    if kind == "tool_use":
        name = part.get("tool")
        state = part["state"] if isinstance(part.get("state"), dict) else {}
        arguments = state.get("input")
        if not isinstance(name, str):
            return []
        if name == _PLAN_TOOL:
            items: list[events.Item] = [events.Tool(name, events.summarize(arguments))]
            if state.get("status") == "completed" and isinstance(arguments, dict):
                plan = events.read_plan(arguments.get("todos"))
                if plan is not None:
                    items.append(plan)
            return items
        return reader.tool(name, arguments)
    if kind == "error":
        error = event["error"] if isinstance(event.get("error"), dict) else {}
        data = error["data"] if isinstance(error.get("data"), dict) else {}
        message = data.get("message") or error.get("name") or "error"
        status = data.get("statusCode")
        what = f"HTTP {status}: " if isinstance(status, int) else ""
        words = events.one_line(message, 200)
        return [events.Notice(f"the agent reported an error: {what}{words}")]
    return []  # steps and reasoning


class Opencode(Adapter):
    name = "opencode"
    title = "opencode"
    preset = "opencode run --format json --print-logs --log-level ERROR"
    plan_tools = (_PLAN_TOOL,)
    version_from_cli = True
    quiet_env: ClassVar[Mapping[str, str]] = {"OPENCODE_DISABLE_AUTOUPDATE": "1"}

    def read_event(self, reader: events.OutputReader, event: dict[str, Any]
                   ) -> list[events.Item] | None:
        return _read(reader, event)

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """OPENCODE_CONFIG_CONTENT, the inline config opencode merges over its config files:
        a local server `aidp` (added to a JSON object already there; a value that is not one
        is left alone, and the run goes without the server)."""
        import json

        given = env.get("OPENCODE_CONFIG_CONTENT", "").strip()
        try:
            config = json.loads(given) if given else {}
        except ValueError:
            return None
        if not isinstance(config, dict) or not isinstance(config.get("mcp", {}), dict):
            return None
        stdio = server.stdio()
        config.setdefault("mcp", {})[server.name] = {
            "type": "local", "command": [stdio["command"], *stdio["args"]],
            "environment": stdio["env"], "enabled": True}
        return argv, {"OPENCODE_CONFIG_CONTENT": json.dumps(config)}
