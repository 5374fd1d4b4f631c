"""The git attributes of `.aidp/tasklist.jsonl`: what a repository's `.gitattributes`
can change about the file aidp reads and git merges (issue 27, item 9).

aidp commits `.aidp/tasklist.jsonl merge=union` (and `diff=aidp`). A repository can
override that in any `.gitattributes` between the work tree's top and `.aidp/` (a
deeper file wins), or in `$GIT_DIR/info/attributes`:

- `working-tree-encoding=UTF-16` (any encoding but UTF-8): git checks the file out
  re-encoded. aidp decodes it for reading (`decode`) and refuses to append to it:
  appending UTF-8 lines would corrupt it (docs/file-format.md, "Git attributes").
- `merge` other than `union` (`-merge`, `binary`, `merge=text`, a driver, or reset to
  unspecified with `!merge`): merges of two clones' lines conflict instead of keeping
  both.
- `filter=…` (a clean/smudge command rewrites the file), `ident` (rewrites `$Id$`),
  `eol=crlf` (CRLF line ends in the work tree, mixed with the LF lines aidp appends).

Reads must stay fast, so no `git` runs on an ordinary read: `scan` reads the few
attributes files that can apply (a stat and a small read each, no subprocess) and
only when a line in one of them could match the tasklist *and* sets one of the
attributes above does `check` ask `git check-attr -a` for the effective values (git's
own matching, macros and precedence). The user's global attributes file
(core.attributesFile) is theirs, not the repository's: reads do not look at it, `aidp
init` (which runs `git check-attr` always) does.
"""

from __future__ import annotations

import codecs
import os
import re
from fnmatch import fnmatchcase
from pathlib import Path

from aidp.core.plain import Plain
from aidp.tasklist.files import read_regular
from aidp.tasklist.paths import DATA_DIR, locate_git

TASKLIST = f"{DATA_DIR}/tasklist.jsonl"
_WATCHED = frozenset({"working-tree-encoding", "merge", "filter", "ident", "eol", "binary"})
_UTF8 = frozenset({"utf-8", "utf8"})
_SIZE_LIMIT = 1 << 20  # an attributes file bigger than this is not read by the scan


class Attributes(Plain):
    """What applies to the tasklist: the effective overrides, named for people, the
    working-tree encoding (None: UTF-8), and the attributes files that set them."""

    __slots__ = _fields = ("overrides", "encoding", "sources")

    def __init__(self, overrides: list[str] | None = None, encoding: str | None = None,
                 sources: list[str] | None = None) -> None:
        self.overrides = [] if overrides is None else overrides
        self.encoding = encoding
        self.sources = [] if sources is None else sources

    def note(self) -> str | None:
        """One line naming every override, or None when there is none."""
        if not self.overrides:
            return None
        where = f" (set in {', '.join(self.sources)})" if self.sources else ""
        return (f"Warning: git attributes override aidp's for {TASKLIST}{where}: "
                f"{'; '.join(self.overrides)}; aidp reads the tasks anyway "
                "(docs/file-format.md, Git attributes)")


def candidates(root: Path) -> list[tuple[Path, str]]:
    """(attributes file, the tasklist's path relative to that file's folder) for every
    file that can give the tasklist attributes; [] outside a git work tree."""
    found = locate_git(root.absolute(), ceilings=True)
    if found is None:
        return []
    top, git_dir = found
    tasklist = root.absolute() / TASKLIST
    try:
        rel = tasklist.relative_to(top)
    except ValueError:
        return []
    parts = rel.parts
    files = [(top.joinpath(*parts[:depth], ".gitattributes"), "/".join(parts[depth:]))
             for depth in range(len(parts))]
    files.append((git_dir / "info" / "attributes", rel.as_posix()))
    return files


def _pattern_matches(pattern: str, rel: str) -> bool:
    """Whether a .gitattributes pattern could match `rel` (git's rules, leaning towards
    yes: case folded, a quoted pattern always could)."""
    if pattern.startswith('"'):
        return True
    if pattern.endswith("/"):
        return False  # a folder pattern never gives attributes to the files inside
    if "/" not in pattern:
        return fnmatchcase(rel.rsplit("/", 1)[-1].lower(), pattern.lower())
    regex = ""
    rest = pattern.lstrip("/")
    i = 0
    while i < len(rest):
        if rest.startswith("**/", i):
            regex, i = regex + "(?:.*/)?", i + 3
        elif rest.startswith("**", i):
            regex, i = regex + ".*", i + 2
        elif rest[i] == "*":
            regex, i = regex + "[^/]*", i + 1
        elif rest[i] == "?":
            regex, i = regex + "[^/]", i + 1
        elif rest[i] == "[" and "]" in rest[i + 2:]:
            end = rest.index("]", i + 2)
            body = rest[i + 1:end].replace("\\", "\\\\")
            if body.startswith("!"):
                body = "^" + body[1:]
            regex, i = regex + f"[{body}]", end + 1
        else:
            regex, i = regex + re.escape(rest[i]), i + 1
    return re.fullmatch(regex, rel, re.IGNORECASE) is not None


def _watched(token: str, macros: set[str]) -> bool:
    """Whether an attribute token could override what aidp relies on."""
    name, _, value = token.lstrip("-!").partition("=")
    if name == "merge":
        return token != "merge=union"
    if name == "working-tree-encoding":
        return value.lower() not in _UTF8
    if name == "eol":
        return value.lower() == "crlf"
    return name in _WATCHED or name in macros


def scan(root: Path) -> list[str]:
    """The attributes files (relative to the root, else absolute) holding a line that
    could give the tasklist an attribute aidp watches; [] in the common case. No
    subprocess, and never an error: a file that cannot be read, in any encoding
    (attributes are bytes to git), is searched as far as it can be."""
    flagged: list[str] = []
    macros: set[str] = set()
    for path, rel in candidates(root):
        data = read_regular(path, _SIZE_LIMIT)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        for line in text.splitlines():
            tokens = line.split()
            if not tokens or tokens[0].startswith("#"):
                continue
            if tokens[0].startswith("[attr]"):
                if any(_watched(t, macros) for t in tokens[1:]):
                    macros.add(tokens[0][len("[attr]"):])
                continue
            if (any(_watched(t, macros) for t in tokens[1:])
                    and _pattern_matches(tokens[0], rel)):
                try:
                    shown = str(path.relative_to(root.absolute()))
                except ValueError:
                    shown = str(path)
                if shown not in flagged:
                    flagged.append(shown)
    return flagged


def effective(root: Path) -> dict[str, str] | None:
    """`git check-attr -a` for the tasklist: attribute → value ("set", "unset" or the
    value); None when git cannot tell (no git, not a repository)."""
    import subprocess

    try:
        done = subprocess.run(
            # fsmonitor is a command line in .git/config: never let a copied .git run one.
            ["git", "-c", "core.fsmonitor=false", "check-attr", "-z", "-a", "--", TASKLIST],
            cwd=root, capture_output=True, check=False, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    fields = done.stdout.decode("utf-8", "replace").split("\0")
    return {fields[i + 1]: fields[i + 2] for i in range(0, len(fields) - 2, 3)}


def overrides(values: dict[str, str]) -> tuple[list[str], str | None]:
    """(what overrides aidp's rules, named for people; the working-tree encoding)."""
    found: list[str] = []
    encoding = values.get("working-tree-encoding")
    if encoding in ("set", "unset") or (encoding and encoding.lower() in _UTF8):
        encoding = None
    if encoding:
        found.append(f"working-tree-encoding={encoding} (the file is {encoding} in the "
                     "work tree: read decoded, never appended to)")
    # git check-attr -a leaves out what is unspecified: no merge there is `!merge` (or no
    # rule at all), git's default text merge, which conflicts as much as -merge does.
    merge = values.get("merge", "unspecified")
    if merge != "union":
        shown = {"unset": "-merge", "set": "merge", "unspecified": "!merge (unspecified"
                 }.get(merge, f"merge={merge} (")
        shown += "" if shown.endswith("(") else ", "
        found.append(f"{shown}not merge=union: merging two clones' tasks will conflict)")
    if values.get("filter") not in (None, "unset"):
        found.append(f"filter={values['filter']} (a command rewrites the file on checkout "
                     "and commit)")
    if values.get("ident") == "set":
        found.append("ident (git rewrites $Id$ in task text)")
    if values.get("eol") == "crlf":
        found.append("eol=crlf (CRLF line ends in the work tree)")
    return found, encoding


def check(root: Path, *, always: bool = False) -> Attributes:
    """The overrides of the tasklist's attributes: `scan` first, `git check-attr` only
    when it found a candidate line (or `always`: `aidp init`)."""
    sources = scan(root)
    if not sources and not always:
        return Attributes()
    values = effective(root)
    if values is None:
        return Attributes()
    found, encoding = overrides(values)
    return Attributes(found, encoding, sources if found else [])


# --- the working-tree encoding --------------------------------------------------------

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


# How many bytes of a tasklist's head `sniff` looks at: a JSON line starts with an ASCII
# run (`{"id":"task_…` or `{"type":…`), eight characters of which tell the width.
SNIFF_BYTES = 34


def sniff(head: bytes) -> str | None:
    """The encoding the first bytes of a tasklist show, when it is not UTF-8: UTF-16 or
    UTF-32, with or without a byte order mark, told by the NUL bytes its ASCII
    characters carry (a JSON line starts with ASCII). None: UTF-8 (or empty). A mark or
    a NUL with no such pattern behind it is damage at the head of a UTF-8 file, whose
    lines stay UTF-8 (tests/reliability/test_damage_fuzz.py plants such bytes)."""
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name if _width_pattern(head[len(bom):], name) else None
    for name in ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be"):
        if _width_pattern(head, name):
            return name
    return None


def _width_pattern(sample: bytes, name: str) -> bool:
    """Whether `sample` reads as ASCII characters in `name`: each unit one non-NUL byte
    (low first for -le) and NULs, for at least four units."""
    width = 4 if name.startswith("utf-32") else 2
    units = [sample[i:i + width] for i in range(0, len(sample) - width + 1, width)][:8]
    if len(units) < 4:
        return False
    low = 0 if name.endswith("-le") else width - 1
    return all(u[low] and u[low] < 0x80 and not u[:low].strip(b"\0")
               and not u[low + 1:].strip(b"\0") for u in units)


def decode(data: bytes, encoding: str) -> bytes:
    """The tasklist's bytes in UTF-8, from `encoding` (a git/iconv name, or what
    `sniff` found); a byte order mark is honoured and dropped; what does not decode
    becomes U+FFFD (that line is then damage, as any other). Bytes with no sign of
    UTF-16/32 that are valid UTF-8 are kept as they are (an attribute added since the
    last checkout has not re-encoded the file yet)."""
    found = sniff(data[:SNIFF_BYTES])
    if found is None:
        try:  # not (yet) checked out re-encoded: valid UTF-8 JSON lines are UTF-8
            data.decode("utf-8")
            return data
        except UnicodeDecodeError:
            pass
    name = found or encoding
    try:
        info = codecs.lookup(name)
    except LookupError:
        return data
    if info.name in ("utf-16", "utf-32"):  # no byte order given: the bytes tell
        guess = sniff(data[:SNIFF_BYTES])
        name = guess or (info.name + "-be")
    text = data.decode(name, "replace").removeprefix("\ufeff")
    return text.encode("utf-8")


class Watch:
    """One project's attributes, checked again only when an attributes file changed:
    a process that reads many times (a run, the MCP server) stats a few files a read."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[Path] | None = None
        self._key: tuple[object, ...] | None = None
        self._found = Attributes()

    def current(self) -> Attributes:
        if self._files is None:
            self._files = [path for path, _ in candidates(self.root)]
        key = tuple(_stat_key(path) for path in self._files)
        if key != self._key:
            self._found = check(self.root) if any(key) else Attributes()
            self._key = key
        return self._found


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
