"""One live queue for every worktree of a repository (docs/guide.md, "Worktrees by hand").

Git worktrees of one repository share its common directory (`git rev-parse
--git-common-dir`). A read in any of them folds the tasklists of all of them, in one
order every worktree computes alike (the worktrees' real paths, sorted), so ties
between records of different files are broken the same way everywhere; a write still
appends to the worktree's own tasklist only, under a lock in the common directory
that every worktree's writer takes, so a claim is atomic across worktrees.

Everything is read from git's files, without starting git, as git finds them: a
worktree's `.git` is a file `gitdir: <common>/worktrees/NAME` whose `commondir` names
the common directory, and `<common>/worktrees/NAME/gitdir` names the worktree's `.git`
file. A `.git` file whose git directory has no `commondir` is a main worktree whose
repository lives elsewhere (`git init --separate-git-dir`, a submodule): that git
directory is the common one. Its top is not where git's files say (git itself lists
the git directory as the main worktree then): it is the folder `core.worktree` names
(a submodule's), else the one aidp recorded in `<common>/aidp-main-worktree` when it
last ran there. A worktree whose folder is gone, or whose `.git` no longer points back
at its entry, does not count. Another worktree's tasklist is only ever read (a
regular UTF-8 file, not waited on); nothing here writes anywhere but the common
directory (the lock, that record). How the store answers for every worktree (by this
rule): aidp.store.overlay.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from aidp.core.errors import StorageError
from aidp.tasklist.files import read_regular
from aidp.tasklist.paths import DATA_DIR, LOG_NAME

if TYPE_CHECKING:
    from aidp.core.model import Record
    from aidp.tasklist.fold import Fold

LOCK_NAME = "aidp-tasklist.lock"  # in the common directory: one writer at a time
# In the common directory too: the main worktree's top when its `.git` is a file (a
# separate git directory), which git records nowhere a linked worktree could read.
MAIN_NAME = "aidp-main-worktree"
_LIMIT = 4096  # git's small files (.git, commondir, gitdir) are one line
ENDING = 64  # the bytes `carry.extend` finds again where a file's folded lines ended


class Shared:
    """The repository a project lives in, when its worktrees share one queue."""

    def __init__(self, common: Path, subpath: Path, own: Path) -> None:
        self.common = common  # the git common directory (real path)
        self.subpath = subpath  # the project folder, relative to its worktree's top
        self.own = own  # this worktree's top (real path)

    def tasklists(self) -> list[tuple[Path, bool]]:
        """(tasklist path, is this worktree's) of every live worktree, in the order all
        worktrees fold them."""
        tops = sorted(set(worktree_tops(self.common)) | {self.own}, key=str)
        return [(top / self.subpath / DATA_DIR / LOG_NAME, top == self.own) for top in tops]

    def refuse_other(self, folder: Path) -> None:
        """Refuse to write when `folder` (this worktree's `.aidp`) is, through a link,
        another worktree's: aidp never writes into another worktree's tasklist."""
        for path, own in self.tasklists():
            try:
                if own or not os.path.samefile(path.parent, folder):
                    continue
            except OSError:
                continue
            other = path.parents[1 + len(self.subpath.parts)]
            raise StorageError(
                f"Cannot write {folder / path.name}: {folder} is the .aidp folder of the "
                f"worktree {other} (through a link), and aidp writes only the worktree's "
                "own tasklist; remove the link; the tasklist was not changed")


def _small(path: Path) -> str | None:
    data = read_regular(path, _LIMIT)
    return None if data is None else data.decode("utf-8", "replace").strip()


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _gitdir_of(top: Path) -> Path | None:
    """The git directory a worktree's `.git` file names (None: not such a file)."""
    text = _small(top / ".git")
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text.partition(":")[2].strip())
    return _real(top / target)


def _common_of(gitdir: Path) -> Path | None:
    """The common directory of a linked worktree's git directory (None: none named,
    as for a submodule)."""
    text = _small(gitdir / "commondir")
    if not text:
        return None
    return _real(gitdir / text)


def _repository(git_dir: Path) -> bool:
    """Whether `git_dir` holds a repository, as git checks it: HEAD and objects/."""
    return (git_dir / "HEAD").is_file() and (git_dir / "objects").is_dir()


def find(root: Path) -> Shared | None:
    """The shared queue `root` (a project folder) belongs to: None outside a git work
    tree, or when the project is not inside its work tree."""
    here = _real(root)
    for top in (here, *here.parents):
        dot_git = top / ".git"
        try:
            mode = os.lstat(dot_git).st_mode
        except OSError:
            continue
        common: Path | None
        if stat.S_ISDIR(mode):
            if not _repository(dot_git):
                continue  # an empty or stray .git folder: git looks further up too
            common = _real(dot_git)
        elif stat.S_ISREG(mode):
            gitdir = _gitdir_of(top)
            if gitdir is None:
                return None
            common = _common_of(gitdir)
            if common is None and _repository(gitdir):
                common = gitdir  # a main worktree whose git directory is elsewhere
                _remember_main(common, top)
            if common is None or not _repository(common):
                return None
        else:
            return None
        return Shared(common, here.relative_to(top), top)
    return None


def worktree_tops(common: Path) -> list[Path]:
    """The top folders of the repository's live worktrees (the main one first when the
    repository is not bare), from the common directory's files."""
    tops: list[Path] = []
    main = _main_top(common)
    if main is not None:
        tops.append(main)
    try:
        entries = sorted(os.scandir(common / "worktrees"), key=lambda e: e.name)
    except OSError:
        return tops
    for entry in entries:
        named = _small(Path(entry.path) / "gitdir")
        if not named:
            continue
        dot_git = Path(named)
        if not dot_git.is_absolute():
            dot_git = Path(entry.path) / dot_git
        top = _real(dot_git.parent)
        back = _gitdir_of(top)  # the folder may be gone, or hold another checkout now
        if back is not None and back == _real(Path(entry.path)):
            tops.append(top)
    return tops


def _main_top(common: Path) -> Path | None:
    """The main worktree's top: the folder whose `.git` is `common`; else, for a git
    directory kept elsewhere, the folder its `core.worktree` names (a submodule's) or
    the one aidp recorded there (`git init --separate-git-dir`) — each only while its
    `.git` file still names `common`."""
    parent = common.parent
    try:
        if common.name == ".git" and os.path.samefile(parent / ".git", common):
            return parent
    except OSError:
        pass
    recorded = _small(common / MAIN_NAME)
    for named in (_core_worktree(common), recorded):
        if named:
            top = _real(common / named)  # core.worktree is relative to the git directory
            if _gitdir_of(top) == common:
                return top
    return None


def _core_worktree(common: Path) -> str | None:
    """`core.worktree` of the repository's own config file, read as git writes it (a
    submodule's: `worktree = ../../../sub`); None when it sets none."""
    data = read_regular(common / "config", 1 << 16)
    if data is None:
        return None
    section = ""
    for line in data.decode("utf-8", "replace").splitlines():
        text = line.strip()
        if text.startswith("["):
            section = text[1:].partition("]")[0].strip().lower()
            continue
        key, eq, value = text.partition("=")
        if eq and section == "core" and key.strip().lower() == "worktree":
            return value.strip().strip('"') or None
    return None


def _remember_main(common: Path, top: Path) -> None:
    """Record `top` as the main worktree of `common` (a git directory kept elsewhere),
    so that linked worktrees fold its tasklist too; best effort, replaced atomically,
    written only when it changed."""
    if _small(common / MAIN_NAME) == str(top):
        return
    temp = common / f"{MAIN_NAME}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, os.fsencode(top) + b"\n")
        finally:
            os.close(fd)
        os.replace(temp, common / MAIN_NAME)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass


def read_tasklist(path: Path, *, whole_lines: bool = True) -> bytes | None:
    """Another worktree's tasklist; None when missing, not a regular file, or not
    UTF-8. `whole_lines`: up to its last newline (a last line without one is being
    written while a writer holds the repository's lock); else with that line when it
    is a record, as its own worktree folds it when no writer does (every worktree
    folds the same records)."""
    data = read_regular(path)
    if data is None:
        return None
    from aidp.tasklist.attributes import SNIFF_BYTES, sniff

    if sniff(data[:SNIFF_BYTES]) is not None:
        return None
    cut = data.rfind(b"\n") + 1
    return data if not whole_lines and tail_counts(data[cut:]) else data[:cut]


TAIL_MAX = 4 << 20  # a longer last line without its newline is left to the plain fold


def tail_counts(tail: bytes) -> bool:
    """Whether another worktree's last line without its newline (`tail`) changes the
    fold: a record does; damage (a torn write) does not — its own worktree counts it
    as damage, which folds no record, so others may leave it out (and it does not
    shorten the lines the tasklists share)."""
    from aidp.tasklist.line import parse_line

    return bool(tail) and parse_line(tail) is not None


StatKeys = tuple[tuple[int, int, int, int, int] | None, ...]  # a file's: dev, ino, size, times


def stat_keys(paths: list[Path]) -> StatKeys:
    """What a fold of these files is reused under: their stat data (None: missing)."""
    keys: list[tuple[int, int, int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            keys.append(None)
            continue
        keys.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(keys)


def lines_of(data: bytes) -> list[bytes]:
    """The lines of `data` (without their newlines); a last line without one counts."""
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def common_start(datas: list[bytes]) -> tuple[int, bytes]:
    """(the length of the whole lines every one of `datas` that has a whole line starts
    with: the history the worktrees' branches share, nearly all of each tasklist; the
    first such data). A worktree without a tasklist, or with only a line without its
    newline, brings no whole line and takes none: its line comes after (`after`)."""
    present = [data for data in datas if b"\n" in data] or [b""]
    return min((shared_prefix(present[0], data) for data in present[1:]),
               default=present[0].rfind(b"\n") + 1), present[0]


def after(data: bytes, start: int) -> list[bytes]:
    """The lines of one tasklist after the `start` bytes all of them share."""
    return lines_of(data[start:] if b"\n" in data else data)


def records(shared: Shared | None, own: bytes
            ) -> Iterator[tuple[int, Path | None, int, Record | None]]:
    """Every line a read folds, in the fold's order (`fold` below: the rule): (position
    in that order, the other worktree's tasklist when only it holds the line else None,
    line number in that file, the record or None). `own`: this worktree's bytes;
    `shared`: the repository (None: this file alone)."""
    from aidp.tasklist.line import parse_line

    tasklists = shared.tasklists() if shared is not None else []
    if len(tasklists) <= 1:  # no other worktree: every line as it is, repeats too
        for number, raw in enumerate(lines_of(own), start=1):
            yield number, None, number, parse_line(raw)
        return
    datas = [own if is_own else read_tasklist(path, whole_lines=False) or b""
             for path, is_own in tasklists]
    start, first = common_start(datas)
    common = lines_of(first[:start])
    source = None if own or not common else next(
        p for (p, _own), data in zip(tasklists, datas, strict=True) if data is first)
    for number, raw in enumerate(common, start=1):
        yield number, source, number, parse_line(raw)
    mine: dict[bytes, int] = {}
    for number, raw in enumerate(lines_of(own), start=1):
        mine.setdefault(raw, number)
    seen: set[bytes] = set()
    order = len(common)
    for data, (path, is_own) in zip(datas, tasklists, strict=True):
        lines = after(data, start)
        for number, raw in enumerate(lines, start=len(common) + 1):
            if raw in seen:
                continue
            order += 1
            if is_own:
                yield order, None, number, parse_line(raw)
            elif raw in mine:
                yield order, None, mine[raw], parse_line(raw)
            else:
                yield order, path, number, parse_line(raw)
        seen.update(lines)


def fold(tasklists: list[tuple[Path, bool]], own: bytes, *, whole_lines: bool,
         freeze: bool = False) -> Fold:
    """The fold of every worktree's tasklist (`tasklists` in the order every worktree
    folds them; `own`: this worktree's bytes, decoded). The rule: first the whole lines
    every tasklist starts with (the history their branches share), once, as in one
    file (a repeated line is folded again); then each tasklist's lines after them, in
    `tasklists`' order, leaving out a line an earlier tasklist's own lines already
    brought (the same record written to, or merged into, two branches), repeats within
    one tasklist folded again. Damage is counted in this worktree's file only (the one
    its `aidp tasks repair` mends); a last line without its newline in it stays a line
    of its own (damage, unless it is a record), or is left out (`whole_lines`), and
    so is another tasklist's: every worktree folds the same lines, whichever wrote
    them (`ends_with_newline`: every tasklist ends in a newline). The shared lines are
    never looked up: a store of this worktree's file already holds them (backlog
    8064). `freeze`: as fold.no_gc's."""
    from aidp.tasklist.fold import DAMAGED, Fold, no_gc, read_line

    datas: list[bytes] = []
    ends = True
    for path, is_own in tasklists:
        if is_own:
            data = own[: own.rfind(b"\n") + 1] if whole_lines else own
        else:
            data = read_tasklist(path, whole_lines=whole_lines) or b""
        ends = ends and (not data or data.endswith(b"\n"))
        datas.append(data)
    start, first = common_start(datas)
    state, seen = Fold(), set()
    with no_gc(freeze=freeze):
        fed = lines_of(first[:start])
        damaged = sum(state.add_lines(fed))  # every tasklist's first lines: this one's too
        damaged *= bool(own)  # (unless it has none)
        for number, (data, (_path, is_own)) in enumerate(zip(datas, tasklists, strict=True)):
            lines = after(data, start)
            new = [raw for raw in lines if raw not in seen]
            flags = state.add_lines(new, state.last_file, number)
            if is_own:
                damaged += sum(flags) + sum(read_line(raw)[0] == DAMAGED
                                            for raw in lines if raw in seen)
            seen.update(lines)
            fed += new
    state.damaged, state.ends_with_newline = damaged, ends
    if state.conflicted:
        from aidp.tasklist.fields import resolve  # a task two worktrees changed concurrently

        resolve(state, b"\n".join(fed))
    if ends:  # where each file's lines end, for `extend`
        state.sources = tuple((path, len(data), data[-ENDING:])
                              for (path, _own), data in zip(tasklists, datas, strict=True))
    return state

def shared_prefix(a: bytes, b: bytes) -> int:
    """The length of the whole lines (each with its newline) `b` starts with that are
    `a`'s first lines too: compared a megabyte at a time, then halving to the first
    byte that differs."""
    end = min(len(a), len(b))
    lo, step = 0, 1 << 20
    while lo < end and a[lo: lo + step] == b[lo: lo + step]:
        lo += step
    hi = min(end, lo + step)
    while lo < hi:  # the first difference is in a[lo:hi] (or there is none: lo = end)
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return a.rfind(b"\n", 0, min(lo, end)) + 1
