"""`aidp setup AGENT`: aidp's hooks in an agent's project settings."""

from __future__ import annotations

from pathlib import Path

import typer

from aidp.agent.agents import hooked
from aidp.cli.common import either, env, info
from aidp.core.errors import ExitCode, InvalidInput

# What the help names comes from the adapters (agents/base.Setup): a new agent with
# hooks is in it without an edit here.
_SETUPS = [adapter.setup for adapter in hooked() if adapter.setup is not None]
_AGENTS = either([adapter.name for adapter in hooked()]) + "."
_INSTRUCTIONS = " / ".join(dict.fromkeys(setup.instructions for setup in _SETUPS))
_MCP_FILES = ", ".join(setup.mcp_settings for setup in _SETUPS)
_SETTINGS = ", ".join(setup.settings for setup in _SETUPS)


def setup(
    ctx: typer.Context,
    agent: str = typer.Argument(..., metavar="AGENT", help=_AGENTS),
    remove: bool = typer.Option(
        False, "--remove",
        help="Take out exactly what setup added (hooks, snippet, MCP server)."
    ),
    check: bool = typer.Option(
        False, "--check", help="Change nothing; exit 1 when a hook (or snippet) is missing."
    ),
    instructions: bool = typer.Option(
        False, "--instructions",
        help="Also put a short aidp snippet into "
        f"{_INSTRUCTIONS}, between markers.",
    ),
    mcp: bool = typer.Option(
        False, "--mcp",
        help="Also register aidp's MCP server ('aidp mcp') in the agent's project settings "
        f"({_MCP_FILES}), its tools allowed there (Claude Code: permissions.allow).",
    ),
    max_continuations: int | None = typer.Option(
        None, "--max-continuations", min=0, metavar="N",
        help="The stop hook refuses a stop at most N times in a row (default: the "
        "hook's own 3, or what the settings already say).",
    ),
) -> None:
    import shutil

    from aidp.agent.setup import integrate
    from aidp.core.terminal import inert

    if remove and check:
        raise InvalidInput("Invalid options: give --remove or --check, not both")
    if remove and max_continuations is not None:
        raise InvalidInput("Invalid option --max-continuations with --remove: it applies "
                           "when adding the hooks (or with --check)")
    root = env(ctx).root
    result = integrate.setup(root, agent, remove=remove, check=check,
                             instructions=instructions, limit=max_continuations, mcp=mcp)
    spec = integrate.agent(agent)
    server = result.server
    if (result.changed or result.instructions_changed or result.tools_changed
            or (server and server.changed)):
        env(ctx).wrote()
    where = inert(_shown(result.path, root))
    events = ", ".join(result.events)
    if check:
        problems = []
        if result.missing:
            problems.append(f"{spec.title} hooks missing in {where}: {', '.join(result.missing)}"
                            f" (run 'aidp setup {spec.name}')")
        if instructions and not result.instructions_present:
            problems.append(f"aidp snippet missing or changed in "
                            f"{inert(_shown(result.instructions, root))} "
                            f"(run 'aidp setup {spec.name} --instructions')")
        if mcp and server is not None and not server.present:
            problems.append(f"aidp's MCP server missing in {inert(_shown(server.path, root))} "
                            f"(run 'aidp setup {spec.name} --mcp')")
        if mcp and spec.mcp_allow is not None and not result.tools_allowed:
            problems.append(f"aidp's MCP tools not allowed in {where} "
                            f"(run 'aidp setup {spec.name} --mcp')")
        if problems:
            for line in problems:
                typer.echo(line)
            raise typer.Exit(ExitCode.FAILURE)
        typer.echo(f"{spec.title}: aidp hooks are set up in {where} ({events})")
        return
    if remove:
        typer.echo(f"{spec.title}: removed aidp hooks from {where}" if result.changed
                   else f"{spec.title}: no aidp hooks in {where}; nothing changed")
        if result.instructions_changed:
            typer.echo(f"Removed the aidp snippet from {inert(_shown(result.instructions, root))}")
        if server is not None and server.changed:
            typer.echo(f"Removed aidp's MCP server from {inert(_shown(server.path, root))}")
        if result.tools_changed:
            typer.echo(f"Removed the rules allowing aidp's MCP tools from {where}")
        return
    typer.echo(f"{spec.title}: added aidp hooks to {where} ({events})" if result.changed
               else f"{spec.title}: aidp hooks already set up in {where}; nothing changed")
    if result.instructions is not None:
        shown = inert(_shown(result.instructions, root))
        typer.echo(f"Added the aidp snippet to {shown}" if result.instructions_changed
                   else f"The aidp snippet in {shown} is up to date")
    if server is not None:
        shown = inert(_shown(server.path, root))
        typer.echo(f"Registered aidp's MCP server ('aidp mcp') in {shown}" if server.changed
                   else f"aidp's MCP server is already registered in {shown}")
        if spec.mcp_allow is not None:
            typer.echo(f"Allowed aidp's MCP tools in {where} (permissions.allow), so the "
                       "agent calls them without asking" if result.tools_changed
                       else f"aidp's MCP tools are already allowed in {where}")
    if spec.note and result.changed:
        info(spec.note)
    if shutil.which("aidp") is None:
        info("Warning: 'aidp' is not on PATH; the agent runs the hooks as 'aidp hook …', "
             "so put aidp on the PATH the agent sees (e.g. pipx install aidp-tasklist)")


setup.__doc__ = f"""Install aidp's hooks (session start, plan mirror, stop) in the agent's project
    settings ({_SETTINGS}); with --mcp, also aidp's MCP
    server; idempotent.

    Examples:
    $ aidp setup {hooked()[0].name} --mcp
    $ aidp setup {hooked()[-1].name} --check
    """


def _shown(path: Path | None, root: Path) -> str:
    """`path` as the message names it: relative to the project when inside it (None,
    a file this setup did not touch, is never named: '')."""
    if path is None:
        return ""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
