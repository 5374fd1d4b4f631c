"""What every command shares: the resolved project, session, and output helpers."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

import typer

from aidp.app.project import Project, StoreReader
from aidp.core.errors import InvalidInput
from aidp.tasklist.log import Fold, TaskLog, parse_lock_timeout
from aidp.tasklist.paths import DATA_DIR, find_root


class Dispatch(Protocol):
    """aidp.cli.run: a command line run through the CLI's error boundary, in `env`."""

    def __call__(self, argv: Sequence[str] | None = None, *, env: Env | None = None) -> int: ...


# What to do about a missing .aidp/ folder (Env.missing).
ELSEWHERE = "'aidp init' starts one, --dir or AIDP_DIR names another project"


class Env:
    """One command's run of the CLI: the global options, the command line, the project
    it opens (once) and how it may print.

    `command_line`: the arguments as given, for the few checks that must know what the
    parser hides (which words followed `--`: aidp.cli.todo). `dispatch`: aidp.cli.run,
    for `aidp run -i`'s /commands (cli/ is below it). `one_shot`: the process ends after
    this command (aidp.cli.main; aidp.cli.startup.one_shot), so what its reads fold may
    be frozen (TaskLog.freeze). `pager`: long output on a terminal may go through the
    pager (not with --no-pager: aidp.views.render.write_text). `saved()`: whether the
    command saved a change (aidp.cli.main: a report lost to a full disk or a closed
    stdout then still exits 0)."""

    # A plain class, not a dataclass: see aidp.core.plain.Plain.
    def __init__(self, directory: str | None = None, session: str | None = None,
                 lock_timeout: str | None = None,
                 dispatch: Dispatch | None = None, *,
                 command_line: Sequence[str] = (), one_shot: bool = False) -> None:
        self.directory = directory
        self._session = session
        self.lock_timeout = lock_timeout
        self._dispatch = dispatch
        self.command_line = list(command_line)
        self.one_shot = one_shot
        self.pager = True
        self.warned = False
        self._said_missing = False
        self.quiet_reads = False  # see _heard
        self.wrote_outside = False  # see wrote
        self._commands: list[Env] = []  # the commands run_command ran in this one
        self._opened: list[Project] = []  # see opened

    def __repr__(self) -> str:
        return f"Env(directory={self.directory!r}, session={self.session!r})"

    @property
    def session(self) -> str | None:
        """The session named on the command line (--session: the global one, or a
        group's, `todo --session`, `run --session`)."""
        return self._session

    @session.setter
    def session(self, name: str | None) -> None:
        self._session = name
        if "project" in self.__dict__:  # opened already: it works on this one now
            self.project.named_session = name

    @cached_property
    def root(self) -> Path:
        root = find_root(self.directory)
        given = self.directory if self.directory not in (None, "") else os.environ.get("AIDP_DIR")
        if given and not root.is_dir():
            # A mistyped --dir must not read as an empty backlog ("No open tasks").
            what = "--dir" if self.directory not in (None, "") else "AIDP_DIR"
            problem = "is not a folder" if root.exists() else "does not exist"
            raise InvalidInput(
                f"Invalid {what} '{given}': the project folder {root} {problem} "
                "(give an existing folder; 'aidp init' sets up a new project in one)"
            )
        return root

    @cached_property
    def project(self) -> Project:
        """The project this command works on, opened once: reads go through the store
        (imported on the first read; a missing one is built in the background)."""
        timeout = None
        if self.lock_timeout is not None:
            timeout = parse_lock_timeout(self.lock_timeout)
        return Project(self.root, session=self.session, reader=StoreReader(background=True),
                       lock_timeout=timeout, on_wait=_say_waiting, on_notice=_say_notice,
                       on_read=self._heard, freeze=self.one_shot)

    @property
    def log(self) -> TaskLog:
        return self.project.log

    def write(self, text: str) -> None:
        """Human output of this command: long text on a terminal goes through the pager,
        unless --no-pager (aidp.views.render.write_text)."""
        from aidp.views import render

        render.write_text(text, pager=self.pager)

    def run_command(self, args: Sequence[str]) -> int:
        """Run an aidp command line in this process, through the CLI's one error boundary
        (aidp.cli.run), in an Env of its own (what it saved counts as this command's):
        `aidp run -i`'s /commands. Its exit code."""
        if self._dispatch is None:  # a group's app invoked on its own, without aidp.cli
            raise RuntimeError("no aidp command line to run commands through")
        inner = Env(dispatch=self._dispatch)
        self._commands.append(inner)
        return self._dispatch(args, env=inner)

    def wrote(self) -> None:
        """The command changed something outside the tasklist (a file it wrote, git
        config, what the user trusts): saved, as a tasklist change is."""
        self.wrote_outside = True

    def opened(self, project: Project) -> Project:
        """A project the command opened itself (the MCP server's, the board's): what it
        writes counts as the command's (saved)."""
        self._opened.append(project)
        return project

    def saved(self) -> bool:
        """Whether the command saved a change: a write to a tasklist of its projects, a
        file outside them (wrote), or either in a command it ran (run_command)."""
        projects = [*([self.project] if "project" in self.__dict__ else []), *self._opened]
        return (any(p.log.changes for p in projects) or self.wrote_outside
                or any(c.saved() for c in self._commands))

    def session_name(self, override: str | None = None) -> str:
        return self.project.session(override)

    def read(self) -> Fold:
        """The folded state, with what a command tells of a read (`_told`)."""
        fold = self.project.read()
        self._told(fold)
        return fold

    def _heard(self, fold: Fold) -> None:
        """A read the use cases made: told as the command's own, except inside an agent
        (`aidp hook`, the loop of `aidp run`: `quiet_reads`), whose reads never did."""
        if not self.quiet_reads:
            self._told(fold)

    def _told(self, fold: Fold) -> None:
        """What a command tells of a read, once: damaged lines, and that there is no
        tasklist where aidp looked."""
        self.warn_damage(fold)
        self.note_missing()

    def missing(self) -> str | None:
        """Where aidp looked for the project's .aidp/ folder and found none; None when
        it is there. A read then answers as for an empty backlog, which in the wrong
        folder misleads: a person is told on stderr (note_missing), and `list
        --exit-code` fails."""
        if (self.root / DATA_DIR).is_dir():
            return None
        from aidp.core.terminal import inert

        where = inert(str(self.root))
        if self.directory not in (None, ""):
            return f"no {DATA_DIR}/ folder in {where}, the folder --dir names"
        if os.environ.get("AIDP_DIR"):
            return f"no {DATA_DIR}/ folder in {where}, the folder AIDP_DIR names"
        return f"no {DATA_DIR}/ folder in {inert(str(Path.cwd()))} or any folder above it"

    def note_missing(self) -> None:
        """Only where aidp looked for the project itself: a project named by --dir or
        AIDP_DIR (as `aidp run` names it for its agent) that has filed nothing yet is an
        empty backlog, said as such."""
        named = self.directory not in (None, "") or os.environ.get("AIDP_DIR")
        where = None if self._said_missing or named else self.missing()
        if where is not None:
            self._said_missing = True
            sys.stderr.write(f"Note: no tasklist here: {where}; {ELSEWHERE}\n")

    def warn_damage(self, fold: Fold) -> None:
        """The one warning of damaged lines a command prints."""
        if fold.damaged and not self.warned:
            from aidp.core.terminal import inert

            self.warned = True
            lines = "line" if fold.damaged == 1 else "lines"
            where = inert(str(self.log.path))
            sys.stderr.write(
                f"Warning: skipped {fold.damaged} damaged {lines} in {where}; "
                "run 'aidp tasks repair' to remove them\n"
            )


def tell_lost(lines: Sequence[str]) -> None:
    """One line on stderr for each task you held and lost (aidp.app.changing.lost_claims:
    taken over when your lease ran out, or held by an earlier claim from another clone),
    naming who holds it now."""
    from aidp.core.terminal import inert

    for line in lines:
        sys.stderr.write(f"Note: {inert(line)}\n")


def _say_notice(line: str) -> None:
    """A note about the tasklist (git attributes that override aidp's), shown inert:
    the attribute values come from the repository."""
    from aidp.core.terminal import inert

    sys.stderr.write(inert(line) + "\n")


def _say_waiting(lock: Path) -> None:
    from aidp.core.terminal import inert

    sys.stderr.write(
        f"Waiting for {inert(str(lock))}: another process holds it (Ctrl-C to give up; "
        "a killed holder releases it; --lock-timeout bounds the wait)\n"
    )
    sys.stderr.flush()


class StrayOption(InvalidInput):
    """An option the command does not take, found by the command itself (one that lets
    unknown options through, for `todo tick -1`: aidp.cli.todo): told as Typer tells its
    own, `No such option: -x`, with the same hint (aidp.cli.run), exit 2."""

    def __init__(self, option_name: str, ctx: typer.Context) -> None:
        # Control characters escaped as Typer's parser escapes them in its message.
        shown = re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m[0]):02x}", option_name)
        super().__init__(f"No such option: {shown}")
        self.option_name = option_name
        self.ctx = ctx


def env(ctx: typer.Context) -> Env:
    found = ctx.find_object(Env)
    if found is None:  # a sub-app invoked on its own (tests)
        found = Env()
        ctx.obj = found
    return found


def info(message: str) -> None:
    """A diagnostic or confirmation for people: stderr when data goes to stdout."""
    sys.stderr.write(message + "\n")


def either(words: Sequence[str]) -> str:
    """Words as help text names the choices: `a`, `a or b`, `a, b or c`."""
    return " or ".join(filter(None, (", ".join(words[:-1]), words[-1]))) if words else ""


def fail(code: int) -> typer.Exit:
    return typer.Exit(code)


JSON_HELP = "Print JSON instead of text."
SESSION_HELP = "Work on this session's list (overrides the global --session and AIDP_SESSION)."


def session_option() -> Any:
    """`--session NAME` on a `todo` command: typed as typer.Option is (Any), so it can be
    the default of a `str | None` parameter."""
    return typer.Option(None, "--session", metavar="NAME", help=SESSION_HELP)


IDS_HELP = "Task ids: full, or ≥4 leading hex characters."
ID_HELP = "Full id or ≥4 leading hex characters."


def split_ids(values: list[str] | None) -> list[str]:
    """Ids given as repeated options and/or comma-separated: `--on a,b --on c`."""
    out: list[str] = []
    for value in values or []:
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


BODY_HELP = "The body: Markdown details, up to 64 KiB."
BODY_FILE_HELP = "Read the body from file F ('-': standard input)."
TYPE_HELP = "task, bug, feature, chore or epic."


def read_body(text: str | None, path: str | None, root: Path | None = None) -> str | None:
    """The body given as --body TEXT or --body-file F|- (None: neither), as text; the
    checks of its content are the domain's (aidp.backlog.details.clean_body). A file
    inside the project `root` is read as itself, never through a link (a clone plants
    `notes.md -> ~/.ssh/id_rsa`); under an agent, only such a file or stdin."""
    if text is not None and path is not None:
        raise InvalidInput("Conflicting --body and --body-file: give one of them")
    if path is None:
        return text
    from aidp.backlog.details import MAX_BODY, MAX_BODY_TEXT

    limit = 2 * MAX_BODY + 1  # CRLF ends shrink to LF: a little more may still fit
    try:
        if path == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(limit) if stream is not None else \
                sys.stdin.read(limit).encode("utf-8", "surrogateescape")
        else:
            data = _body_file(path, root, limit)
    except OSError as exc:
        raise InvalidInput(f"Invalid --body-file {path!r}: cannot read it "
                           f"({exc.strerror or exc}); nothing was written") from None
    if len(data) >= limit:
        raise InvalidInput(f"Invalid body: {path!r} holds more than {MAX_BODY_TEXT}; "
                           "nothing was written")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"Invalid --body-file {path!r}: byte {exc.start} is not UTF-8 "
                           "text; nothing was written") from None


def _body_file(path: str, root: Path | None, limit: int) -> bytes:
    """The first `limit` bytes of the file `path` named to --body-file (see read_body)."""
    from aidp.core.errors import StorageError
    from aidp.tasklist import files
    from aidp.trust.person import agent_role

    inside: Path | None = None
    if root is not None:
        full, base = os.path.abspath(path), os.path.abspath(root)
        if os.path.commonpath([full, base]) == base and full != base:
            inside = Path(os.path.relpath(full, base))
    if inside is None:
        if agent_role():
            raise InvalidInput(
                f"Refused --body-file {path!r}: it is outside the project, and this process "
                "runs under an agent, which aidp lets read no file of yours; give the text "
                "with --body, or on stdin with --body-file -; nothing was written")
        with open(path, "rb") as handle:  # a person's own file: as they named it
            return handle.read(limit)
    try:
        data = files.read_file(Path(os.path.abspath(root or ".")), inside)
    except StorageError:
        raise InvalidInput(
            f"Invalid --body-file {path!r}: it is a symbolic link, or behind one, or no "
            "regular file; a file of the project is read only as itself (a cloned "
            "repository may have planted a link to a file of yours): give the file "
            "itself, or its text on stdin with --body-file -; nothing was written") from None
    if data is None:
        raise FileNotFoundError(2, "No such file or directory", path)
    return data[:limit]
