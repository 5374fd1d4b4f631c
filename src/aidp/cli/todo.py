"""`aidp todo …`: the session's TODO list (the agent's working plan)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from aidp.cli.common import JSON_HELP, SESSION_HELP, Env, env, session_option
from aidp.cli.output import json_out, painter, todo_out
from aidp.core.terminal import inert
from aidp.views import render

if TYPE_CHECKING:
    from aidp import todos as core

# aidp.todos is imported inside each command: `aidp todo list`, `load` and every
# `aidp --help` load this module for its group options, and should not pay for it.

POS_HELP = "N, last, N.M or N.last (1-based)."
# Positions like -1 reach the commands that take them (aidp.cli.startup.TAKES_DASHES), so
# their error lists the accepted forms; a mistyped option is still refused, here.
_OPTION_LIKE = re.compile(r"--?[A-Za-z]")


def _no_stray_options(ctx: typer.Context, *tokens: str) -> None:
    """With unknown options let through (for -1), a mistyped option must still be one."""
    from aidp.cli import common

    raw = common.env(ctx).command_line
    # What follows `--` is text, whatever it looks like: `aidp todo add -- "-x"`.
    literal = len(raw) - raw.index("--") - 1 if "--" in raw else 0
    for token in tokens[: max(0, len(tokens) - literal)]:
        if _OPTION_LIKE.match(token):
            raise common.StrayOption(token.partition("=")[0], ctx)


def options(
    ctx: typer.Context,
    session: str | None = typer.Option(None, "--session", metavar="NAME", help=SESSION_HELP),
) -> None:
    """The session TODO list: the agent's ordered working plan, with checklists."""
    if session:
        env(ctx).session = session


def _label(todo: core.TodoList, target: core.Target) -> str:
    item = todo.visible[target.item]
    if target.subtask is None:
        return f"{target.label()}: {inert(item['content'])}"
    return f"{target.label()}: {inert(item['subtasks'][target.subtask]['content'])}"


def _apply(e: Env, session: str, fn: Callable[[core.TodoList], core.TodoList | None]) -> core.Edit:
    """Check the change against what is on disk before taking the write lock (so a bad
    position creates nothing), then make it under the lock against the newest state."""
    from aidp.app.plans import change_plan

    return change_plan(e.project, session, fn)


def _apply_op(
    e: Env, session: str, op: Callable[[core.TodoList], tuple[core.TodoList, *tuple[Any, ...]]]
) -> tuple[core.Edit, tuple[Any, ...]]:
    """`_apply` for a core operation returning (list, *details): the edit, and the details
    of the last attempt, the one that was written (an attempt may run more than once)."""
    details: list[tuple[Any, ...]] = []

    def fn(todo: core.TodoList) -> core.TodoList:
        after, *rest = op(todo)
        details[:] = [tuple(rest)]
        return after

    return _apply(e, session, fn), details[-1]


def _remaining(todo: core.TodoList) -> str:
    from aidp import todos as core

    items = todo.visible
    left = [(n, i) for n, i in enumerate(items, start=1) if core.derived_status(i) != "completed"]
    if not left:
        return f"All {len(items)} item{'s' if len(items) != 1 else ''} completed"
    shown = ", ".join(f"{n} {inert(i['content'])}" for n, i in left[:3])
    more = f", … ({len(left) - 3} more)" if len(left) > 3 else ""
    return f"{len(left)} of {len(items)} remaining: {shown}{more}"


def show(
    ctx: typer.Context,
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """The list exactly as the agent sees it in `aidp run`.

    Examples:
    $ aidp todo show
    $ aidp todo show --json
    """
    from aidp import todos as core
    from aidp.app.plans import read_plan

    e = env(ctx)
    todo = read_plan(e.project, e.session_name(session))
    if as_json:
        json_out(core.show_json(todo))
    else:
        e.write(render.todo_text(todo))


# A first word shaped like a position (digits and dots, a sign, `last.…`) is one, even
# when it is not a valid one (`0`, `-1`, `1.2.3`): refused, never taken as text.
_POSITION_SHAPED = re.compile(r"[+-]?(?:[0-9][0-9.]*(?:last)?|\.[0-9a-z.]*)|last(?:\..*)?")


def _split_add(args: list[str]) -> tuple[str, str]:
    """[POS] WORDS…: the first word is the position only when there are more words and
    it is shaped like one; the words are the description, quoted or not."""
    from aidp import todos as core

    if len(args) > 1 and _POSITION_SHAPED.fullmatch(args[0]):
        return args[0], " ".join(args[1:])
    return core.LAST, " ".join(args)


def add(
    ctx: typer.Context,
    args: list[str] = typer.Argument(
        ..., metavar="[POS] WORDS...",
        help="Where (default last; N.M or N.last adds a subtask) and what "
        "(1–200 characters, quoted or not; a first word is a position only when it "
        "looks like one).",
    ),
    priority: str | None = typer.Option(
        None, "--priority", "-p", help="high, medium (default) or low; items only."
    ),
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Insert an item or subtask at POS (default: last); the list becomes active.

    Examples:
    $ aidp todo add Write the parser tests
    $ aidp todo add 1.last "Cover empty input"
    """
    from aidp import todos as core

    _no_stray_options(ctx, *args)
    e = env(ctx)
    position, description = _split_add(args)
    name = e.session_name(session)
    done, (target,) = _apply_op(
        e, name, lambda todo: core.add(todo, position, description, priority=priority)
    )
    restarted = bool(done.before.items) and not done.before.active
    fresh = " (a new list: the previous one was cleared)" if restarted else ""
    message = f"{painter()('✓', 'green')} Added {_label(done.after, target)}{fresh}"
    todo_out(done.after, message, as_json=as_json, pager=e.pager)


def delete(
    ctx: typer.Context,
    position: str = typer.Argument(..., metavar="POS", help=POS_HELP),
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Remove an item (with its subtasks) or a subtask.

    Examples:
    $ aidp todo delete 2
    $ aidp todo delete 1.1
    """
    from aidp import todos as core

    _no_stray_options(ctx, position)
    e = env(ctx)
    name = e.session_name(session)
    done, (target, item) = _apply_op(e, name, lambda todo: core.delete(todo, position))
    subs = len(item.get("subtasks") or [])
    extra = f" (and its {subs} subtask{'s' if subs != 1 else ''})" if subs else ""
    todo_out(
        done.after,
        f"{painter()('✓', 'green')} Deleted {target.label()}: "
        f"{inert(item['content'])}{extra}",
        as_json=as_json,
        pager=e.pager,
    )


def tick(
    ctx: typer.Context,
    position: str = typer.Argument(..., metavar="POS", help=POS_HELP),
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark an item without a checklist, or a subtask, completed (again: no change).

    Examples:
    $ aidp todo tick 2
    $ aidp todo tick 1.last
    """
    _tick(ctx, position, session, as_json=as_json, completed=True)


def untick(
    ctx: typer.Context,
    position: str = typer.Argument(..., metavar="POS", help=POS_HELP),
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark an item without a checklist, or a subtask, not completed (pending again).

    Examples:
    $ aidp todo untick 2
    """
    _tick(ctx, position, session, as_json=as_json, completed=False)


def _tick(ctx: typer.Context, position: str, session: str | None, *, as_json: bool,
          completed: bool) -> None:
    from aidp import todos as core

    _no_stray_options(ctx, position)
    e = env(ctx)
    name = e.session_name(session)
    done, (target,) = _apply_op(
        e, name, lambda todo: core.tick(todo, position, completed=completed))
    if as_json:
        todo_out(done.after, "", as_json=True, pager=e.pager)
        return
    if not done.written:  # so already: a retried tick never undoes it
        state = "Already ticked" if completed else "Not ticked"
        e.write(f"{state}, nothing changed: {_label(done.after, target)}\n"
                f"{_remaining(done.after)}")
        return
    e.write(_tick_message(done, target))


def _tick_message(done: core.Edit, target: core.Target) -> str:
    from aidp import todos as core

    paint = painter()
    todo = done.after
    item = todo.visible[target.item]
    n = target.item + 1
    if target.subtask is None:
        if item["status"] == "completed":
            return f"{paint('✓', 'green')} Ticked {_label(todo, target)}\n{_remaining(todo)}"
        return f"↺ Unticked {_label(todo, target)} (pending again)\n{_remaining(todo)}"
    finished, total = core.progress(item)
    sub = item["subtasks"][target.subtask]
    if sub["status"] != "completed":
        return f"↺ Unticked {_label(todo, target)} ({finished}/{total})\n{_remaining(todo)}"
    lines = [f"{paint('✓', 'green')} Ticked {_label(todo, target)} ({finished}/{total})"]
    if finished == total:
        lines.append(f"Item {n} is now done: {inert(item['content'])}")
        lines.append(_remaining(todo))
    else:
        left = [
            f"{n}.{m} {inert(s['content'])}"
            for m, s in enumerate(item["subtasks"], start=1)
            if s["status"] != "completed"
        ]
        lines.append(f"Remaining in {n}: " + ", ".join(left))
    return "\n".join(lines)


def start(
    ctx: typer.Context,
    position: str = typer.Argument(
        ..., metavar="POS", help="N or last: an item without a checklist."
    ),
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Mark an item in_progress.

    Examples:
    $ aidp todo start 2
    """
    from aidp import todos as core

    _no_stray_options(ctx, position)
    e = env(ctx)
    name = e.session_name(session)
    done, (target,) = _apply_op(e, name, lambda todo: core.start(todo, position))
    label = _label(done.after, target)
    if done.written:
        message = f"{painter()('✓', 'green')} Started {label}"
    else:
        message = f"Already in_progress, nothing changed: {label}"  # e.g. "2: Docs"
    todo_out(done.after, message, as_json=as_json, pager=e.pager)


def clear(
    ctx: typer.Context,
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Empty the active list; its contents stay in the file and in `todo list` as history.

    Examples:
    $ aidp todo clear
    """
    from aidp import todos as core

    e = env(ctx)
    name = e.session_name(session)
    done = _apply(e, name, core.clear)
    if not done.written:
        todo_out(done.after, f"{core.NO_ACTIVE}; nothing to clear", as_json=as_json,
                 pager=e.pager)
        return
    if not done.before.active:  # nothing active, but paused: the pause goes
        todo_out(done.after, f"{core.NO_ACTIVE}; the pause is lifted", as_json=as_json,
                 pager=e.pager)
        return
    count = len(done.before.items)
    todo_out(
        done.after,
        f"{painter()('✓', 'green')} Cleared {count} item{'s' if count != 1 else ''} of session "
        f"{inert(name)} (kept as history: 'aidp todo load' brings them back)",
        as_json=as_json,
        pager=e.pager,
    )


def pause(
    ctx: typer.Context,
    reason: list[str] = typer.Argument(..., metavar="REASON", help="Why the agent is blocked."),
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """The agent is blocked: `aidp run` will not push it to continue until the next prompt.

    Examples:
    $ aidp todo pause "Waiting for the staging API key"
    """
    from aidp import todos as core

    e = env(ctx)
    text = " ".join(reason)
    done = _apply(e, e.session_name(session), lambda todo: core.pause(todo, text))
    todo_out(done.after, f"⏸ Paused: {inert(done.after.pause_reason)}", as_json=as_json,
             pager=e.pager)


def resume(
    ctx: typer.Context,
    session: str | None = session_option(),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Lift a pause: `aidp run` pushes the agent on again (as the next prompt would).

    Examples:
    $ aidp todo resume
    """
    from aidp import todos as core

    e = env(ctx)
    done = _apply(e, e.session_name(session), core.resume)
    if not done.written:
        todo_out(done.after, "Not paused; nothing changed", as_json=as_json, pager=e.pager)
        return
    reason = inert(done.before.pause_reason or "")
    todo_out(done.after, f"▶ Resumed (the pause was: {reason})", as_json=as_json,
             pager=e.pager)
