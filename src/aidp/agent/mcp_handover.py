"""`aidp run` hands `aidp mcp` to each preset whose CLI takes MCP servers for one run
(DESIGN §13), so the agent has `todo_write` even where it has no plan tool of its own.

How each CLI takes it lives with the CLI (`mcp(argv, server, env)` in its module of
aidp.agent.agents); this module builds the server's command line and environment and
asks the preset's module. A command line of your own is run as you gave it.

The server is this aidp (`sys.executable -m aidp mcp`), never an `aidp` looked up on a
PATH that a repository could put something on, and its environment names the run's
project and session (AIDP_DIR, AIDP_SESSION) outright: some CLIs start MCP servers
with a scrubbed environment (Codex passes only HOME, PATH, USER and a few more).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any

from aidp.agent import agents
from aidp.agent.presets import AgentSpec
from aidp.toolserver.tools import TOOLS

SERVER_NAME = "aidp"
# What the server needs from the run's environment (the queue's actor and task too, for
# tasks_claim under `run --backlog --parallel`).
PASSED_ON = ("AIDP_DIR", "AIDP_SESSION", "AIDP_ACTOR", "AIDP_TASK", "AIDP_LOCK_TIMEOUT")


@dataclass(frozen=True)
class McpServer:
    """The `aidp mcp` server of one run, as an agent's MCP configuration names it."""

    command: str
    args: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    name: str = SERVER_NAME
    tools: tuple[str, ...] = tuple(TOOLS)

    def stdio(self) -> dict[str, Any]:
        """{"command", "args", "env"}: the shape every CLI's JSON config shares."""
        return {"command": self.command, "args": list(self.args), "env": dict(self.env)}


def server_for(env: dict[str, str]) -> McpServer:
    passed = tuple((name, env[name]) for name in PASSED_ON if env.get(name))
    return McpServer(command=sys.executable, args=("-m", "aidp", "mcp"), env=passed)


@dataclass(frozen=True)
class Handover:
    agent: AgentSpec  # the preset's command line with the server given to it
    env: dict[str, str]  # the agent's environment, with what the CLI reads the server from
    server: McpServer


def hand_over(spec: AgentSpec, env: dict[str, str]) -> Handover | None:
    """The preset with `aidp mcp` given to it; None for a command line of your own and
    for a CLI that takes no MCP server for one run (aider, cursor-agent)."""
    if spec.preset is None:
        return None
    server = server_for(env)
    given = agents.BY_NAME[spec.preset].mcp(list(spec.argv), server, env)
    if given is None:
        return None
    argv, more_env = given
    return Handover(replace(spec, argv=tuple(argv)), {**env, **more_env}, server)
