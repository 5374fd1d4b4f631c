"""Claude Code: `claude -p --output-format stream-json --verbose`, prompt on stdin.

Its stream-json events: `assistant` messages with `text` and `tool_use` blocks
(TodoWrite is its plan), `user` messages (tool results), `system` and `result`.
"""

from __future__ import annotations

from aidp.agent import events

NAME = "claude"
PRESET = "claude -p --output-format stream-json --verbose"

_KINDS = ("assistant", "user", "system", "result", "stream_event")


def read(reader: events.OutputReader, event: dict) -> list[events.Item] | None:
    kind = event.get("type")
    if kind not in _KINDS:
        return None
    if kind == "assistant":
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
                items.extend(reader.tool(block.get("name"), block.get("input")))
        return items
    if kind == "result":
        items = []
        # The result repeats the last assistant message: shown only if nothing was.
        if not reader.saw_text and isinstance(event.get("result"), str):
            items.extend(reader.text(event["result"]))
        subtype = event.get("subtype")
        failed = isinstance(subtype, str) and subtype.startswith("error")
        if event.get("is_error") is True or failed:
            what = events.one_line(subtype or "error", 60)
            items.append(events.Notice(f"the agent reported an error ({what})"))
        return items
    return []  # system (init), user (tool results), partial stream events
