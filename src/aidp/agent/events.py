"""Reading an agent's stdout: plain text, or JSON events, told apart line by line.

A line that is a JSON object of a known event dialect is read as an event; anything
else is text. Known dialects:

- Claude Code `--output-format stream-json` (and Cursor's, which follows it):
  `assistant` messages with `text` and `tool_use` blocks; TodoWrite is its plan.
- Codex `exec --json`: `item.started|updated|completed` with agent_message,
  command_execution, file_change, mcp_tool_call, web_search and todo_list items
  (todo_list is its plan); the older `{"msg": {...}}` events, whose plan is
  `plan_update`.
- Gemini CLI `--output-format stream-json`: `message` (assistant text, possibly in
  deltas), `tool_use` (write_todos is its plan).

Events only ever become values here (text, notes, plans); nothing in them is run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

NOTE_WIDTH = 100
# Keys whose value says best what a tool call is about, in order of preference.
_SUMMARY_KEYS = (
    "command", "cmd", "file_path", "path", "notebook_path", "pattern", "url", "query",
    "description", "prompt", "subject",
)
_PLAN_TOOLS = {"todowrite", "write_todos", "update_plan", "updatetodos", "todo_write"}


@dataclass
class Text:
    """A line of the agent's own words: shown, and searched for signals."""

    text: str


@dataclass
class Tool:
    """A tool call the agent made: a one-line note; it counts as progress."""

    name: str
    summary: str = ""

    @property
    def note(self) -> str:
        return f"{self.name}: {self.summary}" if self.summary else self.name


@dataclass
class Plan:
    """The agent reported its own plan: [{"content", "status"}] with item statuses."""

    entries: list[dict]


@dataclass
class Notice:
    """Something the agent's CLI reported about itself (an error, how it stopped)."""

    text: str


Item = Text | Tool | Plan | Notice


def one_line(value: object, width: int = NOTE_WIDTH) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def summarize(arguments: object) -> str:
    """A few words about a tool call's arguments."""
    if isinstance(arguments, str):
        return one_line(arguments)
    if isinstance(arguments, list):
        if arguments and all(isinstance(a, str) for a in arguments):
            return one_line(" ".join(arguments))
        return ""
    if not isinstance(arguments, dict):
        return ""
    for key in _SUMMARY_KEYS:
        value = arguments.get(key)
        if isinstance(value, (str, list)) and value:
            return summarize(value)
    todos = arguments.get("todos")
    if isinstance(todos, list):
        return f"{len(todos)} items"
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return one_line(value)
    return ""


def _plan_status(value: object) -> str | None:
    """An item status from any agent's plan vocabulary; None drops the entry."""
    text = str(value or "pending").strip().lower().replace("-", "_").replace(" ", "_")
    text = text.removeprefix("todo_status_")
    if text in ("completed", "complete", "done"):
        return "completed"
    if text in ("in_progress", "active", "running", "started"):
        return "in_progress"
    if text in ("cancelled", "canceled", "abandoned", "removed"):
        return None
    return "pending"


def plan_entries(raw: object, *, text_keys: tuple[str, ...] = ("content", "step", "text",
                                                             "description")) -> list[dict] | None:
    """[{"content", "status"}] from an agent's plan list; None when it is not one."""
    if not isinstance(raw, list):
        return None
    entries = []
    for entry in raw:
        if not isinstance(entry, dict):
            return None
        content = next((entry[k] for k in text_keys if isinstance(entry.get(k), str)), None)
        if content is None or not content.strip():
            continue
        if "completed" in entry and "status" not in entry:
            status: str | None = "completed" if entry.get("completed") is True else "pending"
        else:
            status = _plan_status(entry.get("status"))
        if status is not None:
            entries.append({"content": " ".join(content.split()), "status": status})
    return entries


@dataclass
class OutputReader:
    """Turns stdout lines into items; one reader per agent invocation."""

    structured: bool = False  # a known JSON event was seen
    saw_text: bool = False
    _partial: str = ""  # Gemini's assistant deltas, until a line is complete
    _noted: set[str] = field(default_factory=set)  # Codex items already announced

    def feed(self, line: str) -> list[Item]:
        event = _json_object(line)
        if event is not None:
            items = self._event(event)
            if items is not None:
                self.structured = True
                return items
            if self.structured:
                return []  # an event of a kind this version does not know
        return self._text(line) if not self.structured or line.strip() else []

    def finish(self) -> list[Item]:
        """Whatever is still buffered when the agent's output ends."""
        return self._flush_partial(final=True)

    # --- helpers --------------------------------------------------------------------

    def _text(self, text: str) -> list[Item]:
        lines = text.split("\n")
        if lines and any(line.strip() for line in lines):
            self.saw_text = True
        return [Text(line) for line in lines]

    def _flush_partial(self, *, final: bool) -> list[Item]:
        if "\n" not in self._partial and not final:
            return []
        *complete, rest = self._partial.split("\n")
        if final and rest:
            complete.append(rest)
            rest = ""
        self._partial = rest
        return self._text("\n".join(complete)) if complete else []

    def _tool(self, name: object, arguments: object) -> list[Item]:
        label = name if isinstance(name, str) and name else "tool"
        items: list[Item] = [Tool(one_line(label, 40), summarize(arguments))]
        if label.lower().replace("_", "") in {t.replace("_", "") for t in _PLAN_TOOLS}:
            todos = None
            if isinstance(arguments, dict):
                todos = arguments.get("todos", arguments.get("plan"))
            entries = plan_entries(todos)
            if entries is not None:
                items.append(Plan(entries))
        return items

    # --- dialects -------------------------------------------------------------------

    def _event(self, event: dict) -> list[Item] | None:
        """Items for a known event; None when the object is no event this knows."""
        kind = event.get("type")
        if isinstance(kind, str):
            if kind in ("assistant", "user", "system", "result", "stream_event"):
                return self._claude(kind, event)
            codex_error = kind == "error" and "message" in event and "timestamp" not in event
            if kind.startswith(("item.", "thread.", "turn.")) or codex_error:
                return self._codex(kind, event)
            if kind in ("init", "message", "tool_use", "tool_result", "error"):
                return self._gemini(kind, event)
            if kind == "tool_call":
                return self._cursor_tool(event)
            return None
        msg = event.get("msg")
        if isinstance(msg, dict) and isinstance(msg.get("type"), str):
            return self._codex_legacy(msg)
        return None

    def _claude(self, kind: str, event: dict) -> list[Item] | None:
        if kind == "assistant":
            message = event.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                return self._text(content)
            if not isinstance(content, list):
                return None
            items: list[Item] = []
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    items.extend(self._text(block["text"]))
                elif block.get("type") == "tool_use":
                    items.extend(self._tool(block.get("name"), block.get("input")))
            return items
        if kind == "result":
            items = []
            # The result repeats the last assistant message: shown only if nothing was.
            if not self.saw_text and isinstance(event.get("result"), str):
                items.extend(self._text(event["result"]))
            subtype = event.get("subtype")
            failed = isinstance(subtype, str) and subtype.startswith("error")
            if event.get("is_error") is True or failed:
                what = one_line(subtype or "error", 60)
                items.append(Notice(f"the agent reported an error ({what})"))
            return items
        return []  # system (init), user (tool results), partial stream events

    def _cursor_tool(self, event: dict) -> list[Item]:
        if event.get("subtype") != "started":
            return []
        call = event.get("tool_call")
        if not isinstance(call, dict) or not call:
            return [Tool("tool")]
        key, body = next(iter(call.items()))
        name = str(key).removesuffix("ToolCall").removesuffix("_tool_call") or "tool"
        arguments = body.get("args") if isinstance(body, dict) else None
        return self._tool(name, arguments)

    def _gemini(self, kind: str, event: dict) -> list[Item] | None:
        if kind == "message":
            if event.get("role") != "assistant":
                return []
            content = event.get("content")
            if not isinstance(content, str):
                return []
            if event.get("delta") is True:
                self._partial += content
                return self._flush_partial(final=False)
            return self._flush_partial(final=True) + self._text(content)
        if kind == "tool_use":
            name = event.get("tool_name")
            if name is None:
                return None
            return self._flush_partial(final=True) + self._tool(name, event.get("parameters"))
        if kind == "error":
            return [Notice(one_line(event.get("message") or "error"))]
        return self._flush_partial(final=True) if kind == "result" else []

    def _codex(self, kind: str, event: dict) -> list[Item] | None:
        if kind == "error":
            return [Notice(one_line(event.get("message") or "error"))]
        if kind == "turn.failed":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else None
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
            return self._text(item["text"])
        if item_type == "todo_list":
            entries = plan_entries(item.get("items"))
            return [Plan(entries)] if entries is not None else []
        if item_type == "error":
            return [Notice(one_line(item.get("message") or "error"))]
        if item_type in ("command_execution", "file_change", "mcp_tool_call", "web_search"):
            if item_id and item_id in self._noted:
                return []
            if item_id:
                self._noted.add(item_id)
            if item_type == "command_execution":
                return [Tool("command", summarize(item.get("command")))]
            if item_type == "file_change":
                changes = item.get("changes") if isinstance(item.get("changes"), list) else []
                shown = ", ".join(
                    f"{c.get('kind', 'update')} {c.get('path', '?')}"
                    for c in changes
                    if isinstance(c, dict)
                )
                return [Tool("file_change", one_line(shown))]
            if item_type == "mcp_tool_call":
                name = f"{item.get('server', 'mcp')}.{item.get('tool', 'tool')}"
                return [Tool(one_line(name, 40), summarize(item.get("arguments")))]
            return [Tool("web_search", summarize(item.get("query")))]
        return []  # reasoning and kinds this version does not know

    def _codex_legacy(self, msg: dict) -> list[Item]:
        kind = msg["type"]
        if kind == "agent_message" and isinstance(msg.get("message"), str):
            return self._text(msg["message"])
        if kind == "exec_command_begin":
            return [Tool("command", summarize(msg.get("command")))]
        if kind == "patch_apply_begin":
            changes = msg.get("changes")
            paths = one_line(", ".join(changes)) if isinstance(changes, dict) else ""
            return [Tool("apply_patch", paths)]
        if kind == "mcp_tool_call_begin":
            call = msg.get("invocation") if isinstance(msg.get("invocation"), dict) else {}
            name = f"{call.get('server', 'mcp')}.{call.get('tool', 'tool')}"
            return [Tool(one_line(name, 40), summarize(call.get("arguments")))]
        if kind == "plan_update":
            entries = plan_entries(msg.get("plan"))
            return [Plan(entries)] if entries is not None else []
        if kind in ("error", "stream_error"):
            return [Notice(one_line(msg.get("message") or "error"))]
        return []


def _json_object(line: str) -> dict | None:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value: Any = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
