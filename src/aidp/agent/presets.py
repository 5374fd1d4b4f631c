"""Which agent `aidp run` drives, and how its command line and prompt are put together.

The agent is `--agent`, else `AIDP_AGENT`, else `agent` in `.aidp/config.toml`: a
preset name or a command line. A command line is split like a shell would split it
and is never run through a shell. The prompt goes on the agent's stdin unless an
argument holds the `{prompt}` placeholder.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from aidp.agent import agents
from aidp.core.errors import InvalidInput
from aidp.tasklist.paths import DATA_DIR

PLACEHOLDER = "{prompt}"
CONFIG_NAME = "config.toml"

# The non-interactive ("headless") mode each CLI documents today, from its adapter in
# aidp.agent.agents. Where a CLI can report its work as JSON events, that mode is used:
# aidp reads tool calls and the agent's own plan from them.
PRESETS: dict[str, str] = {adapter.name: adapter.preset for adapter in agents.adapters()}

SOURCES_HELP = (
    "--agent NAME|COMMAND, the AIDP_AGENT variable, or agent = \"…\" in .aidp/config.toml"
)


class AgentError(InvalidInput):
    """The agent is not configured, cannot be parsed, or cannot be started (exit 2)."""


@dataclass(frozen=True)
class AgentSpec:
    """A resolved agent: its command line and where it came from."""

    label: str  # the preset name, or the command line as given
    argv: tuple[str, ...]
    source: str  # --agent, AIDP_AGENT or .aidp/config.toml
    preset: str | None = None
    # Environment defaults the preset sets (a variable already set is left alone).
    env: tuple[tuple[str, str], ...] = ()

    @property
    def prompt_in_argv(self) -> bool:
        return any(PLACEHOLDER in arg for arg in self.argv)

    def command(self, prompt: str) -> tuple[list[str], str | None]:
        """(argv, stdin text): the prompt replaces `{prompt}` wherever it appears, else
        it is written to the agent's stdin."""
        if self.prompt_in_argv:
            return [arg.replace(PLACEHOLDER, prompt) for arg in self.argv], None
        return list(self.argv), prompt


def choose(option: str | None, root: Path) -> AgentSpec:
    """The agent from --agent, else AIDP_AGENT, else .aidp/config.local.toml, else
    .aidp/config.toml (whose command line runs only once trusted: aidp.trust.gate)."""
    if option is not None:
        return parse(option, source="--agent")
    from_env = os.environ.get("AIDP_AGENT")
    if from_env and from_env.strip():
        return parse(from_env, source="AIDP_AGENT")
    from aidp.trust import gate

    config = gate.load(root, presets=PRESETS)
    configured = config.get("agent")  # a command line there needs `aidp trust`
    if configured is not None:
        return parse(configured, source=config.source("agent") or f"{DATA_DIR}/{CONFIG_NAME}")
    raise AgentError(
        f"No agent configured: give {SOURCES_HELP}; presets: {', '.join(PRESETS)}"
    )


def parse(value: object, *, source: str) -> AgentSpec:
    """A preset name or a command line (a TOML list of arguments is taken as it is)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        if not value[0].strip():
            raise AgentError(f"Invalid agent in {source}: the command is empty")
        return AgentSpec(label=shlex.join(value), argv=tuple(value), source=source)
    if not isinstance(value, str):
        raise AgentError(
            f"Invalid agent in {source}: use a preset name ({', '.join(PRESETS)}) or a "
            "command line as a string"
        )
    text = value.strip()
    if not text:
        raise AgentError(
            f"Invalid agent in {source}: it is empty; use a preset name "
            f"({', '.join(PRESETS)}) or a command line"
        )
    preset = text.lower()
    if preset in PRESETS:
        adapter = agents.load(preset)
        return AgentSpec(label=preset, argv=tuple(shlex.split(adapter.preset)), source=source,
                         preset=preset, env=tuple(adapter.env.items()))
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise AgentError(f"Invalid agent command in {source} {text!r}: {exc}") from None
    if not argv:
        raise AgentError(f"Invalid agent in {source}: the command is empty")
    return AgentSpec(label=text, argv=tuple(argv), source=source)


def child_env(root: Path, session: str, base: dict[str, str] | None = None, *,
              defaults: dict[str, str] | None = None) -> dict[str, str]:
    """The agent's environment: AIDP_DIR and AIDP_SESSION set, and this Python's bin
    folder first on PATH, so an `aidp` the agent runs is this aidp, on this list; no
    pager (an agent that runs commands on a terminal must never wait in `less`); the
    mark of an agent's process (aidp.trust.person: it can never grant trust).
    `defaults` (a preset's variables) apply where the variable is not set already."""
    from aidp.trust.person import mark

    env = dict(os.environ if base is None else base)
    for name, value in (defaults or {}).items():
        env.setdefault(name, value)
    mark("aidp run", env)
    env["AIDP_DIR"] = str(root)
    env["AIDP_SESSION"] = session
    env["AIDP_PAGER"] = ""
    bin_dir = str(Path(sys.executable).parent)
    parts = [p for p in env.get("PATH", "").split(os.pathsep) if p]
    if not parts or parts[0] != bin_dir:
        parts.insert(0, bin_dir)
    env["PATH"] = os.pathsep.join(parts)
    return env


def check_startable(spec: AgentSpec, *, cwd: Path, env: dict[str, str]) -> str:
    """The program's path, or a clear error when it cannot be started."""
    program = spec.argv[0]
    where = f" (from {spec.source})"
    hint = f"install it, or choose another agent with {SOURCES_HELP}"
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        if not path.is_absolute():
            path = cwd / path
        if not path.exists():
            raise AgentError(f"Agent command not found: {program!r}{where}; {hint}")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise AgentError(
                f"Agent command cannot be started: {program!r} is not an executable file{where}"
            )
        return str(path)
    found = shutil.which(program, path=env.get("PATH"))
    if found is None:
        name = f"preset {spec.preset!r} runs {program!r}" if spec.preset else repr(program)
        raise AgentError(f"Agent command not found: {name}{where}; {hint}")
    return found
