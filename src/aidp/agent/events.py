"""Reading an agent's stdout: plain text, or JSON events, told apart line by line.

A line that is a JSON object of a known event dialect is read as an event; anything
else is text. The dialects live with their agents' adapters (aidp.agent.agents, which
builds readers: `output_reader`); this module holds what they share: the items, the
reader's state and the plan/tool helpers. It imports no adapter.

Events only ever become values here (text, notes, plans); nothing in them is run.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from aidp.core.plain import Plain
from aidp.views.render import counted

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

NOTE_WIDTH = 100
# Keys whose value says best what a tool call is about, in order of preference.
_SUMMARY_KEYS = (
    "command", "cmd", "file_path", "path", "notebook_path", "pattern", "url", "query",
    "subject", "description", "prompt",
)


class Text(Plain):
    """A line of the agent's own words: shown, and searched for signals."""

    __slots__ = _fields = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Tool(Plain):
    """A tool call the agent made: a one-line note; it counts as progress."""

    __slots__ = _fields = ("name", "summary")

    def __init__(self, name: str, summary: str = "") -> None:
        self.name = name
        self.summary = summary

    @property
    def note(self) -> str:
        return f"{self.name}: {self.summary}" if self.summary else self.name


class Plan(Plain):
    """The agent reported its own plan: [{"content", "status"}] with item statuses.

    `skipped` says why entries were left out (each bad entry is skipped alone);
    `knows_in_progress` is False for a plan that only says done or not done (Codex's
    todo_list), so an item the TODO list has in progress stays so."""

    __slots__ = _fields = ("entries", "skipped", "knows_in_progress")

    def __init__(self, entries: list[dict[str, Any]], skipped: list[str] | None = None,
                 knows_in_progress: bool = True) -> None:
        self.entries = entries
        self.skipped = [] if skipped is None else skipped
        self.knows_in_progress = knows_in_progress


class Notice(Plain):
    """Something the agent's CLI reported about itself (an error, how it stopped)."""

    __slots__ = _fields = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


Item = Text | Tool | Plan | Notice


def one_line(value: object, width: int = NOTE_WIDTH) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# aidp's own tools (`aidp mcp`) as each CLI names them in its output: Claude Code
# `mcp__aidp__T`, Codex `aidp.T` (server.tool; `mcp__aidp.T` to its model), Gemini CLI
# `mcp_aidp_T` (older: `aidp__T` or plain `T`), opencode `aidp_T`, Copilot CLI `aidp-T`.
# Compiled at the first use: the names load aidp.toolserver.tools, which a hook that
# reads no tool call (a session start, a stop) never needs.
@cache
def _aidp_tool() -> re.Pattern[str]:
    from aidp.toolserver.tools import TOOLS

    return re.compile(r"(?:mcp__aidp__|mcp__aidp\.|aidp\.|mcp_aidp_|aidp__|aidp_|aidp-)?"
                      rf"({'|'.join(map(re.escape, TOOLS))})")


def aidp_tool(name: object) -> str | None:
    """aidp's own tool (`todo_write`, `tasks_file`, …) behind a CLI's name for it."""
    found = _aidp_tool().fullmatch(name) if isinstance(name, str) else None
    return found.group(1) if found else None


def summarize(arguments: object, *, tool: object = None) -> str:
    """A few words about a tool call's arguments; `tool`, the name the call went to,
    when it is one of aidp's own (as the agent's CLI names it), says which words."""
    own = aidp_tool(tool)
    if own is not None:
        return _summarize_aidp(own, arguments)
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
        return counted(len(todos), "item")
    for value in arguments.values():
        if isinstance(value, str) and value.strip():
            return one_line(value)
    return ""


def _summarize_aidp(tool: str, arguments: object) -> str:
    """The note for a call of aidp's tool `tool`: what it plans, files, changes, asks."""
    if isinstance(arguments, str) and arguments.lstrip().startswith("{"):
        try:  # some CLIs report a call's arguments as the JSON text the model wrote
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            pass
    if not isinstance(arguments, dict):
        return summarize(arguments)
    args = {k: v for k, v in arguments.items() if isinstance(v, (str, int, list))}
    if tool == "todo_write":
        items = args.get("items")
        return counted(len(items), "item") if isinstance(items, list) else ""
    if tool == "tasks_file":
        return one_line(args.get("description", ""))
    if tool == "tasks_update":
        change = " ".join(str(args[k]) for k in ("id", "status") if k in args)
        reason = args.get("reason")
        return one_line(f"{change}: {reason}" if reason else change)
    if tool == "tasks_claim":
        return one_line(args["id"]) if "id" in args else "the first ready task"
    if tool == "tasks_show":
        return one_line(args.get("id", ""))
    if tool == "todo_read":
        return ""
    asked = ("status", "tag", "limit") if tool == "tasks_list" else ("limit",)
    return one_line(", ".join(f"{k} {args[k]}" for k in asked if k in args))


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


TEXT_KEYS = ("content", "step", "text", "description", "subject", "title")


def read_plan(raw: object, *, text_keys: tuple[str, ...] = TEXT_KEYS,
              knows_in_progress: bool = True) -> Plan | None:
    """The Plan in an agent's plan list, entry by entry: an entry that is no object, has
    no text, or whose text aidp cannot keep (too long, control characters) is skipped
    with its reason. None when `raw` is no list, or when every entry was bad (a plan of
    nothing but bad entries never clears the TODO list; an empty list does)."""
    from aidp.core.errors import InvalidInput
    from aidp.core.model import validate_description

    if not isinstance(raw, list):
        return None
    entries: list[dict[str, Any]] = []
    skipped: list[str] = []
    for number, entry in enumerate(raw, start=1):
        if not isinstance(entry, dict):
            skipped.append(f"entry {number} is not an object")
            continue
        content = next((entry[k] for k in text_keys if isinstance(entry.get(k), str)), None)
        if content is None:
            skipped.append(f"entry {number} has no text")
            continue
        try:
            text = validate_description(" ".join(content.split()))
        except InvalidInput as exc:
            skipped.append(f"entry {number}: {exc}")
            continue
        if "completed" in entry and "status" not in entry:
            status: str | None = "completed" if entry.get("completed") is True else "pending"
        else:
            status = _plan_status(entry.get("status"))
        if status is not None:
            entries.append({"content": text, "status": status})
    if raw and skipped and len(skipped) == len(raw):
        return None
    return Plan(entries, skipped, knows_in_progress)


def plan_entries(raw: object, *,
                 text_keys: tuple[str, ...] = TEXT_KEYS) -> list[dict[str, Any]] | None:
    """[{"content", "status"}] from an agent's plan list; None when it is not one."""
    plan = read_plan(raw, text_keys=text_keys)
    return plan.entries if plan is not None else None


class Dialect(Protocol):
    """What the reader asks an agent's adapter (aidp.agent.agents.base.Adapter)."""

    def read_event(self, reader: OutputReader, event: dict[str, Any]) -> list[Item] | None:
        """Items for one event of this dialect; None: not of this dialect."""

    def read_text(self, reader: OutputReader, line: str) -> list[Item] | None:
        """Items for a text line of this agent's program; None: the line is text."""


def _tool_key(name: str) -> str:
    return name.lower().replace("_", "")


class OutputReader(Plain):
    """Turns stdout lines into items; one reader per agent invocation.

    `dialects` are asked in turn for each JSON event (the first that knows it answers);
    `own` (the adapter of the program run, if known) reads its plain text lines;
    `plan_tools` name the tools whose call is a plan, whichever agent makes it."""

    __slots__ = _fields = ("dialects", "own", "plan_tools", "structured", "saw_text",
                           "partial", "noted", "scratch", "failure")

    def __init__(self, dialects: Sequence[Dialect] = (), own: Dialect | None = None,
                 plan_tools: Collection[str] = (), structured: bool = False,
                 saw_text: bool = False, partial: str = "", noted: set[str] | None = None,
                 scratch: dict[str, Any] | None = None, failure: str | None = None) -> None:
        self.dialects = dialects
        self.own = own
        self.plan_tools = plan_tools
        self.structured = structured  # a known JSON event was seen
        self.saw_text = saw_text
        self.partial = partial  # Gemini's assistant deltas, until a line is complete
        self.noted = set() if noted is None else noted  # Codex items already announced
        self.scratch = {} if scratch is None else scratch  # per-agent reader state
        # Why the invocation failed although the agent may exit 0 (aider after an API
        # error); a reader sets it, and clears it when the agent recovered.
        self.failure = failure

    def feed(self, line: str) -> list[Item]:
        event = _json_object(line)
        if event is not None:
            items = self._event(event)
            if items is not None:
                self.structured = True
                return items
            if self.structured:
                return []  # an event of a kind this version does not know
        if self.structured and not line.strip():
            return []
        if self.own is not None:
            items = self.own.read_text(self, line)
            if items is not None:
                return items
        return self.text(line)

    def finish(self) -> list[Item]:
        """Whatever is still buffered when the agent's output ends."""
        return self.flush_partial(final=True)

    # --- helpers the agent modules' readers use --------------------------------------

    def text(self, text: str) -> list[Item]:
        lines = text.split("\n")
        if lines and any(line.strip() for line in lines):
            self.saw_text = True
        return [Text(line) for line in lines]

    def flush_partial(self, *, final: bool) -> list[Item]:
        if "\n" not in self.partial and not final:
            return []
        *complete, rest = self.partial.split("\n")
        if final and rest:
            complete.append(rest)
            rest = ""
        self.partial = rest
        return self.text("\n".join(complete)) if complete else []

    def tool(self, name: object, arguments: object) -> list[Item]:
        label = name if isinstance(name, str) and name else "tool"
        items: list[Item] = [Tool(one_line(label, 40), summarize(arguments, tool=label))]
        if _tool_key(label) in {_tool_key(t) for t in self.plan_tools}:
            todos = None
            if isinstance(arguments, dict):
                todos = arguments.get("todos", arguments.get("plan"))
            plan = read_plan(todos)
            if plan is not None:
                items.append(plan)
        return items

    # --- dialects -------------------------------------------------------------------

    def _event(self, event: dict[str, Any]) -> list[Item] | None:
        """Items for a known event; None when the object is no event this knows."""
        for dialect in self.dialects:
            items = dialect.read_event(self, event)
            if items is not None:
                return items
        return None


def _json_object(line: str) -> dict[str, Any] | None:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        value: Any = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
