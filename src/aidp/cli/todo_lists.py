"""`aidp todo list` and `aidp todo load`: every session's list, earlier ones too, and
copying one into the current session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from aidp.cli.common import JSON_HELP, Env, session_option
from aidp.cli.common import env as env_of
from aidp.cli.output import json_out, painter, todo_out
from aidp.core.errors import InvalidInput
from aidp.core.terminal import inert
from aidp.views import render

if TYPE_CHECKING:
    from aidp import todos as core


def _would_replace(core: Any, mine: core.TodoList, chosen: core.TodoList) -> bool:
    """Loading would throw away an active list's items (that are not the same items)."""
    return bool(mine.visible) and (
        [core.item_out(i) for i in mine.items] != [core.item_out(i) for i in chosen.items])


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
    from aidp import todos as core
    from aidp.core.model import now_micros

    e = env_of(ctx)
    name = e.session_name(session)
    fold = e.read()
    found = core.summaries(fold, name, _past(e, fold) if everything else ())
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
    from aidp import todos as core

    e = env_of(ctx)
    name = e.session_name(session)
    fold = e.read()
    chosen = core.pick_source(fold, source, name, lambda: _past(e, fold))
    mine = core.current(fold, name)
    if not replace and _would_replace(core, mine, chosen):
        _confirm_replace(mine, chosen)

    def load_it(todo: core.TodoList) -> core.TodoList:
        if not replace and not core.same(todo, mine) and _would_replace(core, todo, chosen):
            raise InvalidInput(f"The TODO list of session {inert(name)} changed while "
                               "aidp asked; nothing loaded: run the command again")
        return core.load(todo, chosen)

    done = core.edit(e.log, name, load_it)
    count = len(done.after.items)
    what = f"{count} item{'s' if count != 1 else ''}"
    if not done.written:
        message = f"Session {inert(name)} already has this list active; nothing changed"
    elif chosen.epoch is not None and chosen.epoch != core.current(fold, chosen.session).epoch:
        message = (f"{painter()('✓', 'green')} Loaded {what} from earlier list "
                   f"{inert(chosen.epoch)} of session {inert(chosen.session)}")
    elif chosen.session == name:
        message = f"{painter()('✓', 'green')} Restored {what} of session {inert(name)}"
    else:
        message = (
            f"{painter()('✓', 'green')} Loaded {what} from session {inert(chosen.session)} "
            f"into session {inert(name)}"
        )
    todo_out(done.after, message, as_json=as_json, pager=e.pager)


def _past(e: Env, fold: Any) -> list[core.TodoList]:
    """The lists no session shows any more (todos.past_lists: a scan of the tasklist of
    this worktree and of every other live one, as the fold reads them: docs/guide.md,
    "Worktrees by hand")."""
    from aidp import todos as core
    from aidp.tasklist import worktrees

    data = [e.log.read_lines()]
    repo = e.log.shared()
    if repo is not None:
        data += [worktrees.read_tasklist(path) or b"" for path, own in repo.tasklists()
                 if not own]
    return core.past_lists(fold, b"\n".join(data))
