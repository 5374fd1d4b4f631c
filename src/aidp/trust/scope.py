"""What a trusted command can load without asking, so that trusting it means trusting
all of that (docs/security.md, "What trust covers").

- Every file of the project a gated setting names (`python3 tools/agent.py`,
  `--config=tools/x.toml`).
- For a command run by an interpreter (`INTERPRETERS`), or whose program is itself a
  file of the project (a script run through its #! line): the folder of every project
  file it names, and every project folder it names (`python3 tools` runs
  tools/__main__.py), with everything below it — Python puts the script's folder first on
  `sys.path`, so `tools/json.py`, a package `tools/json/`, or a `tools/__pycache__/`
  entry next to `tools/agent.py` runs with it; node, ruby, perl and the shells load
  their neighbours by relative path. `python -m MODULE` and code given on the command
  line (`python3 -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`) cover the project
  root, the working folder they import from. For
  node and bun, also the `node_modules` folder of each folder from the script's up to
  the project root (where a bare `require("x")` looks).
- Every project folder a load-path variable on the command line names
  (`env PYTHONPATH=lib python3 …`; also NODE_PATH, PERL5LIB, PERLLIB, RUBYLIB, and
  perl's or ruby's `-I lib`), for any program.

In a git work tree a folder's files are what `git ls-files` lists in it (tracked, and
untracked files git does not ignore): everything a pull can bring. Elsewhere, every
file below it. `.git/` and the project's `.aidp/` are never part of it (aidp's own data
changes with every write; no interpreter imports a folder named with a dot). A link
inside a covered folder counts by its target; a linked folder inside the project is
covered too. At most `FOLDER_LIMIT` files: past it, `aidp trust` refuses the command
(`TooWide`) and a trusted one no longer runs.

Checking is by content (SHA-256), but a file whose stat data (size, mtime, ctime,
inode) is what it was when trusted is not read again: `aidp run` lists the folders and
stats their files, and hashes only what changed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import stat as stat_module
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aidp.core.errors import ConfigError
from aidp.tasklist.paths import DATA_DIR

# The programs whose script's folder is covered, by the name the command gives them
# (a path's last part): python, python3, python3.12, pypy3, node, bun, deno, ruby, perl,
# php and the POSIX shells.
INTERPRETERS = re.compile(
    r"(python|pypy)(\d+(\.\d+)*)?|node(js)?|bun|deno|ruby|perl|php|(ba|da|z|k|)sh")
# Those that resolve a bare `require("x")` in the node_modules folder of the script's
# folder and of every folder above it.
NODE = re.compile(r"node(js)?|bun")
FOLDER_LIMIT = 2000  # files under the covered folders of one config file
HASH_LIMIT = 16 << 20  # a bigger file (a model's weights, a data set) is no script
_SKIP = (".git", DATA_DIR)


class TooWide(ConfigError):
    """A covered folder holds more files than trust checks (exit 2)."""


@dataclass
class Scope:
    """What one config file's trusted commands can load."""

    files: dict[str, str] = field(default_factory=dict)  # project path -> digest
    stats: dict[str, list[int]] = field(default_factory=dict)  # path -> stat data
    named: list[str] = field(default_factory=list)  # the files the settings name
    folders: dict[str, int] = field(default_factory=dict)  # covered folder -> its files

    def record(self) -> dict[str, Any]:
        """What the trust store keeps of it."""
        return {"files": self.files, "stats": self.stats, "folders": sorted(self.folders)}


def scope(root: Path, values: Iterable[object],
          known: Mapping[str, Any] | None = None) -> Scope:
    """The files and folders the gated `values` of one config file can load, with a
    digest each. `known`: the trust record (`files`, `stats`), whose digest is taken
    for a file whose stat data did not change. Raises TooWide past FOLDER_LIMIT."""
    top = os.path.realpath(root)
    before_files = (known or {}).get("files") or {}
    before_stats = (known or {}).get("stats") or {}
    found = Scope()
    folders: list[str] = []

    def add(name: str, path: str) -> None:
        if name in found.files:
            return
        digest, stats = _digest(path, before_files.get(name), before_stats.get(name))
        found.files[name] = digest
        if stats is not None:
            found.stats[name] = stats

    for words in (command for value in values for command in _commands(list(_words(value)))):
        named = list(_named_files(top, words))
        for name, path in named:
            add(name, path)
            if name not in found.named:
                found.named.append(name)
        if _loads_neighbours(top, words):
            here = [os.path.dirname(name) or "." for name, _ in named]
            here += _named_folders(top, words)  # `python3 tools` runs its __main__
            folders.extend(here)
            if NODE.fullmatch(os.path.basename(_program(words) or "")):
                folders.extend(_node_modules(here))

            if _runs_from_working_folder(words):
                folders.append(".")
        folders.extend(_load_path_folders(top, words))
    count = 0
    for folder in _unique_folders(folders):
        found.folders[folder] = 0
        for name, path in _folder_files(top, folder):
            count += 1
            found.folders[folder] += 1
            if count > FOLDER_LIMIT:
                raise TooWide(
                    f"Cannot trust a command that runs a script in {shown_folder(folder)}: "
                    f"trust covers the script's folder, and it holds more than "
                    f"{FOLDER_LIMIT:,} files; put the script in a folder of its own, "
                    f"or set the command in your git-ignored {DATA_DIR}/config.local.toml")
            add(name, path)
    return found


def shown_folder(folder: str) -> str:
    """A covered folder as people read it."""
    return "the project root" if folder == "." else f"{folder}/"


def _words(value: object) -> Iterator[str]:
    if isinstance(value, str):
        try:
            yield from shlex.split(value)
        except ValueError:
            yield value
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                yield item
            else:
                yield from _words(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _words(item)


def _commands(words: list[str], depth: int = 0) -> Iterator[list[str]]:
    """The command line, then each command line inside one of its words (`sh -c
    "python3 tools/agent.py"`, `bash -lc '…'`), a few levels deep."""
    yield words
    if depth >= 3:
        return
    for word in words[1:]:
        if any(space in word for space in " \t\n"):
            try:
                inner = shlex.split(word)
            except ValueError:
                continue
            yield from _commands(inner, depth + 1)


def _named_files(top: str, words: list[str]) -> Iterator[tuple[str, str]]:
    """(project path, real path) of each word, or `--opt=` value, that is a file of the
    project."""
    for word in words:
        for candidate in (word, word.partition("=")[2] if word.startswith("-") else ""):
            if not candidate or "{prompt}" in candidate:
                continue
            path = os.path.realpath(os.path.join(top, os.path.expanduser(candidate)))
            if os.path.commonpath([top, path]) == top and os.path.isfile(path):
                yield os.path.relpath(path, top), path


# Words that start the next word as the program (`exec python3 …`, `env X=1 python3 …`).
_PREFIXES = frozenset({"env", "exec", "command", "nice", "nohup", "time", "timeout"})


def _node_modules(folders: list[str]) -> Iterator[str]:
    """`node_modules` in each of `folders` and each folder above it up to the project
    root, there or not (one appearing is a change)."""
    for folder in folders:
        parts = [] if folder == "." else folder.split("/")
        for n in range(len(parts), -1, -1):
            yield "/".join([*parts[:n], "node_modules"])


def _named_folders(top: str, words: list[str]) -> Iterator[str]:
    """Each argument that is a folder of the project (`python3 tools`, `node app`)."""
    for word in words[1:]:
        if word.startswith("-") or "{prompt}" in word:
            continue
        path = os.path.realpath(os.path.join(top, os.path.expanduser(word)))
        if os.path.commonpath([top, path]) == top and os.path.isdir(path):
            yield os.path.relpath(path, top)


def _program(words: list[str]) -> str | None:
    """The program a command line starts (`env VAR=x python3 …` starts python3)."""
    rest = list(words)
    while rest and os.path.basename(rest[0]) in _PREFIXES:
        timeout = os.path.basename(rest[0]) == "timeout"
        rest = rest[1:]
        while rest and (rest[0].startswith("-") or "=" in rest[0]):
            rest = rest[1:]
        if timeout and rest:
            rest = rest[1:]  # its duration
    return rest[0] if rest else None


def _loads_neighbours(top: str, words: list[str]) -> bool:
    program = _program(words)
    if program is None:
        return False
    if INTERPRETERS.fullmatch(os.path.basename(program)):
        return True
    path = os.path.realpath(os.path.join(top, program))  # ./tools/agent, run by its #!
    return os.sep in program and os.path.commonpath([top, path]) == top


# Options that make an interpreter run code given on its command line, or a module found
# from the working folder (the project root: `aidp run` starts the agent there), by
# program: `python3 -c "import helper"`, `python3 -m tool`, `node -e`, `perl -e`,
# `ruby -e`, `php -r`.
_INLINE = (
    (re.compile(r"(python|pypy)"), re.compile(r"-[bBdEhiIOPqsSuvx]*[cm]")),
    (re.compile(r"node(js)?|bun|deno"), re.compile(r"-[a-z]*[ep]$|--(eval|print)(=|$)|eval$")),
    (re.compile(r"perl|ruby"), re.compile(r"-[0-9A-Za-z]*[eE]")),
    (re.compile(r"php"), re.compile(r"-r")),
)


def _runs_from_working_folder(words: list[str]) -> bool:
    """Whether the command runs code that imports from its working folder: a module
    (`-m`) or code on its command line (`-c`, `-e`, …)."""
    program = _program(words)
    if program is None:
        return False
    name = os.path.basename(program)
    options = words[words.index(program) + 1:]
    return any(kind.match(name) and any(option.match(w) for w in options)
               for kind, option in _INLINE)


# Variables that put folders on an interpreter's load path (`env PYTHONPATH=lib …`), and
# the option that does it for perl and ruby (`-Ilib`, `-I lib`).
LOAD_PATHS = ("PYTHONPATH", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB")


def _load_path_folders(top: str, words: list[str]) -> Iterator[str]:
    """Each project folder a load-path variable set on the command line names, or a
    perl/ruby `-I` option: what the interpreter imports from without asking (a folder
    not there yet too: one appearing is a change)."""
    values: list[str] = []
    for n, word in enumerate(words):
        name, eq, value = word.partition("=")
        if eq and name in LOAD_PATHS:
            values.extend(value.split(os.pathsep))
        elif word.startswith("-I") and re.match(r"perl|ruby",
                                                os.path.basename(_program(words) or "")):
            values.append(word[2:] or (words[n + 1] if n + 1 < len(words) else ""))
    for value in values:
        if not value or "{prompt}" in value:
            continue
        path = os.path.realpath(os.path.join(top, os.path.expanduser(value)))
        if os.path.commonpath([top, path]) == top and not os.path.isfile(path):
            yield os.path.relpath(path, top)


def _unique_folders(folders: list[str]) -> list[str]:
    """Each folder once, and none inside another one already covered."""
    chosen: list[str] = []
    for folder in sorted(set(folders), key=lambda f: (f != ".", f.count("/"), f)):
        if not any(folder == c or c == "." or folder.startswith(c + "/") for c in chosen):
            chosen.append(folder)
    return chosen


def _folder_files(top: str, folder: str) -> Iterator[tuple[str, str]]:
    """(project path, path) of every file the folder covers, a linked folder inside
    the project followed once."""
    seen: set[str] = set()
    queue = [folder]
    while queue:
        current = queue.pop()
        real = os.path.realpath(os.path.join(top, current))
        if real in seen:
            continue
        seen.add(real)
        for name in _listed(top, current):
            path = os.path.join(top, name)
            if os.path.islink(path) and os.path.isdir(path):
                target = os.path.realpath(path)
                if os.path.commonpath([top, target]) == top and target != top:
                    queue.append(os.path.relpath(target, top))
            elif os.path.isdir(path):  # a submodule: git lists it as one entry
                for inner in _walked(top, name):
                    yield inner, os.path.join(top, inner)
                continue
            yield name, path


def _listed(top: str, folder: str) -> list[str]:
    """The files in `folder` (project paths) as git lists them, else by walking it."""
    import subprocess

    where = "." if folder == "." else folder
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "ls-files", "-z", "--cached", "--others",
             "--exclude-standard", "--", where],
            cwd=top, capture_output=True, check=False, timeout=60)
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is not None and done.returncode == 0:
        names = sorted({os.fsdecode(n) for n in done.stdout.split(b"\0") if n})
        return [n for n in names if n.split("/", 1)[0] not in _SKIP]
    return _walked(top, folder)


def _walked(top: str, folder: str) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(top, folder)):
        rel = os.path.relpath(dirpath, top)
        dirnames[:] = sorted(d for d in dirnames
                             if d != ".git" and not (rel == "." and d == DATA_DIR))
        files = [f for f in sorted(filenames) if f != ".git"]  # a submodule's is a file
        for name in files + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            found.append(os.path.normpath(os.path.join(rel, name)))
        if len(found) > FOLDER_LIMIT:
            break
    return found


def _digest(path: str, before: str | None,
            before_stats: list[int] | None) -> tuple[str, list[int] | None]:
    """(digest, stat data) of the file at `path`: the recorded digest when its stat data
    is unchanged, else SHA-256 of its content (for a big file its size and time); a
    link's digest names its target too."""
    prefix = ""
    try:
        if os.path.islink(path):
            prefix = f"link:{os.readlink(path)}:"
        st = os.stat(path)
    except OSError:
        return prefix + "missing", None
    stats = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    if not stat_module.S_ISREG(st.st_mode):
        return prefix + "not a file", None
    if before is not None and before_stats == stats and before.startswith(prefix):
        return before, stats
    try:
        with open(path, "rb") as handle:
            if st.st_size > HASH_LIMIT:
                return f"{prefix}stat:{st.st_size}:{st.st_mtime_ns}", stats
            return prefix + hashlib.file_digest(handle, "sha256").hexdigest(), stats
    except OSError:
        return prefix + "unreadable", stats
