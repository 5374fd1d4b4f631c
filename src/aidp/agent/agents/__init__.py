"""What aidp knows about each agent CLI, one module per agent.

Each module holds, for its CLI:

- `NAME` and `PRESET`: the preset's command line (`aidp run --agent NAME`);
- `read(reader, event)` (agents that print JSON events): the items one event means
  (text, tool calls, the agent's plan, notices), or None when the event is not of its
  dialect. Events are told apart by their shape, not by the preset, so a custom
  command line of the same CLI is read the same way.

The loop talks only to `aidp.agent.presets` (choosing) and `aidp.agent.events`
(reading); adding an agent is one module here plus its row in tests/agents/.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from aidp.agent.agents import aider, claude, codex, copilot, cursor, gemini, opencode

if TYPE_CHECKING:
    from aidp.agent.events import Item, OutputReader

# The order of `--agent` help and of the presets table.
MODULES: tuple[ModuleType, ...] = (claude, codex, gemini, aider, cursor, copilot, opencode)
BY_NAME: dict[str, ModuleType] = {module.NAME: module for module in MODULES}

Reader = Callable[["OutputReader", dict[str, Any]], "list[Item] | None"]
# The order in which event readers are asked: the first that knows an event answers.
READERS: tuple[Reader, ...] = tuple(
    module.read for module in (claude, codex, gemini, cursor, opencode, copilot, aider)
    if hasattr(module, "read")
)


def module_for(preset: str | None, program: str) -> ModuleType | None:
    """The agent module behind a preset, or behind a command line whose program is one
    of the agent CLIs (`/usr/local/bin/aider …` → aider): what aidp knows about that CLI
    (its own files, its text lines) holds for a command line of your own too."""
    if preset is not None and preset in BY_NAME:
        return BY_NAME[preset]
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    for module in MODULES:
        if name in (module.NAME, module.PRESET.split()[0]):
            return module
    return None
