"""Cursor CLI: `cursor-agent -p --output-format stream-json PROMPT`.

Its stream-json follows Claude Code's (read by aidp.agent.agents.claude), plus
`tool_call` events: `{"subtype": "started", "tool_call": {"<name>ToolCall": {"args": …}}}`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aidp.agent import events
from aidp.agent.agents.base import Adapter, Given, McpServer

if TYPE_CHECKING:
    from collections.abc import Callable



def _read(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    if event.get("type") != "tool_call":
        return None
    if event.get("subtype") != "started":
        return []
    call = event.get("tool_call")
    if not isinstance(call, dict) or not call:
        return [events.Tool("tool")]
    key, body = next(iter(call.items()))
    name = str(key).removesuffix("ToolCall").removesuffix("_tool_call") or "tool"
    arguments = body.get("args") if isinstance(body, dict) else None
    return reader.tool(name, arguments)


class Cursor(Adapter):
    name = "cursor"
    title = "Cursor CLI"
    preset = "cursor-agent -p --output-format stream-json {prompt}"
    plan_tools = ("updateTodos",)

    def read_event(self, reader: events.OutputReader, event: dict[str, Any]
                   ) -> list[events.Item] | None:
        return _read(reader, event)

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """cursor-agent reads MCP servers only from its settings files (.cursor/mcp.json),
        not for one run."""
        return None
