"""`aidp tasks …` and `aidp init` through the command line: exit codes and output together."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from pathlib import Path

import orjson
import pytest

from aidp.core.model import format_ts, now_micros
from aidp.tasklist.log import encode


def add(cli, *args: str) -> str:
    result = cli("tasks", "add", *args, "-q")
    assert result.code == 0, result
    return result.out.strip()


def tasklist(project: Path) -> Path:
    return project / ".aidp" / "tasklist.jsonl"


# --- add ----------------------------------------------------------------------------


def test_add_stores_every_field(cli, project: Path) -> None:
    result = cli("--session", "s1", "tasks", "add", "Fix", "the", "login", "-p", "high",
                 "-t", "api", "-t", "auth", "--discovered-during", "s1 iteration 2", "--json")
    assert result.code == 0, result
    task = json.loads(result.out)
    assert task["description"] == "Fix the login"
    assert task["priority"] == "high" and task["status"] == "pending"
    assert task["tags"] == ["api", "auth"]
    assert task["session"] == "s1" and task["discovered_during"] == "s1 iteration 2"
    assert task["created_at"] == task["updated_at"] and task["created_at"].endswith("Z")
    stored = [orjson.loads(line) for line in tasklist(project).read_bytes().splitlines()]
    assert stored == [task]


def test_add_quiet_prints_only_the_id(cli) -> None:
    result = cli("tasks", "add", "Something", "-q")
    assert result.code == 0
    assert result.out.startswith("task_") and len(result.out.split()) == 1


def test_add_human_output_names_task(cli) -> None:
    result = cli("tasks", "add", "Write docs")
    assert result.code == 0
    tid = json.loads(cli("tasks", "list", "--json").out)[0]["id"]
    # The id's hex part: add appends without reading the history a shorter one needs.
    assert result.out == f"✓ Added ● [{tid.rpartition('_')[2]}] Write docs\n"
    assert cli("tasks", "show", tid.rpartition("_")[2], "--json").code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["   "], "Invalid description: it is empty"),
        (["x" * 201], "Invalid description: 201 characters; at most 200"),
        (["bad\x1b[31mred"], "Invalid description: it contains control characters"),
        (["line\nbreak"], "control characters"),
        (["ok", "-p", "urgent"], "Invalid priority 'urgent': use one of high, medium, low"),
        (["ok", "-t", "two words"], "Invalid tag 'two words'"),
        (["ok", "-t", ""], "Invalid tag ''"),
        # A tag that looks empty, or like another tag, on screen: invisible characters.
        (["ok", "-t", "\u202e"], "Invalid tag '\\u202e'"),
        (["ok", "-t", "api\u200b"], "Invalid tag 'api\\u200b'"),
        (["ok", "-t", "a\u3164b"], "invisible characters"),
    ],
)
def test_add_rejects_bad_input_and_leaves_file(cli, project: Path, args, message) -> None:
    add(cli, "existing")
    before = tasklist(project).read_bytes()
    result = cli("tasks", "add", *args)
    assert result.code == 2, result
    assert message in result.err
    assert result.err.count("\n") == 1 and result.err.startswith("Error: ")
    assert result.out == ""
    assert tasklist(project).read_bytes() == before


def test_description_is_stripped_and_200_chars_allowed(cli) -> None:
    result = cli("tasks", "add", "  " + "y" * 200 + "  ", "--json")
    assert result.code == 0
    assert json.loads(result.out)["description"] == "y" * 200


# --- list ---------------------------------------------------------------------------


@pytest.fixture
def populated(cli):
    ids = {
        "a": add(cli, "Alpha", "-p", "high", "-t", "api"),
        "b": add(cli, "Beta", "-p", "low", "-t", "docs"),
        "c": add(cli, "Gamma", "-t", "api", "-t", "docs"),
        "d": add(cli, "Delta"),
    }
    assert cli("tasks", "start", ids["b"]).code == 0
    assert cli("tasks", "done", ids["c"]).code == 0
    assert cli("tasks", "abandon", ids["d"], "not", "needed").code == 0
    return ids


def listed(cli, *args: str) -> list[str]:
    result = cli("tasks", "list", *args, "--json")
    assert result.code == 0, result
    return [t["description"] for t in json.loads(result.out)]


def test_list_defaults_to_open_newest_first(cli, populated) -> None:
    assert listed(cli) == ["Beta", "Alpha"]


def test_list_status_argument_option_and_all(cli, populated) -> None:
    assert listed(cli, "done") == ["Gamma"]
    assert listed(cli, "--status", "abandoned", "--status", "done") == ["Delta", "Gamma"]
    assert listed(cli, "--all") == ["Delta", "Gamma", "Beta", "Alpha"]
    assert listed(cli, "all") == ["Delta", "Gamma", "Beta", "Alpha"]
    assert listed(cli, "in-progress") == ["Beta"]


def test_list_filters(cli, populated) -> None:
    assert listed(cli, "--all", "-p", "high", "-p", "low") == ["Beta", "Alpha"]
    assert listed(cli, "--all", "-t", "docs") == ["Gamma", "Beta"]
    assert listed(cli, "--all", "--limit", "1") == ["Delta"]
    assert listed(cli, "--all", "--session", "nobody") == []
    assert listed(cli, "--all", "--since", "1d") == ["Delta", "Gamma", "Beta", "Alpha"]
    assert listed(cli, "--all", "--since", "2999-01-01") == []
    assert listed(cli, "--all", "--older-than", "1d") == []
    assert listed(cli, "--sort", "priority") == ["Alpha", "Beta"]
    assert listed(cli, "--all", "--sort", "updated")[0] == "Delta"


def test_since_and_older_than_use_created_at(cli, project: Path) -> None:
    now = now_micros()
    old = {"id": "task_1_aaaaaaaa", "description": "old", "status": "pending", "priority": "medium",
           "created_at": format_ts(now - 10 * 86400 * 10**6), "updated_at": format_ts(now), "tags": []}
    tasklist(project).parent.mkdir()
    tasklist(project).write_bytes(encode([old]))
    add(cli, "new")
    assert listed(cli, "--older-than", "7d") == ["old"]
    assert listed(cli, "--since", "7d") == ["new"]
    assert listed(cli, "--since", format_ts(now - 11 * 86400 * 10**6)) == ["new", "old"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--status", "finished"], "Invalid status 'finished': use one of pending, in_progress"),
        (["--priority", "top"], "Invalid priority 'top'"),
        (["--since", "last tuesday"], "Invalid --since 'last tuesday'"),
        (["--older-than", "7 days"], "Invalid --older-than '7 days': use a number with a unit"),
        (["--sort", "name"], "Invalid --sort 'name': use one of created, updated, priority"),
        (["--format", "xml"], "Invalid --format 'xml': use one of table, json, jsonl"),
        (["--limit", "-1"], "Invalid --limit -1"),
        (["--limit", "ten"], "Invalid value for '--limit' / '-n': 'ten' is not a valid int"),
    ],
)
def test_list_rejects_bad_options(cli, args, message) -> None:
    result = cli("tasks", "list", *args)
    assert result.code == 2, result
    assert message in result.err
    assert result.out == ""


def test_list_formats(cli, populated) -> None:
    jsonl = cli("tasks", "list", "--format", "jsonl")
    assert [json.loads(line)["description"] for line in jsonl.out.splitlines()] == ["Beta", "Alpha"]
    ids = cli("tasks", "list", "--format", "ids").out.split()
    assert ids == [populated["b"], populated["a"]]
    rows = list(csv.DictReader(io.StringIO(cli("tasks", "list", "--format", "csv").out)))
    assert [r["description"] for r in rows] == ["Beta", "Alpha"]
    assert rows[1]["tags"] == "api" and rows[1]["priority"] == "high"
    markdown = cli("tasks", "list", "--format", "markdown").out.splitlines()
    assert markdown[0].startswith("| id | status |") and len(markdown) == 4
    assert "Alpha" in markdown[3]


def test_list_table_groups_by_status(cli, populated) -> None:
    out = cli("tasks", "list", "--all").out
    headers = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert headers == ["PENDING (1)", "IN PROGRESS (1)", "DONE (1)", "ABANDONED (1)"]
    # The shortest unique hex prefix (4 characters unless two ids share them).
    assert re.search(rf"▲ \[{populated['a'].rpartition('_')[2][:4]}[0-9a-f]*\] Alpha \(today\) #api",
                     out), out
    assert "\x1b" not in out  # not a terminal: no colour


def test_list_empty_messages(cli) -> None:
    assert cli("tasks", "list").out == "No open tasks\n"
    assert cli("tasks", "list", "done").out == "No done tasks\n"
    assert cli("tasks", "list", "--json").out == "[]\n"


def test_exit_code_option(cli) -> None:
    assert cli("tasks", "list", "--exit-code").code == 2  # no .aidp/ yet: nothing checked
    assert cli("init").code == 0
    assert cli("tasks", "list", "--exit-code").code == 0
    add(cli, "open work")
    result = cli("tasks", "list", "--exit-code", "--format", "ids")
    assert result.code == 1 and result.out.startswith("task_")
    assert cli("tasks", "list", "done", "--exit-code").code == 0


def test_markup_and_escapes_are_shown_literally(cli, project: Path) -> None:
    add(cli, "[bold red]not markup[/] [link=http://x]y[/link]")
    evil = {"id": "task_2_bbbbbbbb", "description": "evil \x1b[2J\x1b]0;title\x07", "status": "pending",
            "priority": "high", "created_at": format_ts(1), "updated_at": format_ts(1),
            "tags": ["\x1b[31m"]}
    with open(tasklist(project), "ab") as handle:
        handle.write(encode([evil]))
    for args in (["tasks", "list"], ["tasks", "show", "bbbb"], ["tasks", "list", "--format", "markdown"]):
        result = cli(*args)
        assert result.code == 0
        assert "\x1b" not in result.out and "\x07" not in result.out
    out = cli("tasks", "list").out
    assert "[bold red]not markup[/] [link=http://x]y[/link]" in out
    assert "evil \\x1b[2J\\x1b]0;title\\x07" in out


# --- ids and transitions ------------------------------------------------------------


def test_transitions_set_timestamps(cli) -> None:
    tid = add(cli, "Work")
    started = json.loads(cli("tasks", "start", tid, "--json").out)
    assert started["status"] == "in_progress" and started["started_at"] == started["updated_at"]
    done = json.loads(cli("tasks", "done", tid[-8:-2], "--json").out)
    assert done["status"] == "done" and done["completed_at"] == done["updated_at"]
    assert done["started_at"] == started["started_at"]
    reopened = json.loads(cli("tasks", "reopen", tid, "--json").out)
    assert reopened["status"] == "pending" and "completed_at" not in reopened
    assert reopened["started_at"] == started["started_at"]
    abandoned = json.loads(cli("tasks", "abandon", tid, "duplicate of #12", "--json").out)
    assert abandoned["status"] == "abandoned"
    assert abandoned["abandoned_reason"] == "duplicate of #12"
    assert abandoned["abandoned_at"] == abandoned["updated_at"]
    stamps = [started["updated_at"], done["updated_at"], reopened["updated_at"], abandoned["updated_at"]]
    assert stamps == sorted(stamps) and len(set(stamps)) == 4


def test_done_several_ids_prints_an_array(cli) -> None:
    one, two = add(cli, "One"), add(cli, "Two")
    result = cli("tasks", "done", one, two, "--json")
    assert result.code == 0
    assert [t["status"] for t in json.loads(result.out)] == ["done", "done"]
    human = cli("tasks", "reopen", one, two)
    assert human.out.count("Reopened") == 2


def test_same_status_writes_nothing(cli, project: Path) -> None:
    tid = add(cli, "Work")
    cli("tasks", "done", tid)
    before = tasklist(project).read_bytes()
    result = cli("tasks", "done", tid)
    assert result.code == 0
    assert "Already done, nothing changed" in result.out
    assert tasklist(project).read_bytes() == before


def test_unknown_short_and_ambiguous_ids(cli, project: Path) -> None:
    records = [
        {"id": f"task_1_abcd{suffix}", "description": f"t{suffix}", "status": "pending",
         "priority": "medium", "created_at": format_ts(1), "updated_at": format_ts(1), "tags": []}
        for suffix in ("1111", "2222")
    ]
    tasklist(project).parent.mkdir()
    tasklist(project).write_bytes(encode(records))
    before = tasklist(project).read_bytes()
    missing = cli("tasks", "done", "ffff")
    assert missing.code == 1 and missing.err == "Error: Task not found: ffff\n"
    short = cli("tasks", "show", "abc")
    assert short.code == 1 and "Task not found: abc" in short.err
    ambiguous = cli("tasks", "done", "abcd")
    assert ambiguous.code == 1
    assert "Ambiguous task id 'abcd'" in ambiguous.err
    assert "task_1_abcd1111" in ambiguous.err and "task_1_abcd2222" in ambiguous.err
    assert cli("tasks", "done", "abcd1").code == 0
    # one bad id among several: nothing is written
    after_one = tasklist(project).read_bytes()
    assert after_one != before
    result = cli("tasks", "done", "abcd2", "9999")
    assert result.code == 1
    assert tasklist(project).read_bytes() == after_one


def test_abandon_reason_must_be_plain_text(cli, project: Path) -> None:
    tid = add(cli, "Work")
    before = tasklist(project).read_bytes()
    result = cli("tasks", "abandon", tid, "bad\x07reason")
    assert result.code == 2 and "Invalid reason" in result.err
    assert tasklist(project).read_bytes() == before


def test_show_prints_every_field(cli) -> None:
    tid = add(cli, "Look", "-t", "x")
    out = cli("tasks", "show", tid).out
    for key in ("id", "status", "priority", "created_at", "updated_at", "tags"):
        assert key in out
    assert out.splitlines()[0] == "Look"
    shown = json.loads(cli("tasks", "show", tid, "--json").out)
    assert shown["id"] == tid and shown["tags"] == ["x"]


# --- stats, history, repair, compact --------------------------------------------


def test_stats(cli, populated) -> None:
    result = cli("tasks", "stats", "--json")
    counts = json.loads(result.out)
    assert {k: counts[k] for k in ("total", "pending", "in_progress", "done", "abandoned")} == {
        "total": 4, "pending": 1, "in_progress": 1, "done": 1, "abandoned": 1,
    }
    human = cli("tasks", "stats").out
    assert human.startswith("4 tasks: 2 open, 1 done, 1 abandoned") and "in progress" in human


def test_history_lists_states_oldest_first(cli) -> None:
    tid = add(cli, "Track me")
    cli("tasks", "start", tid)
    cli("tasks", "done", tid)
    states = json.loads(cli("tasks", "history", tid, "--json").out)
    assert [s["status"] for s in states] == ["pending", "in_progress", "done"]
    out = cli("tasks", "history", tid).out
    assert "status: pending → in_progress" in out and "status: in_progress → done" in out


def test_damage_warns_once_and_repair_fixes(cli, project: Path) -> None:
    tid = add(cli, "Survivor")
    with open(tasklist(project), "ab") as handle:
        handle.write(b"<<<<<<< HEAD\n{broken\n")
    result = cli("tasks", "list")
    assert result.code == 0 and "Survivor" in result.out
    assert result.err.count("Warning") == 1
    assert "2 damaged lines" in result.err and "aidp tasks repair" in result.err
    # writes keep working on a damaged file
    assert cli("tasks", "done", tid).code == 0
    dry = cli("tasks", "repair", "--dry-run")
    assert dry.code == 0 and "Would remove 2 damaged line(s) (line 2, 3)" in dry.out
    fixed = cli("tasks", "repair")
    assert fixed.code == 0 and "Backup:" in fixed.out
    clean = cli("tasks", "list", "--all")
    assert clean.err == "" and "Survivor" in clean.out
    assert cli("tasks", "repair").out.startswith("Nothing to repair")


def test_compact(cli, project: Path) -> None:
    tid = add(cli, "Busy")
    cli("tasks", "start", tid)
    cli("tasks", "done", tid)
    other = add(cli, "Other")
    before = json.loads(cli("tasks", "list", "--all", "--json").out)
    report = json.loads(cli("tasks", "compact", "--json").out)
    # 4 task records and the task_fields records of start and done; kept: Busy as
    # filed (the latest setter of its description, priority and tags), its done with
    # that task_fields record, and Other; the start is dropped (docs/file-format.md
    # "Compaction": a later merge folds the same)
    assert report["lines"] == 6 and report["kept"] == 4 and report["rewritten"]
    assert Path(report["backup"]).is_file()
    assert json.loads(cli("tasks", "list", "--all", "--json").out) == before
    assert cli("tasks", "compact").out.startswith("Already compact")
    assert other in tasklist(project).read_text()


# --- where the data lives -----------------------------------------------------------


def test_reads_create_nothing(cli, project: Path) -> None:
    for args in (["tasks", "list"], ["tasks", "stats"], ["tasks", "list", "--json"]):
        assert cli(*args).code == 0
    assert not (project / ".aidp").exists()


def test_dir_option_and_nearest_aidp_ancestor(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("AIDP_DIR")
    other = tmp_path / "other"
    other.mkdir()
    assert cli("--dir", str(other), "tasks", "add", "elsewhere").code == 0
    assert (other / ".aidp" / "tasklist.jsonl").is_file()
    nested = other / "src" / "deep"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    assert listed(cli) == ["elsewhere"]


def test_git_top_is_the_root_without_aidp(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("AIDP_DIR")
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    monkeypatch.chdir(repo / "sub")
    assert cli("tasks", "add", "at the top").code == 0
    assert (repo / ".aidp" / "tasklist.jsonl").is_file()
    assert not (repo / "sub" / ".aidp").exists()


def test_init_is_idempotent_and_sets_union_merge(cli, project: Path) -> None:
    (project / ".gitattributes").write_text("*.png binary")  # no final newline
    assert cli("init").code == 0
    assert cli("init").code == 0
    attributes = (project / ".gitattributes").read_text()
    assert attributes == ("*.png binary\n.aidp/tasklist.jsonl merge=union\n"
                          ".aidp/tasklist.jsonl diff=aidp\n")
    assert tasklist(project).is_file() and tasklist(project).read_bytes() == b""
    assert (project / ".aidp" / ".gitignore").is_file()


def test_init_warns_when_tasklist_is_ignored(cli, project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".aidp/\n")
    result = cli("init")
    assert result.code == 0
    assert "Warning: .aidp/tasklist.jsonl is ignored by git" in result.err


def test_init_json_says_what_it_did(cli, project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitattributes").write_text(".aidp/tasklist.jsonl merge=union\n")
    first = cli("init", "--json")
    assert first.code == 0, first
    assert json.loads(first.out) == {
        "root": str(project), "tasklist": str(tasklist(project)), "created": True,
        "link": None,
        "gitattributes": {"path": str(project / ".gitattributes"),
                          "added": [".aidp/tasklist.jsonl diff=aidp"], "override": None},
        "git": {"repository": True, "diff_driver_set": True, "tasklist_ignored": False},
    }
    assert "diff driver" in first.err  # people's notes stay on stderr
    again = json.loads(cli("init", "--json").out)
    assert (again["created"], again["gitattributes"]["added"], again["git"]) == (
        False, [], {"repository": True, "diff_driver_set": False, "tasklist_ignored": False})


def test_init_json_outside_git_and_with_the_tasklist_ignored(cli, project: Path,
                                                             tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    out = json.loads(cli("--dir", str(plain), "init", "--json").out)
    assert out["git"] == {"repository": False, "diff_driver_set": False,
                          "tasklist_ignored": False}
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".aidp/\n")
    result = cli("init", "--json")
    assert result.code == 0 and json.loads(result.out)["git"]["tasklist_ignored"] is True
    assert "Warning: .aidp/tasklist.jsonl is ignored by git" in result.err


def test_unknown_command_is_usage_error(cli) -> None:
    result = cli("tasks", "frobnicate")
    assert result.code == 2 and result.err.startswith("Error: No such command 'frobnicate'")


def test_version(cli) -> None:
    from aidp import __version__

    result = cli("--version")
    assert result.code == 0 and result.out == f"aidp {__version__}\n"


@pytest.mark.parametrize("args", [[], ["tasks"], ["todo"]])
def test_no_command_prints_help_and_no_empty_error(cli, args) -> None:
    result = cli(*args)
    assert result.code == 2
    assert "Usage: aidp" in result.out + result.err
    assert "Error" not in result.err


@pytest.mark.parametrize(
    "args",
    [
        ["tasks", "done", "abcd"],
        ["tasks", "abandon", "task_1_abcdabcd", "why"],
        ["tasks", "repair"],
        ["tasks", "compact"],
        ["todo", "clear"],
        ["todo", "delete", "1"],
    ],
)
def test_failed_or_empty_writes_create_nothing(cli, project: Path, args) -> None:
    result = cli(*args)
    assert result.code in (0, 1, 2), result
    assert not (project / ".aidp").exists(), (result, list(project.rglob("*")))


def test_abandoning_an_abandoned_task_changes_nothing(cli, project: Path) -> None:
    tid = add(cli, "Drop me")
    assert cli("tasks", "abandon", tid, "first reason").code == 0
    before = tasklist(project).read_bytes()
    result = cli("tasks", "abandon", tid, "second reason")
    assert result.code == 0 and "Already abandoned, nothing changed" in result.out
    assert tasklist(project).read_bytes() == before


def test_json_and_a_different_format_conflict(cli) -> None:
    result = cli("tasks", "list", "--json", "--format", "csv")
    assert result.code == 2 and "Conflicting --json and --format 'csv'" in result.err
    assert cli("tasks", "list", "--json", "--format", "json").code == 0


def test_unreadable_timestamps_show_an_unknown_age(cli, project: Path) -> None:
    odd = {"id": "task_1_cccccccc", "description": "odd", "status": "pending",
           "priority": "low", "created_at": "yesterday-ish", "updated_at": "nope", "tags": []}
    tasklist(project).parent.mkdir()
    tasklist(project).write_bytes(encode([odd]))
    result = cli("tasks", "list")
    assert result.code == 0
    assert "odd (age unknown)" in result.out


def test_unknown_statuses_are_counted_and_listed_with_all(cli, project: Path) -> None:
    newer = {"id": "task_1_dddddddd", "description": "from a newer aidp", "status": "blocked",
             "priority": "low", "created_at": format_ts(1), "updated_at": format_ts(1), "tags": []}
    bare = {"id": "task_1_eeeeeeee", "description": "no status", "created_at": format_ts(2),
            "updated_at": format_ts(2)}
    tasklist(project).parent.mkdir()
    tasklist(project).write_bytes(encode([newer, bare]))
    add(cli, "normal")
    counts = json.loads(cli("tasks", "stats", "--json").out)
    assert counts["total"] == 3 and counts["pending"] == 1 and counts["other"] == 2
    assert sum(counts[k] for k in ("pending", "in_progress", "done", "abandoned", "other")) == 3
    assert listed(cli, "--all") == ["normal", "no status", "from a newer aidp"]
    assert listed(cli) == ["normal"]
    assert "OTHER (2)" in cli("tasks", "list", "all").out


def test_list_shows_the_shortest_unique_id_prefix_and_json_keeps_full_ids(cli, project) -> None:
    first = cli("tasks", "add", "First", "-q").out.strip()
    path = project / ".aidp" / "tasklist.jsonl"
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    hex_part = first.rpartition("_")[2]
    # A second task sharing the first six hex characters: both need seven to be told apart.
    twin = first[: -len(hex_part)] + hex_part[:6] + ("0" if hex_part[6] != "0" else "1") + "f"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({**record, "id": twin, "description": "Twin"}) + "\n")
    lone = cli("tasks", "add", "Lone", "-q").out.strip()
    out = cli("tasks", "list").out
    assert f"[{hex_part[:7]}] First" in out and f"[{twin.rpartition('_')[2][:7]}] Twin" in out
    lone_hex = lone.rpartition("_")[2]
    assert re.search(rf"\[{lone_hex[:4]}[0-9a-f]*\] Lone", out), out
    assert first not in out  # no 24-character ids for people
    # What is shown is what a command accepts.
    assert cli("tasks", "show", hex_part[:7], "--json").code == 0
    full = {t["id"] for t in json.loads(cli("tasks", "list", "--json").out)}
    assert full == {first, twin, lone}


def test_short_ids_agree_between_the_store_search_and_the_sorted_pass(project,
                                                                      monkeypatch) -> None:
    from aidp import store
    from aidp.app.project import StoreReader
    from aidp.backlog import tasks as core
    from aidp.store import loader
    from aidp.store import questions as store_questions
    from aidp.tasklist.fold import Fold
    from aidp.tasklist.log import TaskLog

    log = TaskLog(project, reader=StoreReader(background=False))
    ids = [core.add(log, f"Task {n}")["id"] for n in range(80)]
    monkeypatch.setattr(loader, "MIN_BYTES", 0)  # the store even for a file this small
    fold = log.read()
    assert isinstance(fold, store.StoreFold)
    few = core.short_ids(fold, ids[:10])  # the store's search
    plain = core.short_ids(Fold(tasks=dict(fold.tasks.items())), ids[:10])
    monkeypatch.setattr(store_questions, "SHARED_BULK", 0)
    many = core.short_ids(fold, ids)  # every id in the index's order
    assert few == plain == {tid: many[tid] for tid in ids[:10]}
    for tid, shown in many.items():
        assert len(shown) >= 4 and core.resolve_id(fold, shown) == tid


def test_input_that_ends_inside_a_command_is_an_error_not_an_interrupt(cli, project,
                                                                       monkeypatch) -> None:
    # Typer turns an EOFError into the Abort a Ctrl-C makes: it used to exit 130, silent.
    from aidp.backlog import tasks as core

    cli("tasks", "add", "Filed before", "-q")
    before = (project / ".aidp" / "tasklist.jsonl").read_bytes()

    def ends(*args: object, **kwargs: object) -> None:
        raise EOFError

    monkeypatch.setattr(core, "add", ends)
    result = cli("tasks", "add", "Never filed")
    assert result.code == 2, result
    assert "Error: Unexpected end of input: stdin ended while the command was reading it" \
        in result.err
    assert (project / ".aidp" / "tasklist.jsonl").read_bytes() == before

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(core, "add", interrupted)
    result = cli("tasks", "add", "Never filed")
    assert result.code == 130 and "Error" not in result.err, result
