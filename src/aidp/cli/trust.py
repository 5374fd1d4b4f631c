"""`aidp trust`: let this project's `.aidp/config.toml` start the commands it names."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from aidp.cli.common import env
from aidp.core.errors import AidpError, InvalidInput

if TYPE_CHECKING:
    from aidp.trust.gate import Layer

# How a name from the config or the file system is shown: inert (terminal.inert).
Shown = Callable[[str], str]


def trust(
    ctx: typer.Context,
    revoke: bool = typer.Option(
        False, "--revoke", help="Take the trust back: its commands no longer run."
    ),
    show: bool = typer.Option(
        False, "--show", help="Only show each config file, whether it is trusted and what "
        "it would start; change nothing.",
    ),
) -> None:
    """Trust this project's .aidp/config.toml: show the commands it starts and allow them.

    Records a SHA-256 of the exact file, of the project files it runs and,
    for a script, of every file in the script's folder (what its interpreter
    loads without asking) in ~/.config/aidp/trust.json; any change needs
    'aidp trust' again.

    Trust is a person's decision: it asks you to confirm on the terminal, and
    is refused (exit 2) without one and for any process aidp started for an
    agent (inside 'aidp run', its hooks, 'aidp mcp'). --show and --revoke
    work anywhere: they grant nothing.

    A preset name needs no trust, nor does .aidp/config.local.toml (git-ignored).
    See docs/security.md.

    Examples:
    $ aidp trust --show
    $ aidp trust
    """
    from aidp.agent.presets import PRESETS
    from aidp.core.terminal import inert
    from aidp.trust import gate as core
    from aidp.trust import person

    if revoke and show:
        raise InvalidInput("Invalid options: give --revoke or --show, not both")
    root = env(ctx).root
    out = inert
    if revoke:
        forgotten = core.revoke(root)
        if forgotten:
            env(ctx).wrote()
        if not forgotten:
            env(ctx).write(f"Nothing to revoke: no config file of {out(str(root))} is trusted")
            return
        env(ctx).write("\n".join(
            f"Revoked trust in {name}: its commands will not run until 'aidp trust'"
            for name in forgotten
        ))
        return
    if show:
        lines = []
        for layer, trusted, settings in core.status(root, presets=PRESETS):
            if layer.own:
                state = "your own (git-ignored): needs no trust"
            else:
                state = "trusted" if trusted else "NOT trusted"
            lines.append(f"{layer.shown}: {state} (sha256 {layer.sha256[:12]})")
            lines.extend(_settings(settings, out))
            if not layer.own:
                lines.extend(_covers(root, layer, out))
        env(ctx).write("\n".join(lines) or f"No config file in {out(str(root))}/.aidp/")
        return
    person.refuse_agent()  # before anything is read: an agent is never asked
    found = core.review(root, presets=PRESETS)
    if not found.items:
        env(ctx).write(
            f"Nothing to trust: {out(str(root))} has no .aidp/config.toml "
            "(a git-ignored .aidp/config.local.toml is your own and needs no trust)"
        )
        return
    if not found.needed:
        env(ctx).write("\n".join(
            f"Already trusted {item.shown} (sha256 {item.sha256[:12]}); nothing changed"
            for item in found.items))
        return
    person.refuse_without_terminal(sys.stdin.isatty())
    lines = []
    for item in found.items:
        state = "already trusted" if item.already else "NOT trusted"
        lines.append(f"{item.shown} (sha256 {item.sha256[:12]}, {state}) lets aidp start:")
        lines.extend(_settings(item.settings, out))
        if item.files:
            lines.append(f"  and, as they are now, the project files it runs: "
                         f"{out(', '.join(item.files))}")
        lines.extend(_folders(item.folders, out))
    env(ctx).write("\n".join(lines))
    if not _confirmed():
        raise Declined("Not trusted: you did not answer 'y'; nothing was recorded")
    found.record()
    env(ctx).wrote()
    env(ctx).write("\n".join(
        [f"Trusted {item.shown} (sha256 {item.sha256[:12]}): aidp may now start what it "
         "names" for item in found.items]
        + ["A change to any of them needs 'aidp trust' again; "
           "'aidp trust --revoke' takes it back."]))


class Declined(AidpError):
    """The person answered no (exit 1): nothing recorded."""


def _confirmed() -> bool:
    """The person's answer, typed on the terminal (stdin): only y or yes trusts."""
    sys.stdout.flush()
    sys.stderr.write("Trust it? Its commands will then run with your rights. [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline(64)
    return answer.strip().lower() in ("y", "yes")


def _covers(root: Path, layer: Layer, out: Shown) -> list[str]:
    """What trusting `layer` covers besides its own bytes (for --show)."""
    from aidp.trust import gate as core
    from aidp.trust.scope import TooWide

    try:
        found = core.covered(root, layer)
    except TooWide as exc:
        return [f"  {out(str(exc))}"]
    files = [f"  and the project files it runs: {out(', '.join(found.named))}"] \
        if found.named else []
    return files + _folders(found.folders, out)


def _folders(folders: dict[str, int], out: Shown) -> list[str]:
    """The folders trust covers: what a script's interpreter loads from without asking."""
    from aidp.trust.scope import shown_folder

    return [f"  and everything its script can load from {out(shown_folder(folder))} "
            f"({count:,} file{'' if count == 1 else 's'})" for folder, count in folders.items()]


def _settings(settings: list[str], out: Shown) -> list[str]:
    if not settings:
        return ["  nothing but built-in presets"]
    return [f"  {out(setting)}" for setting in settings]
