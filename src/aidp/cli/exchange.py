"""`aidp tasks export` and `aidp tasks import`: the backlog in and out of other tools'
formats. Thin: the formats are aidp.interchange (imported when a command runs)."""

from __future__ import annotations

import typer

from aidp.cli.common import JSON_HELP, env
from aidp.cli.output import json_out, painter
from aidp.core.errors import InvalidInput
from aidp.core.terminal import inert
from aidp.views import render


def export(
    ctx: typer.Context,
    fmt: str = typer.Option(
        ..., "--format", "-f", help="markdown, csv, jsonl, taskwarrior or beads."
    ),
    output: str | None = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Write to FILE instead of stdout."
    ),
    raw: bool = typer.Option(
        False, "--raw", help="csv: write cells exactly as stored; by default a cell a "
        "spreadsheet would run as a formula (=, +, -, @) starts with '.",
    ),
) -> None:
    """Every task in another tool's format (taskwarrior: `task import`; beads: issues.jsonl).

    Examples:
    $ aidp tasks export -f markdown -o TASKS.md
    $ aidp tasks export -f taskwarrior > tasks.json
    """
    from aidp import interchange
    from aidp.app.exchange import export_tasks

    fmt = interchange.check_format(fmt, interchange.EXPORT_FORMATS, "--format")
    exported = export_tasks(env(ctx).project, fmt, raw=raw)
    if output is None:
        render.write_bytes(exported.data)
        return
    from aidp.cli.common import info
    from aidp.cli.user_files import write_named

    write_named(output, exported.data, option="--output")

    noun = "task" if exported.count == 1 else "tasks"
    info(f"Exported {exported.count} {noun} to {inert(output)} ({fmt})")


def import_(
    ctx: typer.Context,
    file: str = typer.Argument(..., metavar="FILE", help="The file to read; - for stdin."),
    source: str = typer.Option(
        ..., "--from", help="csv, jsonl, markdown (an aidp export), taskwarrior, beads or "
        "github (gh issue list --json)."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show what would be filed; write nothing."
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """File tasks from another tool's export; importing the same file again files nothing.

    Examples:
    $ aidp tasks import tasks.csv --from csv --dry-run
    $ aidp tasks import .beads/issues.jsonl --from beads
    """
    import sys

    from aidp import interchange
    from aidp.app.exchange import import_tasks

    source = interchange.check_format(source, interchange.IMPORT_FORMATS, "--from")
    if file == "-":
        data, name = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else \
            sys.stdin.read().encode(), "stdin"
    else:
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise InvalidInput(f"Cannot read {file}: {exc.strerror or exc}") from None
        name = file
    items = interchange.parse(source, data, name)
    e = env(ctx)
    imported = import_tasks(e.project, items, source, dry_run=dry_run)
    result = imported.result
    if as_json:
        json_out({
            "source": source, "dry_run": dry_run, "filed": result.filed,
            "skipped": result.skipped,
        })
        return
    verb = "Would import" if dry_run else "Imported"
    lines = [f"{verb} {len(result.filed)} task{'s' if len(result.filed) != 1 else ''} "
             f"from {inert(source)}" + (f" ({result.skipped} already imported)"
                                 if result.skipped else "")]
    paint = painter()
    shown = result.filed[:20]
    short = imported.short_ids
    for task in shown:
        marker = render.priority_marker(task.get("priority"), paint)
        tid = short.get(task["id"]) or render.hex_part(task["id"])
        lines.append(f"  {marker} {paint('[' + inert(tid) + ']', 'dim')} "
                     f"{inert(task.get('description', ''))} "
                     f"{paint('(' + inert(task.get('status')) + ')', 'dim')}")
    if len(result.filed) > 20:
        lines.append(f"  … and {len(result.filed) - 20} more")
    e.write("\n".join(lines))
