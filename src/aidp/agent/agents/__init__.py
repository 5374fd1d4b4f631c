"""The agent adapters: one module per agent CLI, each an `Adapter` (aidp.agent.agents.base),
and this registry of them.

Adding an agent: its module here (a subclass of `Adapter`), one row in `_CLASSES`, and
its row in the real-agent suite (tests/agents/). Nothing else names an agent: the run
loop, `aidp hook`, `aidp setup`, `aidp agents` and the MCP handover ask the adapter.

An adapter's module is loaded when it is first asked for: `get(name)` loads that one
agent's (an `aidp hook claude Stop` loads Claude's, not the six others' and their
patterns), and the first use of `ADAPTERS`, `BY_NAME`, `READING`, `HOOKED` or
`PLAN_TOOLS` loads them all (docs/architecture.md, "Start-up").
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aidp.agent.agents.base import Adapter
    from aidp.agent.events import OutputReader

# The registry, in the order of `--agent` help, the presets table and `aidp agents`:
# each agent's name, and its module of aidp.agent.agents and class there.
_CLASSES = {
    "claude": ("claude", "Claude"), "codex": ("codex", "Codex"),
    "gemini": ("gemini", "Gemini"), "aider": ("aider", "Aider"),
    "cursor": ("cursor", "Cursor"), "copilot": ("copilot", "Copilot"),
    "opencode": ("opencode", "Opencode"),
}
NAMES: tuple[str, ...] = tuple(_CLASSES)
# The order in which event readers are asked: the first that knows an event answers
# (Claude Code's `result` before Gemini's and Copilot's, …).
_READING_ORDER = ("claude", "codex", "gemini", "cursor", "opencode", "copilot", "aider")
assert sorted(_READING_ORDER) == sorted(NAMES), "every adapter has a place to read"
# The agents `aidp hook` and `aidp setup` serve (those with hooks), in the order their
# messages and help name them, and the hook events of each (event name → what aidp does:
# start, prompt, plan, stop): each of those adapters' `hooks` takes its row, and `aidp
# hook`'s help reads them here without loading the adapters.
HOOK_EVENTS: dict[str, dict[str, str]] = {
    "claude": {"SessionStart": "start", "UserPromptSubmit": "prompt", "PostToolUse": "plan",
               "Stop": "stop"},
    "gemini": {"SessionStart": "start", "BeforeAgent": "prompt", "AfterTool": "plan",
               "AfterAgent": "stop"},
    "codex": {"SessionStart": "start", "UserPromptSubmit": "prompt", "PostToolUse": "plan",
              "Stop": "stop"},
}
HOOKED_NAMES: tuple[str, ...] = tuple(HOOK_EVENTS)
# aidp's own plan tool (`aidp mcp`'s todo_write), read as a plan in any agent's output.
AIDP_PLAN_TOOL = "todo_write"

_loaded: dict[str, Adapter] = {}

if TYPE_CHECKING:  # made by __getattr__ at their first use: every adapter loaded
    ADAPTERS: tuple[Adapter, ...]
    BY_NAME: dict[str, Adapter]
    READING: tuple[Adapter, ...]
    HOOKED: tuple[Adapter, ...]
    PLAN_TOOLS: frozenset[str]


def _load(name: str) -> Adapter:
    found = _loaded.get(name)
    if found is None:
        module, cls = _CLASSES[name]
        found = _loaded[name] = getattr(import_module(f"aidp.agent.agents.{module}"), cls)()
    return found


def _plan_tools() -> frozenset[str]:
    return frozenset({tool for n in NAMES for tool in _load(n).plan_tools} | {AIDP_PLAN_TOOL})


def __getattr__(name: str) -> object:
    """The registry's tables, made (every adapter loaded) at their first use."""
    if name not in ("ADAPTERS", "BY_NAME", "READING", "HOOKED", "PLAN_TOOLS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    adapters = tuple(_load(n) for n in NAMES)
    assert sorted(HOOKED_NAMES) == sorted(a.name for a in adapters if a.hooks is not None)
    tables = {
        "ADAPTERS": adapters,
        "BY_NAME": {adapter.name: adapter for adapter in adapters},
        "READING": tuple(_load(n) for n in _READING_ORDER),
        "HOOKED": tuple(_load(n) for n in HOOKED_NAMES),
        "PLAN_TOOLS": _plan_tools(),
    }
    globals().update(tables)  # made once: later uses find them as plain names
    return tables[name]


def get(name: str) -> Adapter | None:
    """The adapter of a preset name (case and spaces around it do not matter); only its
    own module is loaded."""
    key = name.strip().lower()
    return _load(key) if key in _CLASSES else None


def for_command(preset: str | None, program: str) -> Adapter | None:
    """The adapter behind a preset, or behind a command line whose program is one of the
    agent CLIs (`/usr/local/bin/aider …` → aider): what aidp knows about that CLI (its
    own files, its text lines) holds for a command line of your own too."""
    if preset is not None and preset in _CLASSES:
        return _load(preset)
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    for adapter in map(_load, NAMES):
        if name in (adapter.name, adapter.program):
            return adapter
    return None


def output_reader(adapter: Adapter | None = None) -> OutputReader:
    """A reader for one invocation: every adapter's event dialect, and the text lines of
    `adapter` (the program run, when it is a known CLI)."""
    from aidp.agent.events import OutputReader

    return OutputReader(dialects=tuple(map(_load, _READING_ORDER)), own=adapter,
                        plan_tools=_plan_tools())
