"""Hostile input: text from people, agents and foreign tools is data, never code.

Escape sequences, markup, control characters, huge strings and path separators are
either rejected with a one-line error and a documented exit code, or stored as data
and shown inert; they never reach the terminal raw, never name a file, never run.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from aidp.core.model import format_ts, now_micros
from aidp.tasklist.log import LOG_NAME, TaskLog

ESC_SEQUENCES = [
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\",  # OSC 8 hyperlink
    "\x1b]0;pwned title\x07",  # set the window title
    "\x9b31mC1 CSI",
    "bell\x07",
    "carriage\rreturn",
    "back\x08\x08space",
    "nul\x00byte",
    "new\nline",
    "tab\there",
    "del\x7f",
]
MARKUP = [
    "[bold]loud[/bold]",
    "[link=https://evil.example]click[/link]",
    "[red",
    "[/]",
    "\\[escaped]",
]
SHELLISH = ["$(touch pwned)", "`touch pwned`", "; touch pwned", "| touch pwned", "../../etc/passwd"]

# Anything but newline (and tab in help text) among C0 controls, DEL and C1 controls.
_RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def assert_inert(*texts: str) -> None:
    for text in texts:
        found = _RAW_CONTROL.search(text)
        assert found is None, f"raw control character {found.group()!r} in output: {text!r}"


def assert_one_line_error(result, code: int) -> None:
    assert result.code == code, result
    assert result.out == "", result
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result
    assert "Traceback" not in result.err
    assert_inert(result.err)


def tasklist(project: Path) -> Path:
    return project / ".aidp" / "tasklist.jsonl"


def snapshot(project: Path) -> bytes | None:
    path = tasklist(project)
    return path.read_bytes() if path.exists() else None


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


# --- rejected input -------------------------------------------------------------------


@pytest.mark.parametrize("text", ESC_SEQUENCES)
def test_description_with_control_characters_is_rejected(cli, project: Path, text: str) -> None:
    cli("tasks", "add", "a first task")
    before = snapshot(project)
    result = cli("tasks", "add", text)  # tabs and newlines are control characters too
    assert_one_line_error(result, 2)
    assert "description" in result.err and "control characters" in result.err
    assert snapshot(project) == before


@pytest.mark.parametrize("text", ESC_SEQUENCES)
def test_tag_with_control_characters_is_rejected(cli, project: Path, text: str) -> None:
    result = cli("tasks", "add", "fine", "-t", text)
    assert_one_line_error(result, 2)
    assert "tag" in result.err.lower()
    assert snapshot(project) is None


@pytest.mark.parametrize("text", ESC_SEQUENCES)
def test_reason_with_control_characters_is_rejected(cli, project: Path, text: str) -> None:
    tid = cli("tasks", "add", "-q", "fine").out.strip()
    before = snapshot(project)
    result = cli("tasks", "abandon", tid, text)
    assert_one_line_error(result, 2)
    assert "reason" in result.err
    assert snapshot(project) == before


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["tasks", "add", "x" * 201], "description"),
        (["tasks", "add", "x" * 1_000_000], "description"),
        (["tasks", "add", "   "], "description"),
        (["tasks", "add", "ok", "-t", "t" * 65], "tag"),
        (["tasks", "add", "ok", "-t", "two words"], "tag"),
        (["tasks", "add", "ok", "-t", "a,b"], "tag"),
        (["tasks", "add", "ok", "-p", "urgent"], "priority"),
    ],
)
def test_oversized_or_malformed_values_are_rejected(cli, project: Path, args, what) -> None:
    result = cli(*args)
    assert_one_line_error(result, 2)
    assert what in result.err.lower()
    assert len(result.err) < 400  # the message quotes nothing huge
    assert snapshot(project) is None


def test_overlong_reason_is_rejected(cli, project: Path) -> None:
    tid = cli("tasks", "add", "-q", "fine").out.strip()
    before = snapshot(project)
    result = cli("tasks", "abandon", tid, "r" * 1001)
    assert_one_line_error(result, 2)
    assert snapshot(project) == before


# --- every bad argument: one line, a documented exit code, nothing changed -------------

BAD_USAGE = [
    ["tasks", "frobnicate"],
    ["--no-such-option", "tasks", "list"],
    ["tasks", "list", "--no-such-option"],
    ["tasks", "list", "bogus-status"],
    ["tasks", "list", "--status", "\x1b[31m"],
    ["tasks", "list", "--format", "xml"],
    ["tasks", "list", "--format", "\x1b]0;t\x07"],
    ["tasks", "list", "--limit", "-1"],
    ["tasks", "list", "--limit", "many"],
    ["tasks", "list", "--sort", "size"],
    ["tasks", "list", "--priority", "urgent"],
    ["tasks", "list", "--since", "the day before the flood"],
    ["tasks", "list", "--older-than", "5 fortnights"],
    ["tasks", "list", "--older-than", "\x1b[31m7d"],
    ["tasks", "done"],
    ["tasks", "show"],
    ["tasks", "add"],
    ["tasks", "\x1b]0;title\x07"],
    ["--\x1b[31m"],
    ["todo", "frobnicate"],
    ["todo", "add", "--session", "s", "-p", "urgent", "item"],
    ["todo", "add", "--session", "s"],
    ["todo", "tick", "--session", "s"],
    ["todo", "tick", "--session", "s", "0"],
    ["todo", "tick", "--session", "s", "1.2.3"],
    ["todo", "add", "--session", "s", "x" * 100_000],
    ["run", "--max-continuations", "-1", "go"],
    ["run", "--timeout", "0", "go"],
    ["run", "--timeout", "soon", "go"],
    ["run", ""],
]


@pytest.mark.parametrize("args", BAD_USAGE, ids=lambda a: repr(" ".join(a)))
def test_bad_usage_exits_2_with_one_line(cli, project: Path, args: list[str]) -> None:
    cli("tasks", "add", "keep me")
    before = snapshot(project)
    result = cli(*args)
    assert_one_line_error(result, 2)
    assert snapshot(project) == before


NOT_FOUND = [
    ["tasks", "show", "deadbeef"],
    ["tasks", "show", "abc"],  # shorter than the 4-character minimum
    ["tasks", "show", "\x1b[31mdead"],
    ["tasks", "show", "\x1b]8;;https://evil.example/\x1b\\x\x1b]8;;\x1b\\"],
    ["tasks", "done", "deadbeef"],
    ["tasks", "start", "../../etc/passwd"],
    ["tasks", "abandon", "$(touch pwned)", "why"],
    ["tasks", "reopen", "[bold]x[/bold]"],
    ["tasks", "history", "\x9b31m"],
]


@pytest.mark.parametrize("args", NOT_FOUND, ids=lambda a: repr(" ".join(a)))
def test_unknown_ids_exit_1_with_an_inert_one_line_error(cli, project: Path, args) -> None:
    cli("tasks", "add", "keep me")
    before = snapshot(project)
    result = cli(*args)
    assert_one_line_error(result, 1)
    assert "not found" in result.err.lower()
    assert snapshot(project) == before
    assert not (project / "pwned").exists()


def test_ambiguous_id_exits_1_and_changes_nothing(cli, project: Path, log: TaskLog) -> None:
    stamp = format_ts(now_micros())
    log.append([
        {"id": f"task_1_abcd{n:04d}", "description": f"t{n}", "status": "pending",
         "priority": "medium", "created_at": stamp, "updated_at": stamp, "tags": []}
        for n in range(2)
    ])
    before = snapshot(project)
    result = cli("tasks", "done", "abcd")
    assert_one_line_error(result, 1)
    assert "task_1_abcd0000" in result.err and "task_1_abcd0001" in result.err
    assert snapshot(project) == before


# --- bytes that are not UTF-8 ------------------------------------------------------------

BAD = b"bad \xff\xfe byte".decode("utf-8", "surrogateescape")  # as Python gets it from argv


@pytest.mark.parametrize("args", [
    ["tasks", "add", BAD],
    ["tasks", "add", "ok", "-t", BAD],
    ["tasks", "add", "ok", "--discovered-during", BAD],
    ["tasks", "abandon", "FIRST", BAD],
    ["tasks", "show", BAD],
    ["tasks", "list", "--session", BAD],
    ["--session", BAD, "tasks", "add", "ok"],
    ["todo", "add", "--session", "s", BAD],
    ["todo", "add", "--session", BAD, "ok"],
], ids=lambda a: " ".join(x if x != BAD else "<bad>" for x in a))
def test_arguments_that_are_not_utf8_exit_2(cli, project: Path, args: list[str]) -> None:
    first = cli("tasks", "add", "-q", "keep me").out.strip()
    before = snapshot(project)
    result = cli(*[first if a == "FIRST" else a for a in args])
    assert_one_line_error(result, 2)
    assert "not valid UTF-8" in result.err and "\\xff\\xfe" in result.err
    assert snapshot(project) == before


def test_aidp_session_that_is_not_utf8_exits_2(cli, project: Path, monkeypatch) -> None:
    cli("tasks", "add", "keep me")
    before = snapshot(project)
    monkeypatch.setenv("AIDP_SESSION", BAD)
    for args in (["tasks", "add", "x"], ["todo", "add", "x"], ["todo", "show"]):
        result = cli(*args)
        assert_one_line_error(result, 2)
        assert "AIDP_SESSION" in result.err
    assert snapshot(project) == before


# --- stored as data, shown inert ----------------------------------------------------


@pytest.mark.parametrize("text", MARKUP + SHELLISH)
def test_markup_and_shell_text_is_stored_and_shown_literally(cli, project: Path, text: str) -> None:
    added = cli("tasks", "add", "--json", text, "-t", text.replace(" ", "_"))
    assert added.code == 0, added
    task = orjson.loads(added.out)
    assert task["description"] == text
    assert cli("tasks", "show", "--json", task["id"]).out == added.out
    for args in (["tasks", "list"], ["tasks", "show", task["id"]],
                 ["tasks", "list", "--format", "markdown"]):
        shown = cli(*args)
        assert shown.code == 0 and text in shown.out.replace("\\|", "|"), shown
    assert not (project / "pwned").exists()
    assert not Path("/etc/passwd.aidp").exists()


def test_session_names_are_data_not_paths(cli, project: Path, tmp_path: Path) -> None:
    outside = files_under(tmp_path) - files_under(project)
    for session in ["../../etc/passwd", "/tmp/evil", "..", "a/b\\c", "[bold]s[/bold]"]:
        result = cli("--session", session, "tasks", "add", "--json", "from a hostile session")
        assert result.code == 0, result
        assert orjson.loads(result.out)["session"] == session
        listed = cli("tasks", "list", "--session", session, "--format", "ids")
        assert listed.out.strip() == orjson.loads(result.out)["id"]
    created = {p.relative_to(project) for p in files_under(project)}
    assert all(p.parts[0] == ".aidp" for p in created), created
    assert files_under(tmp_path) - files_under(project) == outside


def _hostile_record(tid: str, text: str) -> dict:
    stamp = format_ts(now_micros())
    return {
        "id": tid,
        "description": f"desc {text}",
        "status": "abandoned",
        "priority": "high",
        "created_at": stamp,
        "updated_at": stamp,
        "session": f"session {text}",
        "discovered_during": f"during {text}",
        "abandoned_at": stamp,
        "abandoned_reason": f"reason {text}",
        "tags": [f"tag{text}"],
        f"key {text}": f"value {text}",  # an unknown key from a foreign tool
        "nested": {"x": text},
    }


def hostile_file(log: TaskLog) -> list[str]:
    """A tasklist written by a foreign tool that stored escape sequences as data."""
    records = [_hostile_record(f"task_1_{n:08x}", text)
               for n, text in enumerate(ESC_SEQUENCES + MARKUP)]
    log.append(records)
    return [r["id"] for r in records]


HUMAN_READS = [
    ["tasks", "list", "--all"],
    ["tasks", "list", "--all", "--format", "markdown"],
    ["tasks", "list", "--all", "--sort", "priority"],
    ["tasks", "stats"],
]


def test_stored_escapes_are_displayed_inert(cli, log: TaskLog) -> None:
    ids = hostile_file(log)
    runs = [cli(*args) for args in HUMAN_READS]
    for tid in ids:
        runs.append(cli("tasks", "show", tid))
        runs.append(cli("tasks", "history", tid))
    runs.append(cli("tasks", "reopen", ids[0]))
    runs.append(cli("tasks", "start", ids[1]))
    runs.append(cli("tasks", "done", ids[2]))
    runs.append(cli("tasks", "history", ids[0]))
    for result in runs:
        assert result.code == 0, result
        assert_inert(result.out, result.err)
    # the data itself is kept exactly: JSON carries it escaped, never raw
    shown = cli("tasks", "show", "--json", ids[0])
    assert orjson.loads(shown.out)["description"] == "desc " + ESC_SEQUENCES[0]
    assert "\x1b" not in shown.out


def test_machine_formats_escape_stored_control_characters(cli, log: TaskLog) -> None:
    hostile_file(log)
    for fmt in ("json", "jsonl"):
        result = cli("tasks", "list", "--all", "--format", fmt)
        assert result.code == 0
        assert "\x1b" not in result.out and not re.search(r"[\x00-\x09\x0b-\x1f]", result.out)


def test_ill_typed_records_are_damage_not_a_crash(cli, project: Path, log: TaskLog) -> None:
    """A line that parses but breaks the record's types (a foreign tool, a hand edit)
    is skipped and counted like any damage; it never reaches code expecting text."""
    stamp = format_ts(now_micros())
    good = {"id": "task_1_00000001", "description": "fine", "status": "pending",
            "priority": "medium", "created_at": stamp, "updated_at": stamp, "tags": []}
    bad = [
        {**good, "id": "task_1_0000000a", "status": ["pending"]},
        {**good, "id": "task_1_0000000b", "description": 5},
        {**good, "id": "task_1_0000000c", "priority": {"high": 1}},
        {**good, "id": "task_1_0000000e", "tags": [1, None]},
        {**good, "id": "task_1_0000000f", "updated_at": 12},
        {**good, "id": "task_1_\x1b[31m"},
        {**good, "id": 7},
    ]
    log.append([good, *bad])
    for args in [*HUMAN_READS, ["tasks", "list", "--all", "--json"],
                 ["tasks", "show", "task_1_00000001"],
                 ["tasks", "list", "--all", "--format", "csv"],
                 ["tasks", "list", "--all", "--format", "ids"], ["tasks", "list", "-t", "one"]]:
        result = cli(*args)
        assert result.code == 0, result
        assert f"skipped {len(bad)} damaged lines" in result.err
        assert "aidp tasks repair" in result.err
        assert_inert(result.out, result.err)
    assert cli("tasks", "list", "--all", "--format", "ids").out == "task_1_00000001\n"
    assert cli("tasks", "show", "000a").code == 1
    repaired = cli("tasks", "repair")
    assert repaired.code == 0, repaired
    assert orjson.loads(tasklist(project).read_bytes()) == good


def test_a_string_tags_value_is_one_tag_never_written_back_damaged(cli, project: Path,
                                                                   log: TaskLog) -> None:
    """Issue 14 (it replaced the old rule that counted it as damage): a task line whose
    `tags` is the string "one,two" (a hand edit, a foreign tool) is a task with the one
    tag "one,two" (never #o #n #e); a record aidp writes for it carries a list."""
    stamp = format_ts(now_micros())
    task = {"id": "task_1_0000000d", "description": "hand edited", "status": "pending",
            "priority": "medium", "created_at": stamp, "updated_at": stamp, "tags": "one,two"}
    log.append([task])
    before = tasklist(project).read_bytes()
    for args in [*HUMAN_READS, ["tasks", "show", "0000000d"]]:
        result = cli(*args)
        assert result.code == 0, result
        assert "damaged" not in result.err
    listed = cli("tasks", "list", "--all")
    assert "#one,two" in listed.out and "#o " not in listed.out
    shown = orjson.loads(cli("tasks", "list", "--all", "--json").out)
    assert shown[0]["tags"] == ["one,two"]
    assert tasklist(project).read_bytes() == before  # reading changes nothing
    edited = cli("tasks", "edit", "0000000d", "--add-tag", "x")
    assert edited.code == 0, edited
    done = cli("tasks", "done", "0000000d")
    assert done.code == 0, done
    data = tasklist(project).read_bytes()
    assert data.startswith(before)  # the hand-edited line itself is kept as it was
    appended = [orjson.loads(line) for line in data[len(before):].splitlines()]
    written = [r for r in appended if "type" not in r]  # each after its task_fields record
    assert [r["tags"] for r in written] == [["one,two", "x"], ["one,two", "x"]]
    assert written[-1]["status"] == "done"
    assert orjson.loads(cli("tasks", "show", "--json", "0000000d").out)["tags"] == ["one,two", "x"]


def test_a_project_path_with_escapes_is_shown_inert(cli, tmp_path: Path) -> None:
    root = tmp_path / "proj\x1b[31m\x1b]0;t\x07"
    root.mkdir()
    runs = [cli("--dir", str(root), "init"), cli("--dir", str(root), "tasks", "add", "x")]
    with open(root / ".aidp" / "tasklist.jsonl", "ab") as handle:
        handle.write(b"garbage\n")
    runs += [cli("--dir", str(root), "tasks", "list"), cli("--dir", str(root), "tasks", "repair"),
             cli("--dir", str(root), "tasks", "compact"),
             cli("--dir", str(root), "tasks", "show", "nope")]
    for result in runs:
        assert_inert(result.out, result.err)
    assert [r.code for r in runs] == [0, 0, 0, 0, 0, 1]


# --- the TODO list ----------------------------------------------------------------------


@pytest.mark.parametrize("text", ESC_SEQUENCES)
def test_todo_content_with_control_characters_is_rejected(cli, project: Path, text: str) -> None:
    assert cli("todo", "add", "--session", "s", "keep me").code == 0
    before = snapshot(project)
    result = cli("todo", "add", "--session", "s", text)
    assert_one_line_error(result, 2)
    assert snapshot(project) == before


BAD_POSITIONS = ["0", "-1", "1.2.3", "abc", "1.", "\x1b[31m1", "../1", "9999999999999999999999"]


@pytest.mark.parametrize("position", BAD_POSITIONS)
@pytest.mark.parametrize("verb", ["tick", "delete", "start"])
def test_bad_todo_positions_exit_2_and_change_nothing(cli, project: Path, verb: str,
                                                      position: str) -> None:
    assert cli("todo", "add", "--session", "s", "keep me").code == 0
    before = snapshot(project)
    result = cli("todo", verb, "--session", "s", position)
    assert result.code in (1, 2), result  # 1 only for a well-formed position past the end
    assert_one_line_error(result, result.code)
    assert snapshot(project) == before


@pytest.mark.parametrize("session", ["../../etc/passwd", "/tmp/evil", "..", "a/b", "[bold]s"])
def test_todo_sessions_are_data_not_paths(cli, project: Path, tmp_path: Path,
                                          session: str) -> None:
    outside = files_under(tmp_path) - files_under(project)
    for text in MARKUP + SHELLISH:
        assert cli("todo", "add", "--session", session, text).code == 0
    shown = cli("todo", "show", "--session", session, "--json")
    assert shown.code == 0, shown
    data = orjson.loads(shown.out)
    assert data["session"] == session
    assert [item["content"] for item in data["items"]] == MARKUP + SHELLISH
    for args in (["todo", "show", "--session", session], ["todo", "list", "--session", session],
                 ["todo", "load", "--session", "other", session]):
        result = cli(*args)
        assert result.code == 0, result
        assert_inert(result.out, result.err)
    assert files_under(tmp_path) - files_under(project) == outside
    assert all(p.relative_to(project).parts[0] == ".aidp" for p in files_under(project))
    assert not (project / "pwned").exists()


def test_stored_todo_escapes_are_displayed_inert(cli, log: TaskLog) -> None:
    stamp = format_ts(now_micros())
    items = [{"id": f"i{n}", "content": text, "status": "pending", "priority": "high",
              "subtasks": [{"id": f"s{n}", "content": text, "status": "pending"}]}
             for n, text in enumerate(ESC_SEQUENCES)]
    log.append([{"type": "todo_list", "id": "todo_list:evil\x1b[31m", "session": "evil\x1b[31m",
                 "items": items, "active": True, "paused": True,
                 "pause_reason": "blocked \x1b]0;title\x07", "updated_at": stamp}])
    for args in (["todo", "show", "--session", "evil\x1b[31m"], ["todo", "list"],
                 ["todo", "load", "--session", "mine", "evil\x1b[31m"],
                 ["todo", "show", "--session", "mine"],
                 ["todo", "tick", "--session", "mine", "1.1"]):
        result = cli(*args)
        assert result.code == 0, result
        assert_inert(result.out, result.err)


# --- agent output in `aidp run` ---------------------------------------------------------

HOSTILE_AGENT = r'''
import sys
print("\x1b[2J\x1b]0;owned\x07\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\")
print('File task: "red \x1b[31malert\x1b[0m" priority: high')
print('File task: "$(touch pwned) [bold]x[/bold] ../../etc/passwd" tags: a,b')
print('File task: "tagged" tags: \x1b[31m,ok')
print('Update task: task_1_deadbeef status: done reason: "\x1b]0;t\x07"')
print('Todo pause: "blocked \x1b[5mblink\x1b[0m"')
print("\x9b31mC1 \x00nul", file=sys.stderr)
sys.stdout.flush()
sys.stdout.buffer.write(b'not utf-8 \xff\xfe\nFile task: "filed \xff\xfe bytes"\n')
sys.stdout.buffer.flush()
'''


def test_hostile_agent_output_is_inert_and_never_run(cli, project: Path, tmp_path: Path) -> None:
    import sys

    agent = tmp_path / "agent.py"
    agent.write_text(HOSTILE_AGENT)
    outside = files_under(tmp_path) - files_under(project)
    result = cli("--session", "../../etc/passwd", "run", "go",
                 "--agent", f"{sys.executable} {agent}")
    assert result.code == 0, result
    assert_inert(result.out, result.err)
    tasks = orjson.loads(cli("tasks", "list", "--all", "--json").out)
    descriptions = sorted(t["description"] for t in tasks)
    assert "$(touch pwned) [bold]x[/bold] ../../etc/passwd" in descriptions
    assert all("\x1b" not in d for d in descriptions)
    for task in tasks:
        assert task["session"] == "../../etc/passwd"
        assert all("\x1b" not in tag for tag in task["tags"])
    assert not (project / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert files_under(tmp_path) - files_under(project) == outside
    assert all(p.relative_to(project).parts[0] == ".aidp" for p in files_under(project))


# --- any command line at all ------------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from reliability_support import examples  # noqa: E402

COMMANDS = [
    ["tasks", "add"], ["tasks", "list"], ["tasks", "show"], ["tasks", "start"],
    ["tasks", "done"], ["tasks", "abandon"], ["tasks", "reopen"], ["tasks", "stats"],
    ["tasks", "history"], ["tasks", "repair"], ["tasks", "compact"],
    ["todo", "add"], ["todo", "delete"], ["todo", "tick"], ["todo", "start"], ["todo", "show"],
    ["todo", "clear"], ["todo", "pause"], ["todo", "list"], ["todo", "load"],
    ["tasks"], ["todo"], ["init"], ["trust"], [],
]
OPTIONS = ["--json", "-p", "--priority", "-t", "--tag", "--status", "-s", "--all", "--since",
           "--older-than", "--limit", "-n", "--sort", "--format", "-f", "--exit-code",
           "--session", "--dir", "--dry-run", "-q", "--discovered-during", "--help", "--version",
           "--bogus", "-", "--", "--revoke", "--show"]
VALUES = ["high", "low", "urgent", "pending", "done", "open", "all", "7d", "30m", "2w", "5y",
          "today", "2026-11-01", "2026-13-45", "0", "-1", "1", "2", "1.1", "1.2.3", "last",
          "1.last", "99999999999999999999", "", " ", "json", "csv", "ids", "markdown", "xml",
          "created", "priority", "task_", "abcd", "../../etc/passwd", "[bold]x[/bold]",
          "\x1b[31m", "\x1b]0;t\x07", "a\nb", "\x00", "x" * 300]
words = st.one_of(st.sampled_from(OPTIONS), st.sampled_from(VALUES),
                  st.text(st.characters(blacklist_categories=("Cs",)), max_size=12))


@settings(max_examples=examples(150, 1500), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=st.sampled_from(COMMANDS), rest=st.lists(words, max_size=6))
def test_any_command_line_ends_in_a_documented_way(cli, project: Path, command: list[str],
                                                  rest: list[str]) -> None:
    """Whatever the arguments: exit 0, 1 or 2, never a traceback; a failure is one
    `Error:` line on stderr; human output carries no raw control character."""
    if "--dir" in rest:
        return  # would point the command somewhere else than this test's project
    if not (project / ".aidp").exists():
        cli("tasks", "add", "a task to refer to")
        cli("todo", "add", "an item to refer to")
    args = [*command, *rest]
    result = cli(*args)
    assert result.code in (0, 1, 2), result
    assert "Traceback" not in result.err, result
    bare_group = command in (["tasks"], ["todo"], []) and not rest
    # `--exit-code`: exit 1 when anything matches, silently (docs/guide.md, `aidp tasks list`), not a failure
    matched = result.code == 1 and "--exit-code" in rest and not result.err
    if result.code and not bare_group and not matched:  # a bare group prints its help
        errors = [line for line in result.err.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1, result
        assert_inert(result.err)
    machine = {"--json", "csv", "ids", "jsonl", "json"} & set(args)
    if not machine:
        assert_inert(result.out, result.err)


# --- a repository that plants symbolic links in .aidp/ ----------------------------------
# git stores symlinks, so a cloned repository decides what .aidp/ entries point at. A
# tasklist linked to ~/.bashrc must never receive a line that a shell would then run.

SHELL_BAIT = '$(touch "$HOME/pwned")'


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    target = tmp_path / "home" / ".bashrc"
    target.parent.mkdir(exist_ok=True)
    target.write_text("# the user's shell start-up\n")
    return target


WRITES_THROUGH = [
    ["tasks", "add", SHELL_BAIT],
    ["tasks", "done", "FIRST"],
    ["tasks", "repair"],
    ["tasks", "compact"],
    ["todo", "add", "--session", "s", SHELL_BAIT],
]


@pytest.mark.parametrize("args", WRITES_THROUGH, ids=" ".join)
@pytest.mark.parametrize("link", ["tasklist.jsonl", "tasklist.jsonl.lock"])
def test_no_write_goes_through_a_planted_symlink(cli, project: Path, victim: Path,
                                                 args: list[str], link: str) -> None:
    first = cli("tasks", "add", "-q", "a task").out.strip()
    with open(project / ".aidp" / LOG_NAME, "ab") as handle:
        handle.write(b"{torn\n")  # so that repair and compact have work to do
    planted = project / ".aidp" / link
    planted.unlink()
    planted.symlink_to(victim)
    result = cli(*[first if a == "FIRST" else a for a in args])
    assert result.code == 1, result
    errors = [line for line in result.err.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result
    # (`done` reads through the link first, finds no such task there, and stops)
    assert "symbolic link" in errors[0] or "not found" in errors[0], result
    assert victim.read_text() == "# the user's shell start-up\n"
    assert planted.is_symlink()


def test_planted_gitignore_and_backups_links_write_nothing_outside(cli, project: Path,
                                                                   tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    aidp_dir = project / ".aidp"
    aidp_dir.mkdir()
    (aidp_dir / ".gitignore").symlink_to(outside / "planted-gitignore")  # dangling
    (aidp_dir / "backups").symlink_to(outside, target_is_directory=True)
    cli("tasks", "add", "a task")
    with open(aidp_dir / LOG_NAME, "ab") as handle:
        handle.write(b"{torn\n")
    cli("tasks", "repair")
    cli("tasks", "compact")
    assert list(outside.iterdir()) == []


def test_reading_through_a_symlink_shows_nothing_of_the_target(cli, project: Path,
                                                              victim: Path) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / LOG_NAME).symlink_to(victim)
    result = cli("tasks", "list", "--all")
    assert result.code == 0
    assert "shell start-up" not in result.out + result.err


@pytest.mark.parametrize("link", [".gitattributes", ".aidp/tasklist.jsonl"])
def test_init_writes_nothing_through_a_planted_symlink(cli, project: Path, tmp_path: Path,
                                                       victim: Path, link: str) -> None:
    (project / ".aidp").mkdir()
    dangling = tmp_path / "outside" / "created-by-aidp"
    dangling.parent.mkdir()
    (project / link).symlink_to(victim if link == ".gitattributes" else dangling)
    result = cli("init")
    assert result.code == 1 and "symbolic link" in result.err, result
    assert victim.read_text() == "# the user's shell start-up\n"
    assert not dangling.exists()
