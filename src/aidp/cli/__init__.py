"""The command line: Typer glue (parse, call, render) and the one error boundary.

Core code raises `AidpError`s; only `run` below turns them (and Typer's usage errors)
into a one-line `Error: …` on stderr and an exit code from `ExitCode`.

    startup.py     the table of commands (which module holds each), the app built for a
                   command line, the global options, the collector at start-up
    common.py      what every command shares: `Env` (the project, the session, the
                   lock's wait), the options' help, ids and bodies as given
    output.py      what commands print: the error line, colour, JSON, task lists in
                   every --format
    streams.py     stdout and stderr guarded (never raising, inert on a terminal)
    completion.py  shell completion, loaded only when the shell asks
    user_files.py  the files a person names (--html, -o): whole or not at all
    hints.py       what a usage error adds to its line: the command meant, the option
                   that works
    editor.py      `tasks edit` in $VISUAL / $EDITOR

and the commands, one module per group or command: tasks.py (the group's own),
tasks_list.py, tasks_show.py, queue.py (the work queue), claims.py (claim, release),
history.py (history, undo), exchange.py (export, import), gitcmds.py (sync, changes,
textconv), todo.py, todo_lists.py (list, load), runner.py (`run`), init.py, agents.py,
trust.py, prime.py, setup.py, hook.py, mcp.py, report.py.
"""

import errno
import os
import sys
from collections.abc import Sequence

# First: the collector stays off while the CLI loads, until startup.loaded() at the end.
from aidp.cli import startup

# isort: split
import typer

from aidp.cli.common import Env
from aidp.cli.output import error
from aidp.cli.streams import guard_streams
from aidp.core.errors import AidpError, ExitCode


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


def run(argv: Sequence[str] | None = None, *, one_shot: bool = False,
        env: Env | None = None) -> int:
    """Run the CLI and return its exit code; every expected error ends here. `env`: the
    Env the command runs in, kept by the caller to ask what it saved (main, `run -i`'s
    /commands: Env.run_command); else one made here, `one_shot` when the process ends
    after this command (what its reads fold may then be frozen)."""
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
    if os.environ.get("_AIDP_COMPLETE"):  # the shell asks for completions: see cli/completion
        from aidp.cli import completion

        return completion.complete(startup.command())
    command = startup.command(args)
    e = Env(dispatch=run, one_shot=one_shot) if env is None else env
    e.command_line = list(args)
    try:
        result = command.main(args=args, prog_name="aidp", standalone_mode=False, obj=e)
    except typer.TyperException as exc:  # Typer's (and its click's) usage errors
        if type(exc).__name__ == "NoArgsIsHelpError":  # as Typer itself tells it (rich_utils)
            # `aidp` or `aidp tasks` alone: the help was printed; no command is bad usage.
            return exc.exit_code
        from aidp.cli.hints import hint, suggest

        error(suggest(exc) or exc.format_message(), hint=hint(exc))
        return exc.exit_code
    except AidpError as exc:
        from aidp.cli.hints import hint

        error(str(exc), hint=hint(exc))
        return exc.exit_code
    except typer.Abort as exc:
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
    e = Env(dispatch=run, one_shot=startup.one_shot(sys.argv[1:]))
    code = run(env=e)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    failed = out.error
    if failed is not None and failed.errno not in (errno.EPIPE, errno.EBADF):
        # Not a reader that went away: the output is lost (a full disk, an I/O error).
        reason = failed.strerror or str(failed)
        saved = e.saved()
        error(f"Cannot write the output: {reason}"
              + ("; the change itself was saved" if saved else ""))
        if code == ExitCode.OK and not saved:
            code = ExitCode.FAILURE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    sys.exit(code)


startup.loaded()  # the CLI has loaded: see aidp.cli.startup
