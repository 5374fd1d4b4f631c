"""The agent adapters: one module per agent CLI, each an `Adapter` (aidp.agent.agents.base),
and this registry of them.

Adding an agent: its module here (a subclass of `Adapter`), one row in `_CLASSES`, and
its row in the real-agent suite (tests/agents/). Nothing else names an agent: the run
loop, `aidp hook`, `aidp setup`, `aidp agents` and the MCP handover ask the adapter.

An adapter's module is loaded when it is first asked for: `get(name)` loads that one
agent's (an `aidp hook claude Stop` loads Claude's, not the six others' and their
patterns), `load(name)` likewise, and `adapters()`, `reading()`, `hooked()` and
`plan_tools()` load the ones they return (docs/architecture.md, "Start-up").
"""

from __future__ import annotations

from functools import cache
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


def load(name: str) -> Adapter:
    """The adapter of a registered agent name (KeyError for another name); only its own
    module is loaded."""
    found = _loaded.get(name)
    if found is None:
        module, cls = _CLASSES[name]
        found = _loaded[name] = getattr(import_module(f"aidp.agent.agents.{module}"), cls)()
    return found


def adapters() -> tuple[Adapter, ...]:
    """Every adapter, in the registry's order (all of them loaded)."""
    return tuple(map(load, NAMES))


def reading() -> tuple[Adapter, ...]:
    """Every adapter, in the order their event readers are asked."""
    return tuple(map(load, _READING_ORDER))


def hooked() -> tuple[Adapter, ...]:
    """The adapters of the agents `aidp hook` and `aidp setup` serve, in their order."""
    return tuple(map(load, HOOKED_NAMES))


@cache
def plan_tools() -> frozenset[str]:
    """The plan tools of every agent, and aidp's own."""
    return frozenset({tool for a in adapters() for tool in a.plan_tools} | {AIDP_PLAN_TOOL})


def get(name: str) -> Adapter | None:
    """The adapter of a preset name (case and spaces around it do not matter); only its
    own module is loaded."""
    key = name.strip().lower()
    return load(key) if key in _CLASSES else None


def for_command(preset: str | None, program: str) -> Adapter | None:
    """The adapter behind a preset, or behind a command line whose program is one of the
    agent CLIs (`/usr/local/bin/aider …` → aider): what aidp knows about that CLI (its
    own files, its text lines) holds for a command line of your own too."""
    if preset is not None and preset in _CLASSES:
        return load(preset)
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    for adapter in adapters():
        if name in (adapter.name, adapter.program):
            return adapter
    return None


def output_reader(adapter: Adapter | None = None) -> OutputReader:
    """A reader for one invocation: every adapter's event dialect, and the text lines of
    `adapter` (the program run, when it is a known CLI)."""
    from aidp.agent.events import OutputReader

    return OutputReader(dialects=reading(), own=adapter, plan_tools=plan_tools())
