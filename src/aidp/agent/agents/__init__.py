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
from typing import TYPE_CHECKING

from aidp.agent.agents import aider, claude, codex, copilot, cursor, gemini, opencode

if TYPE_CHECKING:
    from aidp.agent.events import Item, OutputReader

# The order of `--agent` help and of the presets table.
MODULES: tuple[ModuleType, ...] = (claude, codex, gemini, aider, cursor, copilot, opencode)
BY_NAME: dict[str, ModuleType] = {module.NAME: module for module in MODULES}

Reader = Callable[["OutputReader", dict], "list[Item] | None"]
# The order in which event readers are asked: the first that knows an event answers.
READERS: tuple[Reader, ...] = tuple(
    module.read for module in (claude, codex, gemini, cursor, opencode, copilot, aider)
    if hasattr(module, "read")
)
