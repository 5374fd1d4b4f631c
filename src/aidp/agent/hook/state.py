"""The local state of `aidp hook`: one small JSON file per agent session under
`.aidp/hooks/` (git-ignored, never in the tasklist), read and written under a lock;
sessions untouched for STATE_TTL are swept at session start."""

from __future__ import annotations

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
        self._fd: int | None = None
        self.problem: str | None = None

    def __enter__(self) -> State:
        import fcntl

        try:
            # Never through a link a cloned repository planted (`.aidp` or
            # `.aidp/hooks` included), never a FIFO: aidp.tasklist.files.
            with _folder(self.path.parents[2], create=True) as folder:
                folder.create(".gitignore", b"# aidp hook state: local to this clone\n*\n")
                self._fd = folder.open(self.path.name, os.O_RDWR | os.O_CREAT)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            raw = b""
            while chunk := os.read(self._fd, 1 << 16):
                raw += chunk
        except (OSError, StorageError) as exc:
            # Without its state a hook still answers (the count starts at 0): the prime
            # text at session start matters more than the count.
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
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
        if self._fd is None:
            return
        data = dict(self.data, updated=int(time.time()))
        body = orjson.dumps(data, option=orjson.OPT_SORT_KEYS) + b"\n"
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.ftruncate(self._fd, 0)
        os.write(self._fd, body)

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None

    def blocks(self) -> int:
        value = self.data.get("blocks")
        return value if isinstance(value, int) and not isinstance(value, bool) else 0


# What state_path names: the only files sweep() removes.
_STATE_NAME = re.compile(r"[a-z0-9]+-[A-Za-z0-9_.-]{0,60}-[0-9a-f]{8}\.json")


def state_path(root: Path, agent: str, session: str) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session)[:60]
    digest = zlib.crc32(session.encode("utf-8", "surrogatepass"))
    return root / DATA_DIR / STATE_DIR / f"{agent}-{safe}-{digest:08x}.json"


def _folder(root: Path, *, create: bool = False) -> files.Folder:
    """`.aidp/hooks` under the project root, reached without crossing any link."""
    return files.folder(root, f"{DATA_DIR}/{STATE_DIR}", create=create)


def sweep(root: Path, *, now: float | None = None) -> None:
    """Forget the state of sessions nobody touched for STATE_TTL: only regular files
    named as `state_path` names them, in a `.aidp/hooks` that is no link (nor is
    `.aidp`): a committed `.aidp/hooks -> ~/.docker` loses nothing."""
    limit = (now if now is not None else time.time()) - STATE_TTL
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
            if not _STATE_NAME.fullmatch(name):
                continue
            info = folder.lstat(name)
            if info is not None and stat.S_ISREG(info.st_mode) and info.st_mtime < limit:
                folder.unlink(name)


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
    """`pid@start` (its start time since boot, where /proc tells it), so that a pid the
    system handed to another process later is not taken for the same agent; the bare
    pid elsewhere."""
    fields = _stat_fields(pid) if os.path.isdir("/proc/self") else []
    start = fields[19].decode() if len(fields) > 19 else ""
    return f"{pid}@{start}" if start.isdigit() else str(pid)


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
    include it, the most recently updated; None when no hook of that agent ran here."""
    best: tuple[int, str] | None = None
    key = process_key(agent_pid)
    for data in _states(root):
        if not isinstance(data, dict):
            continue
        agents = data.get("agents")
        if isinstance(agents, list):  # pid@start: a reused pid does not match
            if key not in agents:
                continue
        elif agent_pid not in (data.get("pids") or ()):  # state of an older aidp
            continue
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
    found: list[object] = []
    seen = set()
    with folder:
        try:
            names = [entry.name for entry in folder.scandir()]
        except OSError:
            return []
        for name in names:
            info = folder.lstat(name) if name.endswith(".json") else None
            if info is None or not stat.S_ISREG(info.st_mode):
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
