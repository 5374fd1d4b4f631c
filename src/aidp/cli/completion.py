"""Shell completion: `aidp --install-completion` / `--show-completion`, and the answers
the installed script asks for.

The script runs `aidp` with `_AIDP_COMPLETE` set (Click's protocol, with Typer's bash,
zsh and fish scripts). Only then is this module imported: `aidp.cli.run` sees the
variable, builds every command (aidp.cli.startup) and lets `complete` answer, so
ordinary runs keep their start-up floor (tests/test_startup.py). Commands, their options
and subcommands are Click's; this module adds the values: statuses, priorities, formats,
agents, hook events, tags, TODO positions and task ids (the short ids human output
shows, with the description as the shell's hint).

Three private names of Typer and its click are used here, on purpose; each was checked
against the public API of the pinned Typer (0.28) and of click (8.5):

- Typer's shell classes, registered with its click by
  `typer._completion_classes.completion_init`, and its scripts, which `aidp
  --show-completion` prints (`typer._completion_shared.get_completion_script`): Typer
  exports neither (`typer.completion` imports them without re-exporting them, and
  mypy's strict mode refuses the names there). Its one public route,
  `Typer(add_completion=True)`, adds its own options to every command line's parse,
  at every start-up, and installs the script its own way.
- click's public `click.shell_completion` cannot answer for these commands: Typer
  vendors click as `typer._click`, so aidp's commands are not click's classes, and click
  is no dependency of aidp.
- The values are given through the attribute click keeps a parameter's completion in
  (`_custom_shell_complete`, in `add_values`), in completion mode only. Typer's public
  way, `autocompletion=` on each typer.Option and Argument, is given when the command
  is built: a signature inspection per parameter at every start-up (66 parameters take
  values; about 65 µs each at a load of 22, `tasks list` has 7 and `--help` builds them
  all) and this module's values loaded by every command; and its wrapper matches what
  was typed case-sensitively (aidp offers `in_progress` for `IN`:
  tests/cli/test_completion.py). Typer's `shell_complete=` sets the same attribute and is
  deprecated there.

Look again when Typer exports its completion classes and scripts. The shell is
shellingham's answer, as Typer's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidp.core.errors import InvalidInput

if TYPE_CHECKING:
    from typer import CallbackParam as Parameter
    from typer import Context
    from typer.core import TyperGroup

    from aidp.cli.common import Env

COMPLETE_VAR = "_AIDP_COMPLETE"
SHELLS = ("bash", "zsh", "fish")
PROG = "aidp"


def active() -> bool:
    return bool(os.environ.get(COMPLETE_VAR))


# --- answering the shell ---------------------------------------------------------------


def complete(root: TyperGroup) -> int:
    """Print the completions the shell asked for (COMP_WORDS/COMP_CWORD for bash,
    _TYPER_COMPLETE_ARGS for zsh and fish); the exit code for the shell script."""
    from typer._completion_classes import completion_init
    from typer.completion import shell_complete

    completion_init()
    add_values(root)
    try:
        return shell_complete(root, {}, PROG, COMPLETE_VAR, os.environ[COMPLETE_VAR])
    except SystemExit as answer:  # fish's "is-args" answers by exit code
        return answer.code if isinstance(answer.code, int) else 1
    except (KeyError, ValueError) as exc:  # run by hand, without the shell's variables
        from aidp.cli.output import error

        error(f"Incomplete completion request ({exc!s:.80}): {COMPLETE_VAR} is for the "
              "script 'aidp --show-completion' prints")
        return 2


Values = Callable[..., Iterable["str | tuple[str, str]"]]


def add_values(root: TyperGroup) -> None:
    """Give the parameters that take known values a completion of those values.

    Click asks a parameter's `shell_complete` function, which is given when the
    parameter is made (Typer's `autocompletion=`, at every start-up, for every command
    built); aidp gives it here, in completion mode only, by the attribute click keeps
    it in. The commands are click's, whose classes have no public name since Typer
    vendored click: `Any` below."""

    def walk(command: Any, path: tuple[str, ...]) -> None:
        for param in command.params:
            values = _values_for(path, param.name)
            if values is not None:
                param._custom_shell_complete = _completer(values)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, (*path, name))

    walk(root, ())


class Offer:
    """One completion, as click's shell classes read it (its CompletionItem's `value`,
    `type`, `help`; the class itself has no public name since Typer vendored click)."""

    __slots__ = ("help", "type", "value")

    def __init__(self, value: str, help: str | None = None) -> None:
        self.value = value
        self.type = "plain"
        self.help = help


def _completer(values: Values) -> Callable[[Context, Parameter, str], list[Offer]]:
    def shell_complete(ctx: Context, param: Parameter, incomplete: str) -> list[Offer]:
        try:
            found = list(values(ctx, param, incomplete))
        except Exception:  # a completion never breaks the user's shell
            return []
        items = []
        for value in found:
            text, hint = value if isinstance(value, tuple) else (value, None)
            if text.lower().startswith(incomplete.lower()):
                items.append(Offer(text, help=hint))
        return items

    return shell_complete


def _fixed(*words: str) -> Values:
    return lambda ctx, param, incomplete: words


def _values_for(path: tuple[str, ...], name: str | None) -> Values | None:
    from aidp.core.model import PRIORITIES, STATUSES
    from aidp.views import render

    command = " ".join(path)
    if name in ("status", "status_arg"):
        return _fixed(*STATUSES, "open", "all")
    if name == "priority":
        return _fixed(*PRIORITIES)
    if name == "sort":
        from aidp.backlog.tasks import SORTS

        return _fixed(*SORTS)
    if name == "fmt":
        if command == "tasks export":
            from aidp.interchange import EXPORT_FORMATS

            return _fixed(*EXPORT_FORMATS)
        return _fixed(*render.FORMATS)
    if name == "source" and command == "tasks import":
        from aidp.interchange import IMPORT_FORMATS

        return _fixed(*IMPORT_FORMATS)
    if name == "source" and command == "todo load":
        return _sessions
    if name == "agent" and command == "run":
        from aidp.agent.presets import PRESETS

        return _fixed(*PRESETS)
    if name == "agent" and command in ("setup", "hook"):
        from aidp.agent.agents import hooked

        return _fixed(*(adapter.name for adapter in hooked()))
    if name == "event" and command == "hook":
        return _hook_events
    if name in ("tag", "add_tag", "remove_tag"):
        return _tags
    if name == "position" and path[:1] == ("todo",):
        return _positions
    if name == "session":
        return _sessions
    if name in ("ids", "task_id", "more", "on", "blocked_by", "parent"):
        return _task_ids(command)
    return None


# --- values read from the project -------------------------------------------------------


def _env(ctx: Context) -> Env:
    """The command's Env as the words typed so far give it; its reads tell nothing (no
    warning of damaged lines lands in the shell's prompt)."""
    from aidp.cli.common import Env

    top = ctx.find_root().params
    e = Env(directory=top.get("directory"), session=top.get("session"))
    e.quiet_reads = True
    return e


# Which tasks an id may name, by command: the ones the command would change.
_REOPENABLE = ("done", "abandoned")


# At most this many ids are offered (best first: priority, then newest): a Tab press on
# a backlog of 50,000 open tasks answers at once, and typing narrows the rest.
MAX_IDS = 200


def _task_ids(command: str) -> Values:
    def values(ctx: Context, param: Parameter, incomplete: str) -> Iterator[tuple[str, str]]:
        from aidp.backlog import tasks
        from aidp.core.model import OPEN_STATUSES, STATUSES, priority_rank

        fold = _env(ctx).log.read()
        if command == "tasks reopen":
            statuses: tuple[str, ...] = _REOPENABLE
        elif command in ("tasks show", "tasks history"):
            statuses = STATUSES
        else:
            statuses = OPEN_STATUSES
        given = _already_given(ctx)
        needle = incomplete.lower()
        # From the index's columns: no task is decoded until it is one to offer.
        rows = [row for row in fold.summaries(statuses)
                if row[0] not in given and _matches(row[0], needle)]
        rows.sort(key=lambda row: (priority_rank(row[1]), -row[2]))
        chosen = [row[0] for row in rows[:MAX_IDS]]
        short = tasks.short_ids(fold, chosen)
        for full in chosen:
            hex_part = full.rpartition("_")[2]
            shown = short.get(full, full)
            if not shown.lower().startswith(needle):
                shown = hex_part if hex_part.lower().startswith(needle) else full
            yield shown, _hint(fold.tasks[full].get("description", ""))

    return values


def _matches(full: str, needle: str) -> bool:
    return (not needle or full.lower().startswith(needle)
            or full.rpartition("_")[2].lower().startswith(needle))


def _already_given(ctx: Context) -> set[str]:
    """Full ids of the tasks already named on the command line (done A B <TAB>)."""
    from aidp.backlog import tasks

    named: list[str] = []
    for key in ("ids", "task_id", "more", "on"):
        value = ctx.params.get(key)
        named.extend(value if isinstance(value, (list, tuple)) else [value] if value else [])
    if not named:
        return set()
    fold = _env(ctx).log.read()
    found = set()
    for ref in named:
        try:
            found.add(tasks.resolve_id(fold, ref))
        except Exception:  # half-typed or unknown: nothing to leave out
            pass
    return found


def _hint(text: object) -> str:
    from aidp.core.terminal import inert

    # One line, no escape sequences, and no rich markup (Typer renders zsh/fish hints).
    return inert(" ".join(str(text).split()))[:60].replace("[", "\\[")


def _tags(ctx: Context, param: Parameter, incomplete: str) -> list[str]:
    from aidp.core.model import OPEN_STATUSES
    counts = _env(ctx).log.read().tag_counts(OPEN_STATUSES)  # the store's tag tally
    return sorted(counts)


def _sessions(ctx: Context, param: Parameter, incomplete: str) -> list[str]:
    from aidp.app.plans import sessions

    return sessions(_env(ctx).project)


def _positions(ctx: Context, param: Parameter, incomplete: str) -> Iterator[tuple[str, str]]:
    from aidp.app.plans import read_plan

    e = _env(ctx)
    group = ctx.parent.params if ctx.parent else {}
    session = ctx.params.get("session") or group.get("session")
    todo = read_plan(e.project, e.session_name(session))
    for number, item in enumerate(todo.visible, start=1):
        yield str(number), _hint(item.get("content", ""))
        for sub_number, sub in enumerate(item.get("subtasks") or [], start=1):
            yield f"{number}.{sub_number}", _hint(sub.get("content", ""))


def _hook_events(ctx: Context, param: Parameter, incomplete: str) -> list[str]:
    from aidp.agent.agents import hooked

    events = {a.name: list(a.hooks.events) for a in hooked() if a.hooks is not None}
    agent = ctx.params.get("agent")
    if agent in events:
        return events[agent]
    return sorted({event for names in events.values() for event in names})


# --- --show-completion / --install-completion -------------------------------------------


def shell_named(args: list[str], option: str) -> str:
    """The shell given after the option (`--install-completion zsh`), else the one
    this process runs under, else $SHELL's."""
    at = args.index(option) if option in args else -1
    given = args[at + 1] if 0 <= at < len(args) - 1 else None
    shell: str | None
    if given is not None and not given.startswith("-"):
        shell = given.lower()
    else:
        shell = _detected()
        if shell is None:
            raise InvalidInput(
                f"Cannot tell which shell you use: name it, e.g. '{option} bash' "
                f"({', '.join(SHELLS)})"
            )
    if shell not in SHELLS:
        raise InvalidInput(f"Invalid shell {shell!r} for {option}: use one of {', '.join(SHELLS)}")
    return shell


def _detected() -> str | None:
    import shellingham  # the process tree's shell, as Typer itself tells it

    name: str | None  # shellingham is untyped
    try:
        name, _command = shellingham.detect_shell()
    except Exception:  # no /proc, an odd process tree
        name = None
    if name:
        return name.lower()
    return Path(os.environ.get("SHELL", "")).name.lower() or None


def script(shell: str) -> str:
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell)


def install(shell: str) -> tuple[Path, list[Path]]:
    """Write the script where the shell loads it from; return its path and the start-up
    files changed to load it. Nothing outside the home folder is touched. The script
    comes first: a start-up file that cannot be changed leaves no line naming a
    missing script."""
    home = Path.home()
    text = script(shell) + "\n"
    rc: tuple[Path, str] | None = None
    if shell == "bash":
        path = home / ".bash_completions" / f"{PROG}.sh"
        rc = (home / ".bashrc", f"source '{path}'")
    elif shell == "zsh":
        path = home / ".zfunc" / f"_{PROG}"
        rc = (home / ".zshrc", "fpath+=~/.zfunc; autoload -Uz compinit; compinit")
    else:
        path = home / ".config" / "fish" / "completions" / f"{PROG}.fish"
    where = path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rc is None:
            return path, []
        where = rc[0]
        return path, _add_line(*rc)
    except OSError as exc:
        from aidp.core.errors import StorageError
        from aidp.core.terminal import inert

        raise StorageError(f"Cannot install the {shell} completion: cannot write "
                           f"{inert(str(where))}: {exc.strerror or exc}; "
                           f"'aidp --show-completion {shell}' prints the script to place "
                           "yourself") from None


def _add_line(rc: Path, line: str) -> list[Path]:
    """Append `line` to the start-up file unless it holds it already (so installing
    twice changes nothing). Bytes: a start-up file need not be UTF-8."""
    before = rc.read_bytes() if rc.is_file() else b""
    wanted = line.encode()
    if wanted in before.splitlines():
        return []
    with rc.open("ab") as handle:
        handle.write((b"" if before.endswith(b"\n") or not before else b"\n") + wanted + b"\n")
    return [rc]


def show_or_install(e: Env, *, install_it: bool) -> None:
    option = "--install-completion" if install_it else "--show-completion"
    shell = shell_named(e.command_line, option)
    if not install_it:
        sys.stdout.write(script(shell) + "\n")
        return
    path, changed = install(shell)
    e.wrote()
    from aidp.core.terminal import inert

    also = "".join(f"; {inert(str(rc))} loads it" for rc in changed)
    sys.stdout.write(f"{shell} completion installed in {inert(str(path))}{also}\n"
                     "Open a new shell for it to take effect\n")
