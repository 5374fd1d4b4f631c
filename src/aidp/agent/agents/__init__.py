"""The agent adapters: one module per agent CLI, each an `Adapter` (aidp.agent.agents.base),
and this registry of them.

Adding an agent: its module here (a subclass of `Adapter`), one line in `ADAPTERS`, and
its row in the real-agent suite (tests/agents/). Nothing else names an agent: the run
loop, `aidp hook`, `aidp setup`, `aidp agents` and the MCP handover ask the adapter.
"""

from __future__ import annotations

from aidp.agent.agents.aider import Aider
from aidp.agent.agents.base import Adapter
from aidp.agent.agents.claude import Claude
from aidp.agent.agents.codex import Codex
from aidp.agent.agents.copilot import Copilot
from aidp.agent.agents.cursor import Cursor
from aidp.agent.agents.gemini import Gemini
from aidp.agent.agents.opencode import Opencode
from aidp.agent.events import OutputReader

# The registry, in the order of `--agent` help, the presets table and `aidp agents`.
ADAPTERS: tuple[Adapter, ...] = (
    Claude(), Codex(), Gemini(), Aider(), Cursor(), Copilot(), Opencode(),
)
# The order in which event readers are asked: the first that knows an event answers
# (Claude Code's `result` before Gemini's and Copilot's, …).
_READING_ORDER = ("claude", "codex", "gemini", "cursor", "opencode", "copilot", "aider")
# aidp's own plan tool (`aidp mcp`'s todo_write), read as a plan in any agent's output.
AIDP_PLAN_TOOL = "todo_write"

BY_NAME: dict[str, Adapter] = {adapter.name: adapter for adapter in ADAPTERS}
assert sorted(_READING_ORDER) == sorted(BY_NAME), "every adapter has a place to read"
READING: tuple[Adapter, ...] = tuple(BY_NAME[name] for name in _READING_ORDER)
# The agents `aidp hook` and `aidp setup` serve (those with hooks), in the order their
# messages and help name them.
_HOOKED_ORDER = ("claude", "gemini", "codex")
assert sorted(_HOOKED_ORDER) == sorted(a.name for a in ADAPTERS if a.hooks is not None)
HOOKED: tuple[Adapter, ...] = tuple(BY_NAME[name] for name in _HOOKED_ORDER)
PLAN_TOOLS: frozenset[str] = frozenset(
    {tool for adapter in ADAPTERS for tool in adapter.plan_tools} | {AIDP_PLAN_TOOL})


def get(name: str) -> Adapter | None:
    """The adapter of a preset name (case and spaces around it do not matter)."""
    return BY_NAME.get(name.strip().lower())


def for_command(preset: str | None, program: str) -> Adapter | None:
    """The adapter behind a preset, or behind a command line whose program is one of the
    agent CLIs (`/usr/local/bin/aider …` → aider): what aidp knows about that CLI (its
    own files, its text lines) holds for a command line of your own too."""
    if preset is not None and preset in BY_NAME:
        return BY_NAME[preset]
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    for adapter in ADAPTERS:
        if name in (adapter.name, adapter.program):
            return adapter
    return None


def output_reader(adapter: Adapter | None = None) -> OutputReader:
    """A reader for one invocation: every adapter's event dialect, and the text lines of
    `adapter` (the program run, when it is a known CLI)."""
    return OutputReader(dialects=READING, own=adapter, plan_tools=PLAN_TOOLS)
