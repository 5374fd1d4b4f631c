"""`aidp run` hands `aidp mcp` to each preset whose CLI takes MCP servers for one run
(docs/mcp.md, "How each agent gets it"), so the agent has `todo_write` even where it
has no plan tool of its own.

How each CLI takes it lives with the CLI (`Adapter.hand_mcp` in its module of
aidp.agent.agents); this module builds the server's command line and environment and
asks the preset's adapter. A command line of your own is run as you gave it.

The server is this aidp (`sys.executable -m aidp mcp`), never an `aidp` looked up on a
PATH that a repository could put something on, and its environment names the run's
project and session (AIDP_DIR, AIDP_SESSION) outright: some CLIs start MCP servers
with a scrubbed environment (Codex passes only HOME, PATH, USER and a few more).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from aidp.agent import agents
from aidp.agent.agents.base import McpServer
from aidp.agent.presets import AgentSpec
from aidp.toolserver.tools import TOOLS

SERVER_NAME = "aidp"
# What the server needs from the run's environment (the queue's actor and task too, for
# tasks_claim under `run --backlog --parallel`).
PASSED_ON = ("AIDP_DIR", "AIDP_SESSION", "AIDP_ACTOR", "AIDP_TASK", "AIDP_LOCK_TIMEOUT")


def server_for(env: dict[str, str]) -> McpServer:
    passed = tuple((name, env[name]) for name in PASSED_ON if env.get(name))
    return McpServer(command=sys.executable, args=("-m", "aidp", "mcp"), env=passed,
                     tools=tuple(TOOLS), name=SERVER_NAME)


@dataclass(frozen=True)
class Handover:
    agent: AgentSpec  # the preset's command line with the server given to it
    env: dict[str, str]  # the agent's environment, with what the CLI reads the server from
    server: McpServer


def registered_in_project(name: str, env: dict[str, str]) -> bool:
    """Whether the run's project registers aidp's server in the agent's own MCP settings
    (`aidp setup NAME --mcp`); False where aidp sets up no such file, or cannot read it."""
    from aidp.agent.setup.files import AGENTS
    from aidp.agent.setup.mcp import register
    from aidp.core.errors import AidpError

    if not env.get("AIDP_DIR") or name not in AGENTS:
        return False
    try:
        return register(Path(env["AIDP_DIR"]), name, check=True).present
    except AidpError:
        return False


def hand_over(spec: AgentSpec, env: dict[str, str]) -> Handover | None:
    """The preset with `aidp mcp` given to it, as its adapter says (`Adapter.hand_mcp`);
    None for a command line of your own and for a CLI that takes no MCP server for one
    run (aider, cursor-agent)."""
    if spec.preset is None:
        return None
    adapter = agents.load(spec.preset)
    server = server_for(env)
    given = adapter.hand_mcp(list(spec.argv), server, env,
                             registered=lambda: registered_in_project(adapter.name, env))
    if given is None:
        return None
    argv, more_env = given
    return Handover(replace(spec, argv=tuple(argv)), {**env, **more_env}, server)
