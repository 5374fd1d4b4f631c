"""Gemini CLI: `gemini --output-format stream-json -p PROMPT`.

Its stream-json events: `message` (assistant text, possibly in deltas), `tool_use`
(write_todos is its plan), `tool_result`, `error`.
"""

from __future__ import annotations

from aidp.agent import events

NAME = "gemini"
PRESET = "gemini --output-format stream-json -p {prompt}"

# `result` is Claude Code's kind too, and is read there; the buffered partial line
# is flushed when the output ends.
_KINDS = ("init", "message", "tool_use", "tool_result", "error")


def read(reader: events.OutputReader, event: dict) -> list[events.Item] | None:
    kind = event.get("type")
    if kind not in _KINDS:
        return None
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
        if name is None:
            return None
        return reader.flush_partial(final=True) + reader.tool(name, event.get("parameters"))
    if kind == "error":
        return [events.Notice(events.one_line(event.get("message") or "error"))]
    return []
