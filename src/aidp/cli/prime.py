"""`aidp prime`: the context an agent needs at session start or after compaction."""

from __future__ import annotations

import typer

from aidp.cli.common import JSON_HELP, env


def prime(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """What an agent needs at session start: TODO list, tasks in progress, the first
    ready tasks, commands and signals (always under 6,000 characters).

    Examples:
    $ aidp prime
    $ aidp prime --json
    """
    import os

    from aidp.app.prime import prime_for
    from aidp.cli.output import json_out

    e = env(ctx)
    result = prime_for(e.project, e.session_name(), task=os.environ.get("AIDP_TASK"))
    if as_json:
        json_out(result.to_json())
    else:
        e.write(result.text())
