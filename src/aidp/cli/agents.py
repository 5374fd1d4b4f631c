"""`aidp agents`: the agent presets, whether each CLI is installed, its version, and
whether that version is the one the real-agent suite verified."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from aidp.agent.inventory import AgentInfo


def agents(
    ctx: typer.Context,
    as_json: bool = typer.Option(
        False, "--json", help="A JSON array, one object per preset (see docs/agents.md)."
    ),
) -> None:
    """List the agent presets: installed or not, version, verified or not.

    A version is read from the CLI's package files without starting it; only where
    those are missing is the CLI asked for its --version (briefly; never Codex).
    "verified" means this exact version passed aidp's real-agent suite. See
    docs/agents.md.

    Examples:
    $ aidp agents
    $ aidp agents --json
    """
    from aidp.agent import inventory
    from aidp.cli.common import env
    from aidp.cli.output import json_out

    found = inventory.survey()
    if as_json:
        json_out([info.to_json() for info in found])
        return
    env(ctx).write("\n".join(human(found)))


def human(found: list[AgentInfo]) -> list[str]:
    """One line per preset, then its command line."""
    from aidp.core.terminal import inert

    lines = []
    width = max(len(info.name) for info in found)
    for info in found:
        if info.path is None:
            state = f"not installed ({info.program} is not on PATH)"
        else:
            version = info.version or "version unknown"
            if info.verified:
                check = "verified"
            elif info.verified_version is None:
                check = "not covered by the real-agent suite"
            elif info.version is None:
                check = f"verified: {info.verified_version}"
            else:
                check = f"NOT the verified {info.verified_version}"
            state = f"{version} ({check}) at {info.path}"
        lines.append(f"{info.name:<{width}}  {inert(state)}")
        lines.append(f"{'':<{width}}  preset: {inert(info.command)}")
    return lines
