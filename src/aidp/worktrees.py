"""One live queue for every worktree of a repository (DESIGN §12).

Git worktrees of one repository share its common directory (`git rev-parse
--git-common-dir`). A read in any of them folds the tasklists of all of them, in one
order every worktree computes alike (the worktrees' real paths, sorted), so ties
between records of different files are broken the same way everywhere; a write still
appends to the worktree's own tasklist only, under a lock in the common directory
that every worktree's writer takes, so a claim is atomic across worktrees.

Everything is read from git's files, without starting git: a worktree's `.git` is a
file `gitdir: <common>/worktrees/NAME` whose `commondir` names the common directory,
and `<common>/worktrees/NAME/gitdir` names the worktree's `.git` file. A worktree
whose folder is gone, or whose `.git` no longer points back at its entry, does not
count. Another worktree's tasklist is only ever read (a regular UTF-8 file, not
waited on); nothing here writes anywhere but the lock in the common directory and a
memo in this worktree's read cache (`plan`: how far the other tasklists are this one's).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from aidp.errors import StorageError
from aidp.files import read_regular, write_file
from aidp.paths import DATA_DIR, LOG_NAME

if TYPE_CHECKING:
    from aidp.fold import Fold
    from aidp.model import Record

LOCK_NAME = "aidp-tasklist.lock"  # in the common directory: one writer at a time
_LIMIT = 4096  # git's small files (.git, commondir, gitdir) are one line


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
    tree, in a submodule, or when the project is not inside its work tree."""
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
            common = None if gitdir is None else _common_of(gitdir)
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
    main = common.parent
    try:
        if common.name == ".git" and os.path.samefile(main / ".git", common):
            tops.append(main)
    except OSError:
        pass
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


def read_tasklist(path: Path) -> bytes | None:
    """Another worktree's tasklist, up to its last newline (a line being written there
    is left for later); None when missing, not a regular file, or not UTF-8."""
    data = read_regular(path)
    if data is None:
        return None
    from aidp.attributes import SNIFF_BYTES, sniff

    if sniff(data[:SNIFF_BYTES]) is not None:
        return None
    return data[: data.rfind(b"\n") + 1]


def stat_keys(paths: list[Path]) -> tuple[object, ...]:
    """What a fold of these files is reused under: their stat data (None: missing)."""
    keys: list[object] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            keys.append(None)
            continue
        keys.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(keys)


def _split(data: bytes) -> list[bytes]:
    """The lines of `data` (without their newlines); a last line without one counts."""
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return parts


def common_start(datas: list[bytes]) -> tuple[int, bytes]:
    """(the length of the whole lines every one of `datas` that is not empty starts
    with: the history the worktrees' branches share, nearly all of each tasklist; the
    first such data). A worktree without a tasklist brings no line, and takes none."""
    present = [data for data in datas if data] or [b""]
    return min((shared_prefix(present[0], data) for data in present[1:]),
               default=present[0].rfind(b"\n") + 1), present[0]


def records(shared: Shared | None, own: bytes
            ) -> Iterator[tuple[int, Path | None, int, Record | None]]:
    """Every line a read folds, in the fold's order (`fold` below: the rule): (position
    in that order, the other worktree's tasklist when only it holds the line else None,
    line number in that file, the record or None). `own`: this worktree's bytes;
    `shared`: the repository (None: this file alone)."""
    from aidp.line import parse_line

    tasklists = shared.tasklists() if shared is not None else []
    if len(tasklists) <= 1:  # no other worktree: every line as it is, repeats too
        for number, raw in enumerate(_split(own), start=1):
            yield number, None, number, parse_line(raw)
        return
    datas = [own if is_own else read_tasklist(path) or b"" for path, is_own in tasklists]
    start, first = common_start(datas)
    common = _split(first[:start])
    source = None if own or not common else next(
        p for (p, _own), data in zip(tasklists, datas, strict=True) if data is first)
    for number, raw in enumerate(common, start=1):
        yield number, source, number, parse_line(raw)
    mine: dict[bytes, int] = {}
    for number, raw in enumerate(_split(own), start=1):
        mine.setdefault(raw, number)
    seen: set[bytes] = set()
    order = len(common)
    for data, (path, is_own) in zip(datas, tasklists, strict=True):
        lines = _split(data[start:])
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


def fold(tasklists: list[tuple[Path, bool]], own: bytes, *, whole_lines: bool) -> Fold:
    """The fold of every worktree's tasklist (`tasklists` in the order every worktree
    folds them; `own`: this worktree's bytes, decoded). The rule: first the whole lines
    every tasklist starts with (the history their branches share), once, as in one
    file (a repeated line is folded again); then each tasklist's lines after them, in
    `tasklists`' order, leaving out a line an earlier tasklist's own lines already
    brought (the same record written to, or merged into, two branches), repeats within
    one tasklist folded again. Damage is counted in this worktree's file only (the one
    its `aidp tasks repair` mends); a last line without its newline in it stays a line
    of its own (damage, unless it is a record), or is left out (`whole_lines`). The
    shared lines are never looked up: a store of this worktree's file already holds
    them (backlog 8064)."""
    from aidp.fold import DAMAGED, Fold, no_gc, read_line

    datas: list[bytes] = []
    ends = True
    for path, is_own in tasklists:
        if is_own:
            data = own[: own.rfind(b"\n") + 1] if whole_lines else own
            ends = not data or data.endswith(b"\n")
        else:
            data = read_tasklist(path) or b""
        datas.append(data)
    start, first = common_start(datas)
    state, seen = Fold(), set()
    with no_gc():
        fed = _split(first[:start])
        damaged = sum(state.add_lines(fed))  # every tasklist's first lines: this one's too
        damaged *= bool(own)  # (unless it has none)
        for data, (_path, is_own) in zip(datas, tasklists, strict=True):
            lines = _split(data[start:])
            new = [raw for raw in lines if raw not in seen]
            flags = state.add_lines(new)
            if is_own:
                damaged += sum(flags) + sum(read_line(raw)[0] == DAMAGED
                                            for raw in lines if raw in seen)
            seen.update(lines)
            fed += new
    state.damaged, state.ends_with_newline = damaged, ends
    if state.conflicted:
        from aidp.fields import resolve  # a task two worktrees changed concurrently

        resolve(state, b"\n".join(fed))
    return state


MEMO_NAME = "worktrees.json"  # in the store's cache folder: how far each other file is ours


class Plan:
    """How a store of this worktree's tasklist answers for every worktree (`fold`'s
    rule): the store holds this file up to `end`, whose last `own_lines` lines (`own_ids`
    the ids they name) come after the lines every tasklist starts with; the other
    tasklists' lines after those are fed `before` and `after` this file's."""

    def __init__(self, end: int, own_lines: int, own_ids: set[str], before: list[bytes],
                 after: list[bytes]) -> None:
        self.end, self.own_lines, self.own_ids = end, own_lines, own_ids
        self.before, self.after = before, after


def _opened(path: Path) -> tuple[int, os.stat_result, int] | None:
    """(fd, stat, end of its last whole line) of a regular file, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return None
    at = st.st_size
    while at > 0:
        block = os.pread(fd, min(at, 65536), at - min(at, 65536))
        if (found := block.rfind(b"\n")) >= 0:
            return fd, st, at - len(block) + found + 1
        at -= len(block)
    return fd, st, 0


def _ids(lines: list[bytes]) -> set[str]:
    """The ids lines name: a task's, a typed record's, the task a task_fields names."""
    from aidp.fold import read_lines

    found: set[str] = set()
    for _kind, rid, record in read_lines(lines):
        if record is not None:
            found.add(rid)
            if isinstance(task := record.get("task"), str):
                found.add(task)
    return found


def plan(tasklists: list[tuple[Path, bool]], own_path: Path, cache: Path | None, *,
         whole_lines: bool) -> Plan | None:
    """The plan, or None: fold plainly (a tasklist that is not a regular UTF-8 file, a
    line being written here, a line or an id of this file's also in a tasklist fed
    before it: the store's order would not be the rule's). How far each other file
    shares this one's lines is kept in `cache` (MEMO_NAME) under both files' stat data,
    and only the bytes past it are compared again once either file grew."""
    import orjson

    from aidp.attributes import SNIFF_BYTES, sniff

    opened: list[tuple[int, os.stat_result, int]] = []
    names: list[str] = []  # the other tasklists that bring lines, in the fold's order
    try:
        for path in [own_path] + [p for p, is_own in tasklists if not is_own]:
            found = _opened(path)
            if found is not None and (not found[2] or sniff(os.pread(
                    found[0], SNIFF_BYTES, 0)) is not None):  # as `fold` reads it: no lines
                os.close(found[0])
                found = None
            if found is None:
                if path == own_path:
                    return None
                continue
            opened.append(found)
            names.append(str(path))
        (own, own_st, end), others = opened[0], opened[1:]
        if not whole_lines and own_st.st_size != end:
            return None  # a line being written here: the plain fold decides
        memo: dict[str, list[int]] = {}
        if cache is not None:
            with contextlib.suppress(orjson.JSONDecodeError):
                memo = orjson.loads(read_regular(cache / MEMO_NAME) or b"{}")
            memo = memo if isinstance(memo, dict) else {}
        known = dict(memo)
        names = names[1:]
        bases = []
        for name, (fd, st, f_end) in zip(names, others, strict=True):
            was = memo.get(name)
            base = 0
            if (isinstance(was, list) and len(was) == 7 and was[:2] == [st.st_dev, st.st_ino]
                    and was[3:5] == [own_st.st_dev, own_st.st_ino] and was[2] <= f_end
                    and was[5] <= end and 0 <= was[6] <= min(was[2], was[5])):
                base = was[6]  # the files only grew since: the lines before still match
                edge = max(0, base - 4096)
                if os.pread(fd, base - edge, edge) != os.pread(own, base - edge, edge):
                    base = 0
            bases.append(base)
        low = min(bases, default=end)
        ours = os.pread(own, end - low, low)
        prefixes = []
        for name, base, (fd, st, f_end) in zip(names, bases, others, strict=True):
            theirs = os.pread(fd, f_end - base, base)
            prefix = base + shared_prefix(ours[base - low:], theirs)
            memo[name] = [st.st_dev, st.st_ino, f_end, own_st.st_dev, own_st.st_ino, end,
                          prefix]
            prefixes.append(prefix)
        start = min(prefixes, default=end)
        own_lines = _split(ours[start - low:])
        seen: set[bytes] = set()
        before: list[bytes] = []
        after: list[bytes] = []
        rests, target = dict(zip(names, others, strict=True)), before
        for path, is_own in tasklists:
            if str(path) not in rests and not is_own:
                continue
            if is_own:  # its first lines that come first in the earlier files' too (a
                same = 0  # later commit this worktree branched from) are where the store has them
                while same < min(len(own_lines), len(before)) and own_lines[same] == before[same]:
                    same += 1
                del own_lines[:same], before[:same]
                if any(raw in seen for raw in own_lines):
                    return None  # the rule leaves out this file's copy: not the store's lines
                seen.update(own_lines)
                target = after
                continue
            fd, _st, f_end = rests[str(path)]
            lines = _split(os.pread(fd, f_end - start, start))
            target += [raw for raw in lines if raw not in seen]
            seen.update(lines)
        own_ids = _ids(own_lines)
        if before and own_ids & _ids(before):
            return None  # a task changed in both: the store's order would decide it
        if cache is not None and memo != known:  # never through a link; a torn one: {}
            with contextlib.suppress(OSError, StorageError):
                write_file(cache, MEMO_NAME, orjson.dumps(memo))
        return Plan(end, len(own_lines), own_ids, before, after)
    finally:
        for fd, _st, _end in opened:
            os.close(fd)


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
