"""`aidp todo list` and `aidp todo load`: every session's list, earlier ones too, and
copying one into the current session."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from aidp.cli.common import JSON_HELP, session_option
from aidp.cli.common import env as env_of
from aidp.cli.output import json_out, painter, todo_out
from aidp.core.errors import InvalidInput
from aidp.core.terminal import inert
from aidp.views import render

if TYPE_CHECKING:
    from aidp import todos as core


def _confirm_replace(mine: core.TodoList, chosen: core.TodoList) -> None:
    """Ask on a terminal; anywhere else refuse with exit 2. A "no" exits 1. Either way
    nothing is written."""
    import sys

    from aidp.core.errors import AidpError

    count = len(mine.items)
    what = f"{count} item{'s' if count != 1 else ''}"
    session = inert(mine.session)
    try:
        interactive = sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        raise InvalidInput(
            f"Session {session} has an active TODO list ({what}): give --replace to replace "
            f"it with the list of session {inert(chosen.session)}"
        )
    sys.stderr.write(f"Replace the active TODO list of session {inert(session)} "
                     f"({what}) with the list of session {inert(chosen.session)}? "
                     "[y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if answer.strip().lower() not in ("y", "yes"):
        if not answer:
            sys.stderr.write("\n")
        raise AidpError(f"Nothing loaded: session {session} keeps its list "
                        "(--replace replaces it without asking)")




def list_(
    ctx: typer.Context,
    session: str | None = session_option(),
    everything: bool = typer.Option(
        False, "--all", "-a", help="Earlier lists too (cleared, replaced), each loadable."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Every session's list: the current one first, then by last change, newest first.

    Examples:
    $ aidp todo list
    $ aidp todo list --all --json
    """
    from aidp.app.plans import plan_lists
    from aidp.core.model import now_micros

    e = env_of(ctx)
    name = e.session_name(session)
    found = plan_lists(e.project, name, everything=everything)
    if as_json:
        json_out([s.to_json() for s in found])
    else:
        e.write(render.todo_lists(found, now_micros(), current_session=name))


def load(
    ctx: typer.Context,
    source: str = typer.Argument(
        ..., metavar="SESSION|N|ID",
        help="A session name, a number from `todo list` (--all), or an earlier list's id."
    ),
    session: str | None = session_option(),
    replace: bool = typer.Option(
        False, "--replace", help="Replace the session's active list without asking."
    ),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Copy a saved list into the current session and make it active.

    When the session already has an active list with items, aidp asks first on a
    terminal; elsewhere (scripts, agents) it needs --replace.

    Examples:
    $ aidp todo load --replace 2
    $ aidp todo load --replace main@alice@example.com
    """
    from aidp.app.plans import load_plan

    e = env_of(ctx)
    name = e.session_name(session)
    loaded = load_plan(e.project, name, source, replace=replace, confirm=_confirm_replace)
    done, chosen = loaded.edit, loaded.source
    count = len(done.after.items)
    what = f"{count} item{'s' if count != 1 else ''}"
    if loaded.kind == "unchanged":
        message = f"Session {inert(name)} already has this list active; nothing changed"
    elif loaded.kind == "earlier":
        message = (f"{painter()('✓', 'green')} Loaded {what} from earlier list "
                   f"{inert(chosen.epoch or '')} of session {inert(chosen.session)}")
    elif loaded.kind == "restored":
        message = f"{painter()('✓', 'green')} Restored {what} of session {inert(name)}"
    else:
        message = (
            f"{painter()('✓', 'green')} Loaded {what} from session {inert(chosen.session)} "
            f"into session {inert(name)}"
        )
    todo_out(done.after, message, as_json=as_json, pager=e.pager)
