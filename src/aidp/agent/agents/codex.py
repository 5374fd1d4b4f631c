"""Codex CLI: `codex exec --json PROMPT`.

Its `--json` events: `item.started|updated|completed` with agent_message,
command_execution, file_change, mcp_tool_call, web_search and todo_list items
(todo_list is its plan), `turn.failed` and `error`; the older `{"msg": {...}}`
events, whose plan is `plan_update`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aidp.agent import events
from aidp.agent.agents import HOOK_EVENTS
from aidp.agent.agents.base import Adapter, Given, Hooks, McpServer, Setup

if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "codex"


def _read(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    kind = event.get("type")
    if isinstance(kind, str):
        codex_error = kind == "error" and "message" in event and "timestamp" not in event
        if kind.startswith(("item.", "thread.", "turn.")) or codex_error:
            return _event(reader, kind, event)
        return None
    msg = event.get("msg")
    if isinstance(msg, dict) and isinstance(msg.get("type"), str):
        return _legacy(reader, msg)
    return None


def _event(reader: events.OutputReader, kind: str, event: dict[str, Any]) -> list[events.Item]:
    Notice, Tool, one_line, summarize = (events.Notice, events.Tool, events.one_line,
                                         events.summarize)
    if kind == "error":
        message = event.get("message") or "error"
        reader.scratch[NAME] = message  # the last error, which turn.failed repeats
        return [Notice(one_line(message, 200))]
    if kind == "turn.failed":
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else None
        if message and message == reader.scratch.get(NAME):
            return [Notice("the turn failed (the error above)")]
        return [Notice(f"the turn failed: {one_line(message or 'no reason given')}")]
    if not kind.startswith("item."):
        return []
    item = event.get("item")
    if not isinstance(item, dict):
        return []
    item_type = item.get("type")
    item_id = str(item.get("id", ""))
    if item_type == "agent_message":
        if kind != "item.completed" or not isinstance(item.get("text"), str):
            return []
        return reader.text(item["text"])
    if item_type == "todo_list":
        # Its items are {text, completed}: done or not, never "in progress".
        raw = item.get("items")
        knows = isinstance(raw, list) and any(isinstance(e, dict) and "status" in e for e in raw)
        plan = events.read_plan(raw, knows_in_progress=knows)
        return [plan] if plan is not None else []
    if item_type == "error":
        return [Notice(one_line(item.get("message") or "error"))]
    if item_type in ("command_execution", "file_change", "mcp_tool_call", "web_search"):
        if item_id and item_id in reader.noted:
            return []
        if item_id:
            reader.noted.add(item_id)
        if item_type == "command_execution":
            return [Tool("command", summarize(item.get("command")))]
        if item_type == "file_change":
            changes = item["changes"] if isinstance(item.get("changes"), list) else []
            shown = ", ".join(
                f"{c.get('kind', 'update')} {c.get('path', '?')}"
                for c in changes
                if isinstance(c, dict)
            )
            return [Tool("file_change", one_line(shown))]
        if item_type == "mcp_tool_call":
            name = f"{item.get('server', 'mcp')}.{item.get('tool', 'tool')}"
            return [Tool(one_line(name, 40), summarize(item.get("arguments"), tool=name))]
        return [Tool("web_search", summarize(item.get("query")))]
    return []  # reasoning and kinds this version does not know


def _legacy(reader: events.OutputReader, msg: dict[str, Any]) -> list[events.Item]:
    Notice, Tool, one_line, summarize = (events.Notice, events.Tool, events.one_line,
                                         events.summarize)
    kind = msg["type"]
    if kind == "agent_message" and isinstance(msg.get("message"), str):
        return reader.text(msg["message"])
    if kind == "exec_command_begin":
        return [Tool("command", summarize(msg.get("command")))]
    if kind == "patch_apply_begin":
        changes = msg.get("changes")
        paths = one_line(", ".join(changes)) if isinstance(changes, dict) else ""
        return [Tool("apply_patch", paths)]
    if kind == "mcp_tool_call_begin":
        call = msg["invocation"] if isinstance(msg.get("invocation"), dict) else {}
        name = f"{call.get('server', 'mcp')}.{call.get('tool', 'tool')}"
        return [Tool(one_line(name, 40), summarize(call.get("arguments"), tool=name))]
    if kind == "plan_update":
        plan = events.read_plan(msg.get("plan"))
        return [plan] if plan is not None else []
    if kind in ("error", "stream_error"):
        return [Notice(one_line(msg.get("message") or "error"))]
    return []


class Codex(Adapter):
    name = NAME
    title = "Codex CLI"
    preset = ("codex exec --json --sandbox workspace-write -c tools.update_plan.enabled=true "
              "-c allow_login_shell=false -")
    plan_tools = ("update_plan",)
    # `codex --version` is never asked: without a configuration of yours it calls its vendor.
    hooks = Hooks(events=HOOK_EVENTS["codex"])
    setup = Setup(
        settings=".codex/hooks.json", instructions="AGENTS.md",
        mcp_settings=".codex/config.toml",
        # `codex exec` has nobody to ask: aidp's tools are approved for its server.
        mcp_entry={"default_tools_approval_mode": "approve"},
        note=("Note: Codex runs project hooks only in a trusted project and once you trust "
              "them in its /hooks panel (or, for a one-off run you checked, with "
              "'codex exec --dangerously-bypass-hook-trust'); its plan tool needs "
              "'-c tools.update_plan.enabled=true'"))

    def read_event(self, reader: events.OutputReader, event: dict[str, Any]
                   ) -> list[events.Item] | None:
        return _read(reader, event)

    def hook_plan(self, tool: object, tool_input: dict[str, Any], tool_response: object,
                  state: dict[str, Any]) -> tuple[bool, object]:
        """update_plan's list is its `plan`."""
        if tool in self.plan_tools:
            return True, tool_input.get("plan")
        return False, None

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """`-c mcp_servers.aidp.…` overrides after `codex exec` (values are TOML; a JSON
        string is a TOML string). Codex starts MCP servers with a scrubbed environment, so
        the run's project and session go in the server's own `env`; its tools are approved
        for this run (`codex exec` has nobody to ask). `required`: Codex 0.169 otherwise
        sends its first request without waiting for the server, whose tools then miss the
        model's first turn (`aidp mcp` takes a second or two to start)."""
        import json

        def toml(value: object) -> str:
            if isinstance(value, dict):
                return "{" + ", ".join(f"{k} = {toml(v)}" for k, v in value.items()) + "}"
            return json.dumps(value, ensure_ascii=False)

        key = f"mcp_servers.{server.name}"
        stdio = server.stdio()
        options = ["-c", f"{key}.command={toml(stdio['command'])}",
                   "-c", f"{key}.args={toml(stdio['args'])}",
                   "-c", f"{key}.env={toml(stdio['env'])}",
                   "-c", f'{key}.default_tools_approval_mode="approve"',
                   "-c", f"{key}.required=true"]
        return [*argv[:2], *options, *argv[2:]], {}
