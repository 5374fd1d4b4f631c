"""The command line: thin Typer apps, one module per group, and the one error boundary.

Core code raises `AidpError`s; only `run` below turns them (and Typer's usage errors)
into a one-line `Error: …` on stderr and an exit code from `ExitCode`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from aidp import __version__
from aidp.cli.common import Env
from aidp.errors import AidpError, ExitCode

app = typer.Typer(
    name="aidp",
    help="A git-tracked, append-only backlog and TODO list for AI coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["--help", "-h"]},
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"aidp {__version__}\n")
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
        help="Session for todo/run. Default: AIDP_SESSION, else the git branch, else 'default'.",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """A git-tracked, append-only backlog and TODO list for AI coding agents."""
    ctx.obj = Env(directory=directory, session=session)


def _register() -> None:
    from aidp.cli import init, tasks, todo
    from aidp.cli import run as run_cli

    app.add_typer(tasks.app, name="tasks")
    app.add_typer(todo.app, name="todo")
    app.command("init")(init.init)
    app.command("run")(run_cli.run)


_register()


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; every expected error ends here."""
    from typer._click.exceptions import ClickException
    from typer.exceptions import Abort

    command = typer.main.get_command(app)
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = command.main(args=args, prog_name="aidp", standalone_mode=False)
    except ClickException as exc:
        _error(exc.format_message(), hint=_hint(exc))
        return exc.exit_code
    except AidpError as exc:
        _error(str(exc))
        return exc.exit_code
    except Abort:
        return ExitCode.INTERRUPTED
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return _broken_pipe()
    return result if isinstance(result, int) else ExitCode.OK


def _hint(exc: Exception) -> str | None:
    ctx = getattr(exc, "ctx", None)
    if ctx is None:
        return None
    return f"see '{ctx.command_path} --help'"


def _error(message: str, *, hint: str | None = None) -> None:
    from aidp.render import inert

    # One line, whatever the message held, and inert: it may quote user input such as
    # an unknown id, which must never put an escape sequence on the terminal.
    line = inert(" ".join(message.split()))
    sys.stderr.write(f"Error: {line}" + (f" ({hint})" if hint else "") + "\n")


def _broken_pipe() -> int:
    # The reader went away (aidp tasks list | head): not an error worth a traceback.
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return ExitCode.OK


def main() -> None:
    sys.exit(run())
