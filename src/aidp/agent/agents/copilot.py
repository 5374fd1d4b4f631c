"""GitHub Copilot CLI: `copilot --output-format json -s --allow-tool=shell(aidp) --prompt=PROMPT`.

Its `--output-format json` events (JSON Lines), the ones read here:
`assistant.message` (`data.content`: the assistant's words), `tool.execution_start`
(`data.toolName`, `data.arguments`), `session.todos_changed`, `model.call_failure`
(`data.statusCode`), `session.info` (`infoType: "model_retry"`), `session.error`, and
`result` (`sessionId`, `exitCode`). Deltas and bookkeeping events are skipped.

Its plan: Copilot has no plan tool. It keeps its TODO list as rows of a `todos` table
(id, title, status pending/in_progress/done/blocked) in its session's SQLite database,
written with its `sql` tool, and says `session.todos_changed` when it did. The
database is `$COPILOT_HOME/session-state/<sessionId>/session.db` (COPILOT_HOME defaults
to ~/.copilot), and the session id is only told at the end, in `result`: so after an
invocation that changed its todos, aidp reads that table (read-only) and the TODO
list follows it — once per invocation, not live.

The preset, checked against Copilot CLI 1.0.102:

- `--output-format json`: in text mode Copilot prints each tool call and its command
  on stdout (`● Run echo 'File task: "x"' (shell)`), where it cannot be told from the
  reply; in JSON the reply and the tool calls are separate events. (`-s` keeps its
  text mode to the reply alone, and its usage summary off.) A text-mode command line
  of your own is read with Copilot's tool-call lines (`●`, `│`, `└`) taken as tool
  notes, never as signals.
- `--allow-tool=shell(aidp)`: Copilot denies the shell without a person to ask; this
  allows `aidp …` commands only.
- `--prompt=PROMPT` in one argument, so a prompt starting with `-` is the prompt.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidp.agent import events
from aidp.agent.agents.base import Adapter, Given, McpServer

if TYPE_CHECKING:
    from collections.abc import Callable

NAME = "copilot"

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Text mode: a tool call is `● Title (tool)`, its details `│ …` / `└ …` below it.
_TOOL_LINE = re.compile(r"^\s*[●✓✗]\s")
_DETAIL_LINE = re.compile(r"^\s*[│└├]\s?")
_STATUS = {"done": "completed", "in_progress": "in_progress", "pending": "pending",
           "blocked": "pending"}


def _read(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item] | None:
    kind = event.get("type")
    if not isinstance(kind, str):
        return None
    data = event["data"] if isinstance(event.get("data"), dict) else {}
    if kind == "result" and "exitCode" in event:
        return _result(reader, event)
    if "." not in kind or "data" not in event or "subtype" in event:
        return None
    if kind == "assistant.message":
        content = data.get("content")
        return reader.text(content) if isinstance(content, str) and content else []
    if kind == "tool.execution_start":
        name = str(data.get("toolName") or "tool")
        return [events.Tool(events.one_line(name, 40),
                            events.summarize(data.get("arguments"), tool=name))]
    if kind == "session.todos_changed":
        reader.scratch[NAME] = True
        return []
    if kind == "model.call_failure":
        status = data.get("statusCode")
        attempt = data.get("retryAttempt")
        what = f"HTTP {status}" if status is not None else "an error"
        after = f" (attempt {attempt + 1})" if isinstance(attempt, int) else ""
        return [events.Notice(f"the model API answered {what}{after}")]
    if kind == "session.info" and data.get("infoType") == "model_retry":
        return [events.Notice(events.one_line(data.get("message") or "retrying"))]
    if kind == "session.error":
        message = events.one_line(data.get("message") or data.get("errorType") or "error", 200)
        return [events.Notice(f"the agent reported an error: {message}")]
    return []


def _read_text(reader: events.OutputReader, line: str) -> list[events.Item] | None:
    """Copilot's text mode: its tool-call lines become tool notes, never text (so a
    signal inside a command it ran is not read); None for the reply's own lines."""
    if _TOOL_LINE.match(line):
        reader.scratch["copilot-text-tool"] = True
        return [events.Tool("copilot", events.one_line(_TOOL_LINE.sub("", line)))]
    if reader.scratch.get("copilot-text-tool") and _DETAIL_LINE.match(line):
        return []
    reader.scratch["copilot-text-tool"] = False
    return None


def _result(reader: events.OutputReader, event: dict[str, Any]) -> list[events.Item]:
    if not reader.scratch.get(NAME):
        return []
    session = event.get("sessionId")
    if not isinstance(session, str) or not _SESSION_ID.fullmatch(session):
        return []
    home = os.environ.get("COPILOT_HOME") or str(Path.home() / ".copilot")
    rows = read_todos(Path(home) / "session-state" / session / "session.db")
    if rows is None:
        return [events.Notice("its TODO list changed, but its session database could not "
                              "be read")]
    plan = events.read_plan([{"content": title, "status": _STATUS.get(status, "pending")}
                             for title, status in rows])
    return [plan] if plan is not None else []


def read_todos(path: Path) -> list[tuple[str, str]] | None:
    """(title, status) of each row of Copilot's `todos` table, oldest first; None when
    the database or the table cannot be read."""
    import sqlite3

    if not path.is_file():
        return None
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return None
    try:
        rows = connection.execute(
            "SELECT title, status FROM todos ORDER BY created_at, rowid").fetchall()
    except sqlite3.Error:
        return None
    finally:
        connection.close()
    return [(str(title), str(status)) for title, status in rows if isinstance(title, str)]


class Copilot(Adapter):
    name = NAME
    title = "GitHub Copilot CLI"
    preset = "copilot --output-format json -s --allow-tool=shell(aidp) --prompt={prompt}"

    def read_event(self, reader: events.OutputReader, event: dict[str, Any]
                   ) -> list[events.Item] | None:
        return _read(reader, event)

    def read_text(self, reader: events.OutputReader, line: str) -> list[events.Item] | None:
        return _read_text(reader, line)

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """`--additional-mcp-config=JSON` (added to the user's servers for this session) and
        `--allow-tool=aidp` (every tool of that server, without a person to ask)."""
        import json

        config = {"mcpServers": {server.name: {"type": "local", **server.stdio(), "tools": ["*"]}}}
        return [argv[0], f"--additional-mcp-config={json.dumps(config)}",
                f"--allow-tool={server.name}", *argv[1:]], {}
