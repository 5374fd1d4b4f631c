"""A model's text is data: signals never execute anything, never write outside
`.aidp/`, and whatever it says stays inert on the terminal (docs/security.md).

"Never executes, never writes outside" is watched with a Python audit hook while
signals are applied: every process start (subprocess, os.system, exec, spawn, fork)
and every file write, rename, removal or link is seen, whatever code path made it.
"""

from __future__ import annotations

import os
import shlex
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_support import examples

from aidp.agent import signals
from aidp.agent.loop import Loop
from aidp.agent.presets import parse
from aidp.app.project import Project
from aidp.core.terminal import inert
from aidp.tasklist.log import TaskLog

# --- the watch ------------------------------------------------------------------------------

_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                   "os.fork", "os.forkpty", "pty.spawn", "os.startfile")
_PATH_EVENTS = ("os.rename", "os.replace", "os.remove", "os.rmdir", "os.mkdir", "os.symlink",
                "os.link", "os.truncate", "os.chmod", "os.chown", "shutil.copyfile",
                "shutil.move", "shutil.rmtree")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _at(path: object, dir_fd: object) -> str:
    """The absolute path a name relative to a folder descriptor (aidp.tasklist.files opens every
    file relative to its folder's) or to the working folder stands for."""
    name = os.fsdecode(path)  # type: ignore[arg-type]
    if os.path.isabs(name):
        return name
    base = os.readlink(f"/proc/self/fd/{dir_fd}") if isinstance(dir_fd, int) else os.getcwd()
    return os.path.join(base, name)


# Where each path event keeps its folder descriptor (after the paths), when it has one.
_DIR_FDS = {"os.remove": (1,), "os.rmdir": (1,), "os.mkdir": (2,), "os.rename": (2, 3),
            "os.replace": (2, 3), "os.symlink": (2, 2), "os.link": (2, 3),
            "os.chmod": (2,), "os.chown": (3,)}


class _Watch:
    def __init__(self) -> None:
        self.on = False
        self.started: list[tuple[str, object]] = []
        self.written: list[str] = []
        self.opening_at: object = None  # the folder descriptor of the os.open under way

    def __call__(self, event: str, args: tuple) -> None:
        if not self.on:
            return
        if event.startswith(_PROCESS_EVENTS):
            self.started.append((event, args[:2]))
        elif event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & _WRITE_FLAGS)
            if writing and isinstance(path, (str, bytes, os.PathLike)):
                self.written.append(_at(path, self.opening_at))
        elif event in _PATH_EVENTS:
            fds = _DIR_FDS.get(event, ())
            for n, path in enumerate(args[:2]):
                if isinstance(path, (str, bytes, os.PathLike)):
                    at = args[fds[n]] if n < len(fds) and fds[n] < len(args) else None
                    self.written.append(_at(path, at))

    def os_open(self, real):
        """os.open that tells the watch which folder a relative name is in (the audit
        event of os.open does not say)."""
        def opened(path, flags, mode=0o777, *, dir_fd=None):
            self.opening_at = dir_fd
            try:
                return real(path, flags, mode, dir_fd=dir_fd)
            finally:
                self.opening_at = None
        return opened


WATCH = _Watch()
sys.addaudithook(WATCH)  # cannot be removed; does nothing unless a test turns it on


@contextmanager
def watching() -> Iterator[_Watch]:
    WATCH.started.clear()
    WATCH.written.clear()
    real = os.open
    os.open = WATCH.os_open(real)  # type: ignore[assignment]
    WATCH.on = True
    try:
        yield WATCH
    finally:
        WATCH.on = False
        os.open = real  # type: ignore[assignment]


@pytest.fixture
def watch():
    with watching() as watched:
        yield watched


def assert_only_aidp_writes(watch: _Watch, project: Path) -> None:
    inside = (project / ".aidp").resolve()
    outside = [p for p in watch.written
               if not Path(os.path.realpath(p)).is_relative_to(inside)]
    assert outside == [], outside
    assert watch.started == []


# --- hostile text ------------------------------------------------------------------------------

CANARY = "CANARY_pwned"
SHELL = [f"$(touch {CANARY})", f"`touch {CANARY}`", f"; touch {CANARY}", f"| touch {CANARY}",
         f"&& touch {CANARY}", "../../../../tmp/" + CANARY, "/etc/passwd", "~/.bashrc",
         "{prompt}", "%(x)s {0}"]
INVISIBLE = {
    "bidi override": "invoice\u202egnp.exe",
    "bidi isolate": "a\u2066b\u2069c",
    "right-to-left mark": "x\u200fy",
    "zero-width space": "ad\u200bmin",
    "zero-width joiner": "ab\u200dc",
    "word joiner": "a\u2060b",
    "byte order mark": "\ufeffbom",
    "tag characters": "ok\U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065",
    "line separator": "one\u2028two",
    "soft hyphen": "ad\u00admin",
}
TERMINAL = {
    "ANSI colour": "\x1b[31mred\x1b[0m",
    "OSC 8 link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "window title": "\x1b]0;owned\x07",
    "C1 CSI": "\x9b2J",
}
# Anything the terminal would act on or hide: C0/C1 controls (bar newline and tab)
# and every invisible format character.
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt) outside Cf: drawn
# as nothing (Hangul fillers, the combining grapheme joiner, variation selectors) but
# U+FE0E/U+FE0F, the presentation selectors of ordinary emoji (model.INVISIBLE_CHARS).
_IGNORABLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x3164,
              *range(0xFE00, 0xFE0E), 0xFFA0, *range(0xFFF0, 0xFFF9), *range(0xE0000, 0xE1000)}
_DANGEROUS = {chr(c) for c in range(0x110000)
              if ((unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp", "Cc") or c in _IGNORABLE)
                  and chr(c) not in "\n\t")}


def assert_inert(*texts: str) -> None:
    for text in texts:
        found = sorted({f"U+{ord(ch):04X}" for ch in text if ch in _DANGEROUS})
        assert found == [], f"raw {found} reached the terminal: {text!r}"


# --- terminal.inert itself ------------------------------------------------------------------------


def test_inert_escapes_every_control_and_invisible_format_character() -> None:
    for ch in sorted(_DANGEROUS | {"\n", "\t"}):
        shown = inert(f"a{ch}b")
        assert shown.isascii() and shown.isprintable(), (f"U+{ord(ch):04X}", shown)
        assert shown.startswith("a\\") and shown.endswith("b")


@pytest.mark.parametrize("text", [
    "plain ASCII", "café, naïve, Ærø", "日本語のテキスト", "עברית ועוד", "العربية",
    "emoji 🔴🟡🟢 ✓ 📋", "a red heart \u2764\ufe0f", "e\u0301 combining", "Ελληνικά", "नमस्ते",
])
def test_inert_leaves_ordinary_text_alone(text: str) -> None:
    assert inert(text) == text


@pytest.mark.parametrize("name", sorted(INVISIBLE))
def test_inert_shows_invisible_characters_as_escapes(name: str) -> None:
    shown = inert(INVISIBLE[name])
    assert_inert(shown)
    assert "\\u" in shown or "\\U" in shown or "\\x" in shown


# --- signals never execute, never write outside .aidp/ ------------------------------------------


def _loop(project: Path, emitted: list) -> Loop:
    return Loop(project=Project(project, create_root=True), session="s",
                agent=parse(shlex.quote(sys.executable), source="--agent"),
                emit=emitted.append)


def _hostile_lines() -> list[str]:
    payloads = [*SHELL, *INVISIBLE.values(), *TERMINAL.values()]
    lines = []
    for text in payloads:
        lines += [
            f'File task: "fix {text}" priority: high tags: {text},ok',
            f'Update task: {text} status: done reason: "{text}"',
            f'Update task: ID status: {text}',
            f'Todo pause: "{text}"',
        ]
    return lines


def test_applying_hostile_signals_starts_nothing_and_writes_only_aidp(project: Path,
                                                                       watch) -> None:
    watch.on = False
    emitted: list = []
    loop = _loop(project, emitted)  # building the loop checks the agent exists: not watched
    watch.on = True
    applied = 0
    for line in _hostile_lines():
        for signal in signals.parse(line):
            loop._apply(signal, 1)
            applied += 1
    watch.on = False
    assert applied >= 4 * len(SHELL)
    assert_only_aidp_writes(watch, project)
    assert not any(CANARY in str(p) for p in Path("/tmp").glob(f"*{CANARY}*"))
    stored = [t["description"] for t in TaskLog(project).read().tasks.values()]
    assert f"fix $(touch {CANARY})" in stored  # stored as data, exactly
    assert not list(project.rglob(f"*{CANARY}*"))


@settings(max_examples=examples(40, 400), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(line=st.builds(
    lambda head, body, tail: f"{head}{body}{tail}",
    st.sampled_from(['File task: "', "Update task: ", 'Todo pause: "', "", "tags: "]),
    st.lists(st.one_of(st.characters(blacklist_categories=("Cs",)),
                       st.sampled_from([*SHELL, *INVISIBLE.values(), *TERMINAL.values()])),
             max_size=12).map("".join),
    st.sampled_from(['"', '" priority: high tags: a,b', " status: done", "", '" reason: "x"']),
))
def test_any_signal_line_starts_nothing_and_writes_only_aidp(project: Path, line: str) -> None:
    emitted: list = []
    loop = _loop(project, emitted)
    with watching():
        for signal in signals.parse(line):
            loop._apply(signal, 1)
    assert_only_aidp_writes(WATCH, project)


# --- every human output path keeps it inert ------------------------------------------------------

HOSTILE_AGENT = """\
import sys
TEXTS = {texts!r}
for text in TEXTS:
    print("says " + text)
    print('File task: "title ' + text + '" tags: t')
print('Todo pause: "because \\u202egnp.exe"', file=sys.stderr)
print('Todo pause: "because \\u202egnp.exe"')
"""


def test_the_run_display_keeps_model_text_inert(cli, project: Path, tmp_path: Path) -> None:
    texts = [*INVISIBLE.values(), *TERMINAL.values(), *SHELL]
    agent = tmp_path / "agent.py"
    agent.write_text(HOSTILE_AGENT.format(texts=texts), encoding="utf-8")
    before = {p for p in tmp_path.rglob("*") if not p.is_relative_to(project)}
    result = cli("run", "go", "--agent", f"{shlex.quote(sys.executable)} {shlex.quote(str(agent))}")
    assert result.code == 0, result
    assert_inert(result.out, result.err)
    assert "says invoice\\u202egnp.exe" in result.out  # shown, as an escape
    assert "\\x1b]8;;https://evil.example/" in result.out
    assert result.out.count("📋 Filed task: title") >= len(INVISIBLE)
    assert not list(tmp_path.rglob(f"*{CANARY}*"))
    after = {p for p in tmp_path.rglob("*") if not p.is_relative_to(project)}
    assert after == before  # nothing written outside the project
    outside_aidp = [p for p in project.rglob("*")
                    if p.relative_to(project).parts[0] != ".aidp"]
    assert outside_aidp == []


def test_stored_titles_are_inert_in_every_human_view(cli, project: Path) -> None:
    ids = []
    for name, text in INVISIBLE.items():
        added = cli("tasks", "add", "--json", f"title {text}", "-t", "x")
        assert added.code == 0, (name, added)
        ids.append(orjson.loads(added.out)["id"])
        assert cli("todo", "add", f"item {text}").code == 0
    # escape sequences are refused at input; a foreign tool may still have written them
    TaskLog(project).append([{**orjson.loads(cli("tasks", "show", "--json", ids[0]).out),
                              "id": f"task_1_{n:08x}", "description": f"foreign {text}"}
                             for n, text in enumerate(TERMINAL.values())])
    views = [("tasks", "list"), ("tasks", "list", "--all", "--format", "markdown"),
             ("tasks", "list", "--sort", "priority"), ("todo", "show"), ("todo", "list")]
    views += [("tasks", "show", tid) for tid in ids]
    views += [("tasks", "history", tid) for tid in ids[:2]]
    views += [("tasks", "note", ids[1], f"note {INVISIBLE['bidi override']}"),
              ("tasks", "show", ids[1]), ("tasks", "ready"), ("tasks", "stats"), ("prime",)]
    views += [("tasks", "done", ids[0]), ("todo", "tick", "1")]
    # Every other human view and message that names a task, a tag, a reason or a person.
    bidi, zwsp = INVISIBLE["bidi override"], INVISIBLE["zero-width space"]
    # Tags refuse invisible characters at input (model.validate_tag); a foreign tool's
    # tag may still hold them.
    TaskLog(project).append([{**orjson.loads(cli("tasks", "show", "--json", ids[3]).out),
                              "id": "task_2_00000001", "tags": [f"t{zwsp}"]}])
    views += [("tasks", "list", "--tree"), ("tasks", "show", "task_2_00000001"),
              ("tasks", "list", "-t", f"t{zwsp}"), ("tasks", "stats"),
              ("tasks", "block", ids[4], "--on", ids[5]), ("tasks", "blocked"),
              ("tasks", "unblock", ids[4], "--on", ids[5]),
              ("tasks", "claim", ids[2], "--as", f"mal{bidi}"), ("tasks", "show", ids[2]),
              ("tasks", "list"), ("tasks", "release", ids[2]),
              ("tasks", "abandon", ids[6], f"because {bidi}"), ("tasks", "list", "--all"),
              ("tasks", "reopen", ids[6]), ("tasks", "start", ids[7]),
              ("tasks", "add", f"new {bidi}", "-t", "n"),
              ("--session", f"s{bidi}", "todo", "add", f"step {bidi}"),
              ("--session", f"s{bidi}", "todo", "show"), ("todo", "list"),
              ("tasks", "import", "tasks.csv", "--from", "csv", "--dry-run"),
              ("tasks", "import", "tasks.csv", "--from", "csv")]
    (project / "tasks.csv").write_text(f"description,tags\nimported {bidi},x{zwsp}\n",
                                       encoding="utf-8")
    for args in views:
        result = cli(*args)
        assert result.code == 0, (args, result)
        assert_inert(result.out, result.err)
    shown = cli("tasks", "list", "--all").out
    assert "title invoice\\u202egnp.exe" in shown and "foreign \\x1b]0;owned\\x07" in shown
    assert "item ad\\u200bmin" in cli("todo", "show").out
    # the data itself is kept exactly
    stored = orjson.loads(cli("tasks", "show", "--json", ids[0]).out)["description"]
    assert stored == f"title {INVISIBLE['bidi override']}"
