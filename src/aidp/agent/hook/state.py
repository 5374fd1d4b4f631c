"""The local state of `aidp hook`: one small JSON file per agent session under
`.aidp/hooks/` (git-ignored, never in the tasklist), read and written under a lock on
a file of its own beside it, and saved atomically (a temporary file, synced, renamed
over it: a full disk leaves the previous state); sessions untouched for STATE_TTL are
swept at session start.

State that git tracks is never read (nor written): a cloned repository may commit
`.aidp/hooks/…json` (docs/security.md). And `aidp mcp` finds the session of the agent
that started it only by that agent's exact process key, pid and start time, never by
a bare pid."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from aidp.core.errors import StorageError
from aidp.tasklist import files
from aidp.tasklist.paths import DATA_DIR
from aidp.tasklist.stamp import StatKey, stat_key

STATE_DIR = "hooks"
STATE_TTL = 14 * 86400  # state of sessions untouched this long is swept at session start


class State:
    """One agent session's hook state, read and written under an exclusive lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, Any] = {}
        self._folder: files.Folder | None = None
        self._lock: int | None = None
        self.problem: str | None = None

    def __enter__(self) -> State:
        import fcntl

        root, name = self.path.parents[2], self.path.name
        try:
            # Never through a link a cloned repository planted (`.aidp` or
            # `.aidp/hooks` included), never a FIFO: aidp.tasklist.files.
            self._folder = _folder(root, create=True)
            self._folder.create(".gitignore", b"# aidp hook state: local to this clone\n*\n")
            self._lock = self._folder.open(name + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT)
            fcntl.flock(self._lock, fcntl.LOCK_EX)
            if self._folder.lstat(name) is not None and not _own(root, name):
                self._close()
                self.problem = (f"aidp: hook state {self.path} is tracked by git (a clone "
                                "brought it) or git cannot tell: not read, not written")
                return self
            raw = self._folder.read(name) or b""
        except (OSError, StorageError) as exc:
            # Without its state a hook still answers (the count starts at 0): the prime
            # text at session start matters more than the count.
            self._close()
            reason = getattr(exc, "strerror", None) or exc
            self.problem = f"aidp: hook state {self.path} unusable ({reason})"
            return self
        try:
            loaded = orjson.loads(raw) if raw.strip() else {}
        except orjson.JSONDecodeError:
            loaded = {}  # damaged local state: start afresh, it is only a cache
        from aidp.tasklist.line import too_deep  # a hook reads the tasklist: already imported

        if not isinstance(loaded, dict) or too_deep(loaded):
            loaded = {}  # nested past what save() can write back (issue 27): afresh too
        self.data = loaded
        return self

    def save(self) -> None:
        """Replace the state atomically: a temporary file in the same folder, then
        renamed over it, never through a link. A failure (a full disk) leaves the
        previous state as it was, says so in `problem`, and removes the temporary file.
        Not synced: the state is a cache (a file a crash left empty reads as a fresh
        start), and two syncs took ~2-20 ms of every hook on a busy disk."""
        if self._folder is None:
            return
        data = dict(self.data, updated=int(time.time()))
        body = orjson.dumps(data, option=orjson.OPT_SORT_KEYS) + b"\n"
        temp = f".{self.path.name}.{os.getpid()}.{os.urandom(4).hex()}{TEMP_SUFFIX}"
        try:
            fd = self._folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(body)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            self._folder.replace(temp, self.path.name)
        except (OSError, StorageError) as exc:
            self._folder.unlink(temp)
            reason = getattr(exc, "strerror", None) or exc
            self.problem = (f"aidp: hook state {self.path} not saved ({reason}); the "
                            "previous state is kept")
            return

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # releases the lock
            self._lock = None
        if self._folder is not None:
            self._folder.close()
            self._folder = None

    def blocks(self) -> int:
        value = self.data.get("blocks")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


LOCK_SUFFIX = ".lock"  # beside each state file: its lock (the state itself is replaced)
TEMP_SUFFIX = ".tmp"
TEMP_TTL = 3600  # a temporary file this old was left by a killed hook: swept


def _own(root: Path, name: str) -> bool:
    """Whether the state file `name` in `.aidp/hooks` is aidp's own local state: git
    does not track it (a clone may commit one). Outside a git work tree nothing tracks
    it; where git cannot tell, it is not ours."""
    tracked = tracked_state(root)
    return tracked is not None and name not in tracked


# What state_path names: the only files sweep() removes.
_STATE_NAME = r"[a-z0-9]+-[A-Za-z0-9_.-]{0,60}-[0-9a-f]{8}\.json"  # matched by sweep()


def state_path(root: Path, agent: str, session: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session)[:60]
    digest = zlib.crc32(session.encode("utf-8", "surrogatepass"))
    return root / DATA_DIR / STATE_DIR / f"{agent}-{safe}-{digest:08x}.json"


def _folder(root: Path, *, create: bool = False) -> files.Folder:
    """`.aidp/hooks` under the project root, reached without crossing any link."""
    return files.folder(root, f"{DATA_DIR}/{STATE_DIR}", create=create)


def sweep(root: Path, *, now: float | None = None) -> None:
    """Forget the state of sessions nobody touched for STATE_TTL (and their locks), and
    temporary files a killed hook left: only regular files named as this module names
    them, in a `.aidp/hooks` that is no link (nor is `.aidp`): a committed
    `.aidp/hooks -> ~/.docker` loses nothing."""
    now = now if now is not None else time.time()
    try:
        folder = _folder(root)
    except (OSError, StorageError):
        return  # missing, or a link: nothing of ours is there
    with folder:
        try:
            names = [entry.name for entry in folder.scandir()]
        except OSError:
            return
        for name in names:
            # Its age first: only a file older than a TTL can go, and the names' patterns
            # are compiled (once, re's cache) only when one is that old.
            info = folder.lstat(name)
            if info is None or not stat.S_ISREG(info.st_mode) or (
                    info.st_mtime >= now - min(TEMP_TTL, STATE_TTL)):
                continue
            state = re.fullmatch(_STATE_NAME, name.removesuffix(LOCK_SUFFIX))
            temp = re.fullmatch(_TEMP_NAME, name)
            if not state and not temp:
                continue
            if name.endswith(LOCK_SUFFIX):  # a lock goes with its state (its mtime stays)
                stale = folder.lstat(name.removesuffix(LOCK_SUFFIX)) is None and (
                    info.st_mtime < now - STATE_TTL)
            else:
                stale = info.st_mtime < now - (TEMP_TTL if temp else STATE_TTL)
            if stale:
                folder.unlink(name)
                if state and not name.endswith(LOCK_SUFFIX):
                    lock = folder.lstat(name + LOCK_SUFFIX)
                    if lock is not None and lock.st_mtime < now - STATE_TTL:
                        folder.unlink(name + LOCK_SUFFIX)


# The temporary files State.save writes (`.NAME.PID.RANDOM.tmp`).
_TEMP_NAME = (r"\.[a-z0-9]+-[A-Za-z0-9_.-]{0,60}-[0-9a-f]{8}\.json\.[0-9]+\.[0-9a-f]{8}"
              r"\.tmp")


# --- what git tracks there --------------------------------------------------------------

# The names git tracks in a project's `.aidp/hooks`, with the stat data of the git index
# they were read with (a server asks on every tool call; the index changes with every
# checkout, pull or add that could change the answer).
_TRACKED: dict[str, tuple[StatKey | None, frozenset[str]]] = {}


def tracked_state(root: Path) -> frozenset[str] | None:
    """The names in `root`'s `.aidp/hooks` that git tracks (a cloned repository may have
    committed state there): empty outside a git work tree or before anything was ever
    added; None when git cannot tell (not installed, fails)."""
    from aidp.tasklist.git_runner import run
    from aidp.tasklist.paths import locate_git

    found = locate_git(root)
    if found is None:
        return frozenset()
    try:
        index: StatKey | None = stat_key(os.stat(found[1] / "index"))
    except OSError:
        index = None  # no index: nothing was ever added, unless git says otherwise
    known = _TRACKED.get(str(root))
    if known is not None and known[0] == index and index is not None:
        return known[1]
    kept = found[1] / TRACKED_NAME
    if index is not None and (names := _kept_answer(kept, root, index)) is not None:
        _TRACKED[str(root)] = (index, names)
        return names
    done = run(root, "-c", "core.fsmonitor=false", "ls-files", "-z", "--",
               f"{DATA_DIR}/{STATE_DIR}", check=False)
    if done is None or done.returncode != 0:
        return None
    prefix = f"{DATA_DIR}/{STATE_DIR}/"
    names = frozenset(path.removeprefix(prefix) for path in done.stdout.split("\0")
                      if path.startswith(prefix))
    if index is not None:
        _keep_answer(kept, root, index, names)
    _TRACKED[str(root)] = (index, names)
    return names


# Git's answer, kept for the next hook process (each hook is a process of its own, and
# `git ls-files` one more): in the worktree's git directory, beside the index it was read
# with, where no clone can plant a file; asked again once the index changed (git
# replaces it whole, so its stat data changes too).
TRACKED_NAME = "aidp-hooks-tracked.json"


def _kept_answer(path: Path, root: Path, index: StatKey) -> frozenset[str] | None:
    try:
        kept = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(kept, dict) or kept.get("root") != str(root) \
            or kept.get("index") != list(index) or not isinstance(kept.get("names"), list):
        return None
    names = kept["names"]
    return frozenset(names) if all(isinstance(n, str) for n in names) else None


def _keep_answer(path: Path, root: Path, index: StatKey, names: frozenset[str]) -> None:
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        temp.write_bytes(orjson.dumps({"root": str(root), "index": list(index),
                                       "names": sorted(names)}))
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()


# --- which session an agent's hooks use (for `aidp mcp`) --------------------------------

ANCESTORS = 3  # the hook's parent (the agent, or a shell it ran), grandparent, …


def ancestors(pid: int, depth: int = ANCESTORS) -> list[int]:
    """`pid`'s parent, its parent, … (`depth` of them, fewer at the top): read from
    /proc where there is one, else from one `ps` listing."""
    parents = _parents_from_proc if os.path.isdir("/proc/self") else _parents_from_ps()
    found: list[int] = []
    current = pid
    while len(found) < depth:
        parent = parents(current)
        if parent is None or parent <= 1 or parent in found:
            break
        found.append(parent)
        current = parent
    return found


def _stat_fields(pid: int) -> list[bytes]:
    """/proc/PID/stat's fields after `pid (comm)` (comm may hold spaces and
    parentheses): state, ppid, …, starttime at index 19; [] when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return stat[stat.rindex(b")") + 2:].split()
    except (OSError, ValueError):
        return []


def _parents_from_proc(pid: int) -> int | None:
    fields = _stat_fields(pid)
    try:
        return int(fields[1])
    except (ValueError, IndexError):
        return None


def process_key(pid: int) -> str:
    """`pid@start`: the process's start time (since boot from /proc, else as `ps` tells
    it), so that a pid the system handed to another process later is not taken for the
    same agent; the bare pid when neither tells (a key that matches nothing)."""
    if os.path.isdir("/proc/self"):
        fields = _stat_fields(pid)
        start = fields[19].decode() if len(fields) > 19 else ""
        start = start if start.isdigit() else ""
    else:
        start = _start_from_ps(pid)
    return f"{pid}@{start}" if start else str(pid)


def _start_from_ps(pid: int) -> str:
    import subprocess

    try:
        out = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True,
                             text=True, timeout=5, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return "_".join(out.split())


def _parents_from_ps() -> Callable[[int], int | None]:
    import subprocess

    table: dict[int, int] = {}
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True,
                             text=True, timeout=5, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            table[int(parts[0])] = int(parts[1])
    return table.get


# The parsed hook state files `session_of_agent` read, by project root and name, with
# the stat data they were read with: a server asks on every tool call, and re-reads only
# a file whose stat data changed. Every change of a file sets its ctime (which nothing
# can set back) to the clock's coarse tick; so a file whose ctime was less than RACY_NS
# before it was read is not kept, as a write in that same tick would not change it.
_PARSED: dict[tuple[str, str], tuple[StatKey, object]] = {}
RACY_NS = 2_000_000_000


def session_of_agent(root: Path, agent_pid: int) -> str | None:
    """The session aidp's hooks last used for the agent process `agent_pid` (the
    process that started an `aidp mcp` server): the hook state whose recorded ancestors
    include its exact process key (pid and start time: a reused pid, a bare pid list, a
    planted list of every pid never match), the most recently updated, among the state
    files git does not track; None when no hook of that agent ran here."""
    best: tuple[int, str] | None = None
    key = process_key(agent_pid)
    if "@" not in key:
        return None  # its start time is unknown: nothing can tell it from another
    for data in _states(root):
        if not isinstance(data, dict):
            continue
        agents = data.get("agents")
        if not isinstance(agents, list) or len(agents) > ANCESTORS or key not in agents:
            continue  # aidp records at most ANCESTORS keys
        session, updated = data.get("session"), data.get("updated")
        fresher = best is None or (isinstance(updated, int) and updated > best[0])
        if isinstance(session, str) and session and isinstance(updated, int) and fresher:
            best = (updated, session)
    return best[1] if best is not None else None


def _states(root: Path) -> list[object]:
    """Every hook state file's parsed JSON under `root` (None for a damaged one), each
    read again only when its stat data changed since it was last read (_PARSED)."""
    place = str(root)
    try:  # never through a linked .aidp/hooks, never a FIFO or link in it (aidp.tasklist.files)
        folder = _folder(root)
    except (OSError, StorageError):
        return []
    tracked = tracked_state(root)  # a clone's committed state is none of ours
    if tracked is None:
        folder.close()
        return []
    found: list[object] = []
    seen = set()
    with folder:
        try:
            names = [entry.name for entry in folder.scandir()]
        except OSError:
            return []
        for name in names:
            info = folder.lstat(name) if name.endswith(".json") else None
            if info is None or not stat.S_ISREG(info.st_mode) or name in tracked:
                continue
            seen.add(name)
            now, was = stat_key(info), _PARSED.get((place, name))
            if was is not None and was[0] == now:
                found.append(was[1])
                continue
            started = time.time_ns()
            try:
                raw = folder.read(name) or b""
            except (OSError, StorageError):
                _PARSED.pop((place, name), None)
                continue
            try:
                data: object = orjson.loads(raw)
            except orjson.JSONDecodeError:
                data = None  # damaged: left out, and not read again while unchanged
            found.append(data)
            if info.st_ctime_ns < started - RACY_NS:
                _PARSED[(place, name)] = (now, data)
            else:
                _PARSED.pop((place, name), None)
    for gone in [k for k in _PARSED if k[0] == place and k[1] not in seen]:
        del _PARSED[gone]
    return found
