"""The interface every agent adapter implements: what aidp knows about one agent CLI.

One subclass of `Adapter` per CLI, one instance of it in the registry
(aidp.agent.agents.adapters()). The run loop, `aidp hook`, `aidp setup`, `aidp agents` and
the MCP handover ask the adapter; none of them names an agent:

- its preset and environment (`name`, `preset`, `env`), and the files it writes for
  itself (`own_files`, never counted as progress);
- its readers: `read_event` for one JSON event of its dialect, `read_text` for a plain
  text line of its own program (both None: not mine);
- its plan tools (`plan_tools`), read by the output reader and matched by its hooks;
- its hooks (`hooks`: the events aidp answers, how a stop is refused) and what it does
  with a hook's plan call (`hook_plan`) or a session start (`export_session`);
- the files `aidp setup` writes for it (`setup`: hook settings, instructions, MCP);
- how `aidp run` hands it an MCP server for one run (`hand_mcp`);
- whether `aidp agents` may ask its program for `--version` (`version_from_cli`), and
  the variables that keep that quiet (`quiet_env`).

This module imports nothing of the agents or of the layers that use them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from aidp.core.plain import Plain

if TYPE_CHECKING:
    from aidp.agent.events import Item, OutputReader

# What aidp does for each of an agent's hook events (its own event names map to these).
HOOK_KINDS = ("start", "prompt", "plan", "stop")

# The aidp commands an agent's work needs, and all that a preset lets the agent run
# without a person to ask (each CLI's allow rules are made from these: docs/security.md).
# Never `aidp trust`, `setup`, `run`, `mcp`, `hook`, `init` or `sync`; never a command
# that reads or writes a file it is given (`report`, `tasks import|export|textconv`), nor
# the maintenance that rewrites the tasklist (`tasks repair|compact`).
AGENT_TASKS_COMMANDS = ("list", "show", "ready", "blocked", "add", "claim", "release",
                        "start", "done", "abandon", "reopen", "note", "edit", "block",
                        "unblock")
AGENT_COMMANDS = ("aidp prime", "aidp todo",
                  *(f"aidp tasks {command}" for command in AGENT_TASKS_COMMANDS))


class McpServer(Plain):
    """The `aidp mcp` server of one run, as an agent's MCP configuration names it."""

    __slots__ = _fields = ("command", "args", "env", "tools", "name")

    def __init__(self, command: str, args: tuple[str, ...], env: tuple[tuple[str, str], ...],
                 tools: tuple[str, ...], name: str = "aidp") -> None:
        self.command = command
        self.args = args
        self.env = env
        self.tools = tools
        self.name = name

    def stdio(self) -> dict[str, Any]:
        """{"command", "args", "env"}: the shape every CLI's JSON config shares."""
        return {"command": self.command, "args": list(self.args), "env": dict(self.env)}


# (argv, environment additions) of a run given aidp's MCP server; None: not given.
Given = tuple[list[str], dict[str, str]]


class Hooks(Plain):
    """The agent's hooks that run `aidp hook NAME EVENT`.

    `events`: its event name → what aidp does (start, prompt, plan, stop).
    `block_decision`: the `decision` that refuses a stop. `trusts_stop_hook_active`:
    its `stop_hook_active: false` reliably says a stop does not follow one of aidp's
    refusals. `final_reply`: the payload key holding the turn's last reply."""

    __slots__ = _fields = ("events", "block_decision", "trusts_stop_hook_active",
                           "final_reply")

    def __init__(self, events: Mapping[str, str], block_decision: str = "block",
                 trusts_stop_hook_active: bool = False,
                 final_reply: str = "last_assistant_message") -> None:
        if sorted(events.values()) != sorted(HOOK_KINDS):
            raise ValueError(f"hook events must map once to each of {HOOK_KINDS}")
        self.events = events
        self.block_decision = block_decision
        self.trusts_stop_hook_active = trusts_stop_hook_active
        self.final_reply = final_reply

    def kind(self, event: str) -> str:
        return self.events[event]


class Setup(Plain):
    """The project files `aidp setup NAME` writes (paths relative to the project root).

    `hook_names`: event → the handler's `name` (Gemini names hooks, so that
    `hooksConfig.disabled` can turn off one). `mcp_entry`: keys added to aidp's MCP
    server entry (Gemini's `trust`, Codex's `default_tools_approval_mode`: the agent
    then calls aidp's tools without a person to ask). `mcp_allow`: the rule that
    allows one of aidp's MCP tools (`{server}`, `{tool}`), added for each to
    `permissions.allow` in `settings` where the agent asks for a tool otherwise (Claude
    Code). `note`: said once after the hooks were added."""

    __slots__ = _fields = ("settings", "instructions", "mcp_settings", "hook_names",
                           "mcp_entry", "mcp_allow", "note")

    def __init__(self, settings: str, instructions: str, mcp_settings: str,
                 hook_names: Mapping[str, str] | None = None,
                 mcp_entry: Mapping[str, object] | None = None, mcp_allow: str | None = None,
                 note: str | None = None) -> None:
        self.settings = settings
        self.instructions = instructions
        self.mcp_settings = mcp_settings
        self.hook_names: Mapping[str, str] = {} if hook_names is None else hook_names
        self.mcp_entry: Mapping[str, object] = {} if mcp_entry is None else mcp_entry
        self.mcp_allow = mcp_allow
        self.note = note


class Adapter(ABC):
    """One agent CLI. Subclasses set the class attributes and implement `hand_mcp`."""

    name: ClassVar[str]
    title: ClassVar[str]
    preset: ClassVar[str]  # the preset's command line (`aidp run --agent NAME`)
    env: ClassVar[Mapping[str, str]] = {}  # environment defaults of the preset
    own_files: ClassVar[tuple[str, ...]] = ()  # git pathspec globs it writes for itself
    plan_tools: ClassVar[tuple[str, ...]] = ()  # its tools that report its plan
    version_from_cli: ClassVar[bool] = False  # `PROGRAM --version` asks nobody else
    # Variables that keep its `--version` from checking for updates or reporting home.
    quiet_env: ClassVar[Mapping[str, str]] = {}
    hooks: ClassVar[Hooks | None] = None
    setup: ClassVar[Setup | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [n for n in ("name", "title", "preset") if not isinstance(
            getattr(cls, n, None), str)]
        if missing:
            raise TypeError(f"{cls.__name__} sets no {', '.join(missing)}")
        if (cls.hooks is None) != (cls.setup is None):
            raise TypeError(f"{cls.__name__}: hooks and setup go together")

    @property
    def program(self) -> str:
        """The program the preset runs (`cursor-agent` for cursor)."""
        return self.preset.split()[0]

    # --- reading its output ---------------------------------------------------------

    def read_event(self, reader: OutputReader, event: dict[str, Any]) -> list[Item] | None:
        """The items one JSON event of its dialect means; None when the event is not of
        its dialect (told apart by shape: a custom command line reads the same)."""
        return None

    def read_text(self, reader: OutputReader, line: str) -> list[Item] | None:
        """Items for a plain text line of its own program; None: the line is its text."""
        return None

    # --- its hooks ------------------------------------------------------------------

    def hook_plan(self, tool: object, tool_input: dict[str, Any], tool_response: object,
                  state: dict[str, Any]) -> tuple[bool, object]:
        """(is a plan call, its raw plan list) for the plan hook's tool call. `state` is
        the hook's state for this agent and session (kept between hook processes)."""
        if tool in self.plan_tools:
            return True, tool_input.get("todos")
        return False, None

    def export_session(self, session: str) -> None:
        """At a session start whose session differs from the default: make the agent's
        own `aidp` commands use it, where the agent offers a way."""
        return None

    # --- aidp mcp for one run -------------------------------------------------------

    @abstractmethod
    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """The preset's command line and environment with `server` given to it; None
        when this CLI takes no server for one run. `registered()` says whether the
        project's own MCP settings for this agent hold aidp's server (`setup --mcp`)."""
