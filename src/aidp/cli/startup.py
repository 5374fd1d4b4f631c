"""Start-up, in one place: which module holds each command (COMMANDS, the one table),
the Typer app built for a command line with only what that line can run, the global
options, and the garbage collector kept out of the way while all that loads.

aidp runs many times a minute, so a command loads what it runs and no more
(tests/test_startup.py holds it):

- `command(args)` imports only the module of the command the line names (`aidp tasks
  list`: cli/tasks_list.py), and gives Typer only that command to build (Typer reads
  every registered command's signature before it runs one). Help, an unknown name, an
  option before the command word and completion get every command: slower, never
  wrong, and their errors and help list everything.
- Adding a command: its function in a module of cli/ and one row of COMMANDS, in the
  place `aidp --help` (or its group's help) lists it.
- Loading Typer and the CLI makes thousands of objects and no reference cycles worth
  collecting, yet sets off a collection every 700 of them (~5 ms of a 100 ms `tasks
  list`): the collector is off from the import of this module (the first of aidp.cli's)
  until aidp.cli has loaded (`loaded`), and while `command` builds. What loaded is then
  frozen (`gc.freeze`): it lives as long as the process, so no later pass walks it
  again, neither the first once collecting is back on (~2 ms, 18k objects) nor the full
  ones at exit.
- A process that runs one command also freezes what its reads fold (`one_shot`, handed
  to the command's Env and its TaskLog: aidp.tasklist.fold.no_gc), but `mcp` and `run`,
  which read many times.
- The modules Typer reads at every run of their commands (this one, cli/tasks.py,
  tasks_list.py, tasks_show.py, queue.py) have no `from __future__ import
  annotations`: Typer evaluates each string annotation (an eval apiece), where a real
  one is read as it is.

Only Typer's public API: `typer.Typer` apps with `command`, `callback` and
`add_typer`, and `typer.main.get_command` for the command a line runs.
"""

# No `from __future__ import annotations` here: Typer reads the global options'
# annotations (`_global`) at every start-up, and a string annotation costs an eval each.

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

_COLLECTING = gc.isenabled()  # off until the CLI is loaded (aidp.cli calls `loaded`)
gc.disable()

import typer  # noqa: E402
from typer.core import TyperGroup  # noqa: E402

from aidp import __version__  # noqa: E402
from aidp.cli.common import env  # noqa: E402


class Group(NamedTuple):
    """A command group: its help, and the module and function of its own options
    (given between the group's name and its command), if any."""

    help: str
    options: tuple[str, str] | None = None


GROUPS = {
    "tasks": Group(
        "The persistent backlog: tasks filed by people or agents.\n\n"
        "Examples:\n$ aidp tasks list\n$ aidp tasks done 3f2a"),
    "todo": Group(
        "The session TODO list: the agent's ordered working plan, with checklists.\n\n"
        "Examples:\n$ aidp todo add \"Write the failing test\"\n$ aidp todo show",
        options=("todo", "options")),
}

# Positions like -1 must reach the command (whose error lists the accepted forms), not
# click's "No such option": the command checks its options itself (cli/todo.py).
TAKES_DASHES = {"context_settings": {"ignore_unknown_options": True}}


class Command(NamedTuple):
    """One command: its group (None: a command of `aidp` itself), its name, the module
    of aidp.cli that holds it and its function there, and Typer's settings for it."""

    group: str | None
    name: str
    module: str
    function: str
    settings: dict[str, Any] | None = None


# Every command, in the order `aidp --help` and each group's help list them (Typer
# lists the commands of `aidp` itself before the groups).
COMMANDS = (
    Command("tasks", "add", "tasks", "add"),
    Command("tasks", "list", "tasks_list", "list_"),
    Command("tasks", "show", "tasks_show", "show"),
    Command("tasks", "start", "tasks", "start"),
    Command("tasks", "done", "tasks", "done"),
    Command("tasks", "abandon", "tasks", "abandon"),
    Command("tasks", "reopen", "tasks", "reopen"),
    Command("tasks", "stats", "tasks", "stats"),
    Command("tasks", "repair", "tasks", "repair"),
    Command("tasks", "compact", "tasks", "compact"),
    Command("tasks", "changes", "gitcmds", "changes"),
    Command("tasks", "textconv", "gitcmds", "textconv"),
    Command("tasks", "history", "history", "history"),
    Command("tasks", "undo", "history", "undo"),
    Command("tasks", "export", "exchange", "export"),
    Command("tasks", "import", "exchange", "import_"),
    Command("tasks", "ready", "queue", "ready"),
    Command("tasks", "blocked", "queue", "blocked"),
    Command("tasks", "block", "queue", "block"),
    Command("tasks", "unblock", "queue", "unblock"),
    Command("tasks", "edit", "queue", "edit"),
    Command("tasks", "note", "queue", "note"),
    Command("tasks", "claim", "claims", "claim"),
    Command("tasks", "release", "claims", "release"),
    Command("todo", "show", "todo", "show"),
    Command("todo", "add", "todo", "add", TAKES_DASHES),
    Command("todo", "delete", "todo", "delete", TAKES_DASHES),
    Command("todo", "tick", "todo", "tick", TAKES_DASHES),
    Command("todo", "untick", "todo", "untick", TAKES_DASHES),
    Command("todo", "start", "todo", "start", TAKES_DASHES),
    Command("todo", "clear", "todo", "clear"),
    Command("todo", "pause", "todo", "pause"),
    Command("todo", "resume", "todo", "resume"),
    Command("todo", "list", "todo_lists", "list_"),
    Command("todo", "load", "todo_lists", "load"),
    Command(None, "init", "init", "init"),
    Command(None, "sync", "gitcmds", "sync"),
    Command(None, "run", "runner", "run"),  # not cli/run.py: `aidp.cli.run` is the entry point
    Command(None, "agents", "agents", "agents"),
    Command(None, "trust", "trust", "trust"),
    Command(None, "prime", "prime", "prime"),
    Command(None, "setup", "setup", "setup"),
    Command(None, "hook", "hook", "hook"),
    Command(None, "mcp", "mcp", "mcp"),
    Command(None, "report", "report", "report"),
    Command(None, "board", "board", "board"),
)

# Commands that read many times in one process: what their folds make is not frozen.
LONG_RUNNING = ("mcp", "run", "board")

_VALUED_GLOBALS = ("--dir", "--session", "--lock-timeout")


def named_command(args: Sequence[str]) -> tuple[str | None, str | None]:
    """The group (or command) the arguments name after the global options, and the
    word right after it (a group's command); None when everything is needed (no
    command, --help before it, an option after the group)."""
    skip = False
    for at, arg in enumerate(args):
        if skip:
            skip = False
        elif arg in _VALUED_GLOBALS:
            skip = True
        elif arg in ("--help", "-h"):
            return None, None
        elif not arg.startswith("-") or arg == "-":
            following = args[at + 1] if at + 1 < len(args) else None
            if following is not None and following.startswith("-"):
                following = None
            return arg, following
    return None, None


def one_shot(args: Sequence[str]) -> bool:
    """Whether the process ends after this one command (so what it folds may be frozen)."""
    return named_command(args)[0] not in LONG_RUNNING


def needed(args: Sequence[str] | None) -> list[Command]:
    """The commands a command line may run (None: every one): the one it names; a
    group's every command when it names none or one the group does not have (its
    error lists them); every command for help or a name aidp does not have."""
    if args is None:
        return list(COMMANDS)
    first, second = named_command(args)
    if first in GROUPS:
        own = [c for c in COMMANDS if c.group == first]
        chosen = [c for c in own if c.name == second]
        return chosen or own
    chosen = [c for c in COMMANDS if c.group is None and c.name == first]
    return chosen or list(COMMANDS)


def command(args: Sequence[str] | None = None) -> TyperGroup:
    """The `aidp` command for a command line, holding only what `needed` says it may
    run (None: every command, for help, completion and the docs' tests)."""
    with collector_off():
        root = _root()
        groups: dict[str, typer.Typer] = {}
        for wanted in needed(args):
            function = _function(wanted.module, wanted.function)
            if wanted.group is None:
                root.command(wanted.name, **(wanted.settings or {}))(function)
                continue
            if wanted.group not in groups:
                groups[wanted.group] = _group(wanted.group)
            groups[wanted.group].command(wanted.name, **(wanted.settings or {}))(function)
        for name, group in groups.items():
            root.add_typer(group, name=name)
        built = typer.main.get_command(root)
    assert isinstance(built, TyperGroup)  # an app with a callback is a group
    if args is not None and named_command(args)[1] is None:
        # A list of commands may be shown (`aidp --help`, `aidp tasks`); not for the
        # shell's completion (args None), whose hints are click's shortened first lines.
        _one_line_summaries(built)
    return built


def _one_line_summaries(command: Any) -> None:
    """A list of commands shows each one's first paragraph, which its docstring wraps at
    the source's width; Typer's rich help keeps those line breaks, so a description broke
    mid-sentence (`… diff rules in` / `.gitattributes …`). Give each the paragraph as
    one line, for the help to wrap at the terminal's width. (`command`: click's, whose
    classes have no public name since Typer vendored click.)"""
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            first = sub.help.strip().split("\n\n", 1)[0]
            sub.short_help = " ".join(first.split())
        _one_line_summaries(sub)


def _function(module: str, name: str) -> Callable[..., Any]:
    # __import__, not importlib.import_module: the same import, and the one that
    # `python -X importtime` reports (tests/test_startup.py reads that report).
    found: Callable[..., Any] = getattr(__import__(f"aidp.cli.{module}", fromlist=[name]), name)
    return found


def _group(name: str) -> typer.Typer:
    spec = GROUPS[name]
    group = typer.Typer(help=spec.help, no_args_is_help=True)
    if spec.options is not None:
        group.callback()(_function(*spec.options))
    return group


@contextmanager
def collector_off() -> Iterator[None]:
    """No cyclic collection while commands are loaded and built (see the top)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


# --- the global options: `aidp [OPTIONS] COMMAND` ----------------------------------------

ROOT_HELP = ("A git-tracked, append-only backlog and TODO list for AI coding agents.\n\n"
             "Examples:\n$ aidp init\n$ aidp tasks add \"Fix the flaky login test\" -p high")


def _root() -> typer.Typer:
    root = typer.Typer(
        name="aidp",
        help=ROOT_HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["--help", "-h"]},
    )
    root.callback()(_global)
    return root


def _version(value: bool) -> None:
    if value:
        import sys

        sys.stdout.write(f"aidp {__version__}\n")
        raise typer.Exit(0)


def _install_completion(ctx: typer.Context, value: bool) -> None:
    if value:
        from aidp.cli import completion

        completion.show_or_install(env(ctx), install_it=True)
        raise typer.Exit(0)


def _show_completion(ctx: typer.Context, value: bool) -> None:
    if value:
        from aidp.cli import completion

        completion.show_or_install(env(ctx), install_it=False)
        raise typer.Exit(0)


def _global(
    ctx: typer.Context,
    directory: str = typer.Option(
        None,
        "--dir",
        metavar="PATH",
        help="Project root (the folder holding .aidp/). Default: AIDP_DIR, else found like git.",
    ),
    session: str = typer.Option(
        None,
        "--session",
        metavar="NAME",
        help="Session for todo/run. Default: AIDP_SESSION, else <git branch>@<git identity>, "
        "else 'default'.",
    ),
    lock_timeout: str = typer.Option(
        None,
        "--lock-timeout",
        metavar="SECONDS",
        help="How long a write waits for another writer's lock. Default: AIDP_LOCK_TIMEOUT, "
        "else 30.",
    ),
    no_pager: bool = typer.Option(
        False, "--no-pager",
        help="Print long output straight to the terminal; by default it goes through "
        "AIDP_PAGER, else PAGER, else less (never when piped).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    install_completion: bool = typer.Option(
        False, "--install-completion", callback=_install_completion, is_eager=True,
        expose_value=False,
        help="Install tab completion for your shell (or the one named after it: bash, zsh, "
        "fish) and exit.",
    ),
    show_completion: bool = typer.Option(
        False, "--show-completion", callback=_show_completion, is_eager=True,
        expose_value=False,
        help="Print the completion script for your shell (or bash, zsh, fish) and exit.",
    ),
) -> None:
    """A git-tracked, append-only backlog and TODO list for AI coding agents."""
    e = env(ctx)
    e.directory, e.session, e.lock_timeout = directory, session, lock_timeout
    e.pager = not no_pager


def loaded() -> None:
    """The CLI has loaded (the end of aidp/cli/__init__.py): what it made lives as long as
    the process, so it is frozen, and collecting goes on as before (see the top)."""
    gc.freeze()
    if _COLLECTING:
        gc.enable()
