"""The command line: thin Typer apps, one module per group, and the one error boundary.

Core code raises `AidpError`s; only `run` below turns them (and Typer's usage errors)
into a one-line `Error: …` on stderr and an exit code from `ExitCode`.
"""

# No `from __future__ import annotations` here: Typer reads the global options'
# annotations (`_global`) at every start-up, and a string annotation costs an eval each.

import errno
import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

# Loading Typer and the CLI's modules makes thousands of objects and no reference cycles
# worth collecting, yet sets off a collection every 700 of them (~5 ms of a 100 ms
# `tasks list`): none while this module loads nor while run() builds the command. What
# loaded is then frozen (gc.freeze, at the end): it lives as long as the process, so no
# later pass walks it again — neither the first one once collecting is back on (~2 ms,
# 18k objects) nor the full ones at exit.
_COLLECTING = gc.isenabled()
gc.disable()

import typer  # noqa: E402

from aidp import __version__  # noqa: E402
from aidp.cli.common import Env, command_name  # noqa: E402
from aidp.cli.output import error  # noqa: E402
from aidp.cli.streams import guard_streams  # noqa: E402
from aidp.core.errors import AidpError, ExitCode  # noqa: E402

if TYPE_CHECKING:
    from typer._click.core import Command

app = typer.Typer(
    name="aidp",
    help="A git-tracked, append-only backlog and TODO list for AI coding agents.\n\n"
    "Examples:\n$ aidp init\n$ aidp tasks add \"Fix the flaky login test\" -p high",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["--help", "-h"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"aidp {__version__}\n")
        raise typer.Exit(0)


def _install_completion(value: bool) -> None:
    if value:
        from aidp.cli import common, completion

        completion.show_or_install(common.COMMAND_LINE, install_it=True)
        raise typer.Exit(0)


def _show_completion(value: bool) -> None:
    if value:
        from aidp.cli import common, completion

        completion.show_or_install(common.COMMAND_LINE, install_it=False)
        raise typer.Exit(0)


@app.callback()
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
    ctx.obj = Env(directory=directory, session=session, lock_timeout=lock_timeout, dispatch=run)
    from aidp.views import render

    render.PAGER["off"] = no_pager


def _register(only: str | None = None, sub: str | None = None) -> None:
    """Attach the command groups, in the order `aidp --help` lists them.

    Start-up is the product (aidp runs many times a minute): with `only`, just the group
    the command line names is imported, so `aidp tasks list` never loads the todo, init
    or run (agent) code. Anything registered without such a guard is always loaded:
    slower, never wrong. tests/test_startup.py keeps this honest. `sub`: the word after
    the group, when the command line names one.
    """
    app.registered_groups.clear()
    app.registered_commands.clear()
    if only in (None, "tasks"):
        from aidp.cli import tasks

        tasks.with_commands(sub if only == "tasks" else None)
        app.add_typer(tasks.app, name="tasks")
    if only in (None, "todo"):
        from aidp.cli import todo

        app.add_typer(todo.app, name="todo")
    if only in (None, "init"):
        from aidp.cli import init

        app.command("init")(init.init)
    if only in (None, "sync"):
        from aidp.cli import gitcmds

        app.command("sync")(gitcmds.sync)
    if only in (None, "run"):
        from aidp.cli import runner  # not cli/run.py: `aidp.cli.run` is the entry point

        app.command("run")(runner.run)
    if only in (None, "agents"):
        from aidp.cli import agents as agents_cli

        app.command("agents")(agents_cli.agents)
    if only in (None, "trust"):
        from aidp.cli import trust as trust_cli

        app.command("trust")(trust_cli.trust)
    if only in (None, "prime"):
        from aidp.cli import prime

        app.command("prime")(prime.prime)
    if only in (None, "setup"):
        from aidp.cli import setup

        app.command("setup")(setup.setup)
    if only in (None, "hook"):
        from aidp.cli import hook

        app.command("hook")(hook.hook)
    if only in (None, "mcp"):
        from aidp.cli import mcp

        app.command("mcp")(mcp.mcp)
    if only in (None, "report"):
        from aidp.cli import report

        app.command("report")(report.report)


_VALUED_GLOBALS = ("--dir", "--session", "--lock-timeout")


_LONG_RUNNING = ("mcp", "run")  # commands that read many times: see aidp.tasklist.fold.FREEZE


def _named_command(args: Sequence[str]) -> tuple[str | None, str | None]:
    """The group (or command) the arguments name after the global options, and the
    word right after it (a group's subcommand); None when everything is needed (no
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


def _command_for(args: Sequence[str]) -> "Command":
    group, sub = _named_command(args)
    _register(group, sub)
    if not app.registered_groups and not app.registered_commands:
        _register()  # an unknown name: its error lists every command
    elif sub is not None:
        _only_subcommand(sub)
    command = typer.main.get_command(app)
    if sub is None:  # a group's list of commands may be shown: `aidp --help`, `aidp tasks`
        _one_line_summaries(command)
    return command


def _one_line_summaries(command: "Command") -> None:
    """A list of commands shows each one's first paragraph, which its docstring wraps at
    the source's width; Typer's rich help keeps those line breaks, so a description broke
    mid-sentence (`… diff rules in` / `.gitattributes …`). Give each the paragraph as
    one line, for the help to wrap at the terminal's width."""
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            first = sub.help.strip().split("\n\n", 1)[0]
            sub.short_help = " ".join(first.split())
        _one_line_summaries(sub)


def _only_subcommand(name: str) -> None:
    """Typer builds every command of a group (signatures, parameters) before it runs
    one: give it a copy of the group holding just the named command. A name the group
    does not have keeps the whole group, so its error and help list everything."""
    import copy

    for info in app.registered_groups:
        group = info.typer_instance
        if group is None:
            continue
        chosen = [
            command for command in group.registered_commands
            if command_name(command) == name
        ]
        if chosen and not group.registered_groups:
            pruned = copy.copy(group)
            pruned.registered_commands = chosen
            info.typer_instance = pruned


def _has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate (U+D800–U+DFFF), the one thing UTF-8 cannot
    encode (no pattern compiled for it at every start-up)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _as_utf8(arg: str) -> str:
    """Under an ASCII-only locale (LANG=C without UTF-8 coercion) Python decodes the
    command line as ASCII, so valid UTF-8 arrives as lone surrogates: read it as UTF-8."""
    if not _has_surrogate(arg):
        return arg
    try:
        return arg.encode(sys.getfilesystemencoding(), "surrogateescape").decode("utf-8")
    except (UnicodeError, LookupError):
        return arg


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; every expected error ends here."""
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
    from typer.exceptions import Abort

    args = [_as_utf8(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    # Bytes that are not UTF-8 reach Python as lone surrogates, which cannot be stored
    # in the UTF-8 tasklist: refuse them here, for every command at once.
    named = [(f"argument {n}", arg) for n, arg in enumerate(args, start=1)]
    named.append(("AIDP_SESSION", os.environ.get("AIDP_SESSION", "")))
    for what, value in named:
        if _has_surrogate(value):
            shown = value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            error(f"Invalid {what} '{shown}': it is not valid UTF-8 text")
            return ExitCode.USAGE
    from aidp.cli import common

    common.COMMAND_LINE = args
    if os.environ.get("_AIDP_COMPLETE"):  # the shell asks for completions: see cli/completion
        from aidp.cli import completion

        _register()
        return completion.complete(typer.main.get_command(app))
    collecting = gc.isenabled()
    gc.disable()
    try:
        command = _command_for(args)
    finally:
        if collecting:
            gc.enable()
    try:
        result = command.main(args=args, prog_name="aidp", standalone_mode=False)
    except NoArgsIsHelpError as exc:
        # `aidp` or `aidp tasks` alone: the help was printed; no command is bad usage.
        return exc.exit_code
    except ClickException as exc:
        from aidp.cli.hints import hint, suggest

        error(suggest(exc) or exc.format_message(), hint=hint(exc))
        return exc.exit_code
    except AidpError as exc:
        error(str(exc))
        return exc.exit_code
    except Abort as exc:
        if isinstance(exc.__cause__, EOFError):
            # Typer turns an EOFError into the Abort of a Ctrl-C: input that ended is an
            # error the user should see, not an interruption.
            error("Unexpected end of input: stdin ended while the command was reading "
                   "it (give the input on stdin, or run it at a terminal)")
            return ExitCode.USAGE
        return ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return _broken_pipe()
    return result if isinstance(result, int) else ExitCode.OK


def _broken_pipe() -> int:
    # The reader went away (aidp tasks list | head): not an error worth a traceback.
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return ExitCode.OK


def main() -> None:
    """The `aidp` program: run(), then the process ends (unlike run() in a test)."""
    out, _err = guard_streams()
    from aidp.cli import common
    from aidp.tasklist import fold
    from aidp.tasklist.log import TaskLog

    fold.FREEZE = _named_command(sys.argv[1:])[0] not in _LONG_RUNNING  # (see there)

    before = TaskLog.changes
    code = run()
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    failed = out.error
    if failed is not None and failed.errno not in (errno.EPIPE, errno.EBADF):
        # Not a reader that went away: the output is lost (a full disk, an I/O error).
        reason = failed.strerror or str(failed)
        saved = TaskLog.changes > before or common.wrote_outside()
        error(f"Cannot write the output: {reason}"
              + ("; the change itself was saved" if saved else ""))
        if code == ExitCode.OK and not saved:
            code = ExitCode.FAILURE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(code)


gc.freeze()  # see the top
if _COLLECTING:  # loaded: see the top
    gc.enable()
