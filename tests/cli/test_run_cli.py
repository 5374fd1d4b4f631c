"""`aidp run` against scripted stand-in agents: small Python scripts that record every
prompt they get and then do what the test says (print signals, run aidp, edit files,
fail, hang)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from aidp import todos
from aidp.tasklist.log import TaskLog

DATA = Path(__file__).parent.parent / "agent" / "data"

PREAMBLE = """\
import json, os, subprocess, sys, time
from pathlib import Path
HERE = Path(__file__)
PROMPT = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read()
RECORD = HERE.with_name(HERE.stem + ".calls.jsonl")
with open(RECORD, "a", encoding="utf-8") as f:
    f.write(json.dumps({"prompt": PROMPT, "argv": sys.argv[1:], "cwd": os.getcwd(),
                        "AIDP_DIR": os.environ.get("AIDP_DIR"),
                        "AIDP_SESSION": os.environ.get("AIDP_SESSION")}) + "\\n")
CALL = sum(1 for _ in open(RECORD, encoding="utf-8"))
def aidp(*args):
    return subprocess.run(["aidp", *args], check=True, capture_output=True, text=True).stdout
"""


@dataclass
class Agent:
    path: Path

    @property
    def command(self) -> str:
        return f"{shlex.quote(sys.executable)} {shlex.quote(str(self.path))}"

    def calls(self) -> list[dict]:
        record = self.path.with_name(self.path.stem + ".calls.jsonl")
        if not record.exists():
            return []
        return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]

    def prompts(self) -> list[str]:
        return [c["prompt"] for c in self.calls()]


@pytest.fixture
def make_agent(tmp_path: Path):
    folder = tmp_path / "agents"
    folder.mkdir()
    count = iter(range(1000))

    def make(body: str = "") -> Agent:
        path = folder / f"agent{next(count)}.py"
        path.write_text(PREAMBLE + body, encoding="utf-8")
        return Agent(path)

    return make


def todo_add(cli, *items: str) -> None:
    for item in items:
        assert cli("todo", "add", item).code == 0


def first_lines(prompts: list[str]) -> list[str]:
    return [p.splitlines()[0] for p in prompts]


def tasks_json(cli) -> list[dict]:
    result = cli("tasks", "list", "--all", "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


# --- signals ------------------------------------------------------------------------


def test_file_task_signals_of_every_form(cli, make_agent, project: Path) -> None:
    agent = make_agent(
        "print('Working on it.')\n"
        "print('file task: \"Fix the parser\" priority: high tags: parser,,bugs and '"
        "      'FILE TASK: \"Write docs\" tags: docs')\n"
        "print('File task: \"Fix the parser\"')\n"  # the same description again: filed once
        "print('  File task: \"fix  the PARSER\"  ')\n"  # same once white space and case go
        "print('File task: \"\"')\n"
        "print('File task: \"' + 'x' * 201 + '\"')\n"
        "print('still running')\n"
    )
    result = cli("--session", "s1", "run", "go", "--agent", agent.command)
    assert result.code == 0, result
    found = {t["description"]: t for t in tasks_json(cli)}
    assert set(found) == {"Fix the parser", "Write docs"}
    parser, docs = found["Fix the parser"], found["Write docs"]
    assert (parser["priority"], parser["tags"]) == ("high", ["parser", "bugs"])
    assert (docs["priority"], docs["tags"]) == ("medium", ["docs"])
    for task in (parser, docs):
        assert task["session"] == "s1"
        assert task["discovered_during"] == "s1 iteration 1"
        shown = re.search(rf"📋 Filed task: {task['description']} \(([0-9a-f]{{4,}})\)",
                          result.out)  # its short id
        assert shown and task["id"].rpartition("_")[2].startswith(shown.group(1)), result.out
    assert result.out.count("📋 Filed task:") == 2
    assert "Ignored File task signal: Invalid description: it is empty" in result.err
    assert "Ignored File task signal: Invalid description: 201 characters" in result.err
    assert "still running" in result.out  # the run went on


def test_a_file_task_signal_carries_its_body_block(cli, make_agent, project: Path) -> None:
    agent = make_agent(
        "print('File task: \"Crash on an empty config\" priority: high')\n"
        "print('')\n"
        "print('```body')\n"
        "print('## Steps')\n"
        "print('1. run it with HOME=')\n"
        "print('```')\n"
        "print('File task: \"Without a body\"')\n"
        "print('Some prose: not a body.')\n"
        "print('File task: \"Last words\"')\n"
        "print('~~~body')\n"
        "print('never closed')\n"
    )
    result = cli("--session", "s1", "run", "go", "--agent", agent.command)
    assert result.code == 0, result
    found = {t["description"]: t["id"] for t in tasks_json(cli)}
    bodies = {d: json.loads(cli("tasks", "show", tid, "--json").out).get("body")
              for d, tid in found.items()}
    assert bodies == {"Crash on an empty config": "## Steps\n1. run it with HOME=",
                      "Without a body": None, "Last words": "never closed"}
    assert ("File task 'Last words': left out the closing fence of its body block (filed "
            "with the text up to the end of the reply)") in result.err


def test_a_task_already_open_is_not_filed_again_and_the_run_says_so(cli, make_agent,
                                                                       project: Path) -> None:
    """"The same" description: equal once runs of white space are one space, the ends
    trimmed, and case folded (backlog.filing.same_text). Only OPEN tasks count: a done one with
    that text is history, and the task is filed anew."""
    old = json.loads(cli("tasks", "add", "Fix the parser", "--json").out)
    gone = json.loads(cli("tasks", "add", "Ship it", "--json").out)
    assert cli("tasks", "done", gone["id"]).code == 0
    short = cli("tasks", "list").out.split("[", 1)[1].split("]", 1)[0]
    assert short in old["id"] and len(short) < len(old["id"])  # the id as people see it
    agent = make_agent(printing(
        'File task: "Fix the parser"',
        'File task: "fix  the   PARSER" priority: high',  # open before the run: said so
        'File task: "Ship it"',
        'File task: "ship IT"',
    ))
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    assert result.out.count(f"📋 Not filed again: open task {short} has the same "
                            "description: Fix the parser") == 2, result.out
    assert "'fix  the   PARSER' was filed earlier" not in result.out  # it was not
    shipped = [t for t in tasks_json(cli) if t["description"] == "Ship it"]
    assert sorted(t["status"] for t in shipped) == ["done", "pending"]
    assert result.out.count("📋 Filed task: Ship it (") == 1
    assert "📋 Not filed again: 'ship IT' was filed earlier in this run" in result.out
    assert len(tasks_json(cli)) == 3
    assert [t["priority"] for t in tasks_json(cli) if t["id"] == old["id"]] == ["medium"]
    # across runs: the next run finds the task this run filed
    again = cli("run", "go", "--agent", make_agent(printing('File task: "SHIP it"')).command)
    assert again.code == 0, again
    assert "Not filed again: open task" in again.out and len(tasks_json(cli)) == 3


def test_two_agents_filing_the_same_task_at_once_file_it_once(log: TaskLog) -> None:
    from aidp.backlog import queue

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(
            lambda n: queue.file(log, f"Same  task{' ' * n}", unless_open=True), range(8)))
    assert sum(o.filed for o in outcomes) == 1
    assert len({o.task["id"] for o in outcomes}) == 1
    assert [t["description"] for t in log.read().tasks.values()] == ["Same  task"]


def printing(*lines: str) -> str:
    """An agent body that prints these lines exactly."""
    return "".join(f"print({line!r})\n" for line in lines)


def test_inner_and_escaped_quotes_ansi_and_bad_priorities(cli, make_agent) -> None:
    agent = make_agent(printing(
        'File task: "Handle the "draft" flag\'s default" priority: high',
        'File task: \\"Escaped\\" tags: opencode',  # as opencode prints it
        '\x1b[1mFile task:\x1b[0m "Coloured" priority: low',
        'File task: "Urgent one" priority: urgent tags: a',
    ))
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    found = {t["description"]: t for t in tasks_json(cli)}
    assert set(found) == {'Handle the "draft" flag\'s default', "Escaped", "Coloured",
                          "Urgent one"}
    assert found['Handle the "draft" flag\'s default']["priority"] == "high"
    assert found["Escaped"]["tags"] == ["opencode"]
    assert found["Coloured"]["priority"] == "low"
    assert (found["Urgent one"]["priority"], found["Urgent one"]["tags"]) == ("medium", ["a"])
    assert ("Warning: File task 'Urgent one': left out priority 'urgent' (use high, medium or "
            "low); filed with priority medium and tags a") in result.err


def test_what_a_file_task_leaves_out_is_named_on_stderr(cli, make_agent) -> None:
    """Issue 14: a File task is filed with a warning saying what was ignored, never
    silently changed; one that cannot be read at all is named too."""
    agent = make_agent(printing(
        'File task: "Spaced tags" tags: ,,a b,',
        'File task: "Odd tag" tags: ok,b@d tag,',
        'File task: "No priority" priority:',
        'File task: "No quotes here',
        'still running',
    ))
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    found = {t["description"]: (t["priority"], t["tags"]) for t in tasks_json(cli)}
    assert found == {"Spaced tags": ("medium", ["a"]), "Odd tag": ("medium", ["ok", "b@d"]),
                     "No priority": ("medium", [])}
    after = "after the tags (tags are single words separated by commas, without spaces)"
    assert (f"Warning: File task 'Spaced tags': left out 'b' {after}; filed with priority "
            "medium and tags a") in result.err
    assert (f"Warning: File task 'Odd tag': left out 'tag' {after}; filed with priority "
            "medium and tags ok,b@d") in result.err
    assert ("Warning: File task 'No priority': left out an empty priority: (use high, medium "
            "or low); filed with priority medium and no tags") in result.err
    assert ("Warning: Ignored File task signal: no closing quote after 'No quotes here' (put "
            "the description in double quotes)") in result.err
    assert "still running" in result.out


def test_an_empty_reason_is_reported_not_silently_dropped(cli, make_agent) -> None:
    added = json.loads(cli("tasks", "add", "Old bug", "--json").out)
    todo_add(cli, "Deploy")
    agent = make_agent(printing(
        f'Update task: {added["id"]} status: abandoned reason: ""',
        'Todo pause: ""',
    ))
    result = cli("run", "go", "--agent", agent.command, "--max-continuations", "0")
    assert result.code == 0, result
    assert tasks_json(cli)[0]["status"] == "abandoned"
    assert f"Warning: Update task {added['id']}: left out reason (it is empty)" in result.err
    assert "Warning: Ignored Todo pause signal: Invalid reason" in result.err
    assert "Paused" not in cli("todo", "show").out


def test_update_task_on_known_and_unknown_ids(cli, make_agent) -> None:
    added = json.loads(cli("tasks", "add", "Old bug", "--json").out)
    other = json.loads(cli("tasks", "add", "Dead end", "--json").out)
    short = added["id"].rsplit("_", 1)[1][:6]
    agent = make_agent(
        f"print('Update task: {short} status: in_progress')\n"
        f"print('Update task: {added['id']} status: done')\n"
        f"print('Update task: {other['id']} status: abandoned reason: \"not needed\"')\n"
        "print('Update task: ffff0000 status: done')\n"
        f"print('Update task: {added['id']} status: done')\n"
        f"print('Update task: {other['id']} status: bogus')\n"
    )
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    found = {t["id"]: t for t in tasks_json(cli)}
    assert found[added["id"]]["status"] == "done"
    assert "started_at" in found[added["id"]]
    assert found[other["id"]]["status"] == "abandoned"
    assert found[other["id"]]["abandoned_reason"] == "not needed"
    # Named by the short id people see in `tasks list` (and can type back).
    shown = re.findall(r"📋 Updated task: Old bug \(([0-9a-f]+)\) → done", result.out)
    assert len(shown) == 1 and 4 <= len(shown[0]) < 8, result.out
    assert added["id"].rsplit("_", 1)[1].startswith(shown[0])
    assert f"[{shown[0]}]" in cli("tasks", "list", "--all").out
    assert "Ignored Update task signal: Task not found: ffff0000" in result.err
    assert "Ignored Update task signal: Invalid status 'bogus': use one of pending" in result.err
    assert f"📋 Task already done: Old bug ({shown[0]})" in result.out


def test_todo_pause_signal_ends_the_turn_and_the_next_prompt_lifts_it(cli, make_agent) -> None:
    todo_add(cli, "Deploy")
    agent = make_agent("print('I cannot go on. Todo pause: \"need the deploy key\"')\n")
    result = cli("run", "deploy it", "--agent", agent.command)
    assert result.code == 0, result
    assert len(agent.calls()) == 1  # a pause is not laziness: no continuation
    assert "⏸ Todo paused: need the deploy key" in result.out
    shown = cli("todo", "show").out
    assert "Paused: need the deploy key" in shown
    # Resuming a paused list does nothing and says why.
    resumed = cli("run", "--agent", agent.command)
    assert resumed.code == 0
    assert "Nothing to resume" in resumed.out and "paused" in resumed.out
    assert len(agent.calls()) == 1
    # A new prompt lifts the pause (and this lazy agent is pushed again).
    quiet = make_agent("print('ok')\n")
    again = cli("run", "try again", "--agent", quiet.command)
    assert again.code == 0
    assert len(quiet.calls()) == 4
    assert "Paused" not in cli("todo", "show").out


def test_a_pause_run_by_the_agent_itself_ends_the_turn(cli, make_agent) -> None:
    todo_add(cli, "Ship it")
    agent = make_agent("aidp('todo', 'pause', 'waiting for review')\n")
    result = cli("run", "ship", "--agent", agent.command)
    assert result.code == 0, result
    assert len(agent.calls()) == 1
    assert "paused: waiting for review" in result.out


# --- the prompt, the environment ----------------------------------------------------


def test_prompt_contents_environment_and_working_directory(cli, make_agent, project: Path) -> None:
    todo_add(cli, "Write the tests")
    task = json.loads(cli("tasks", "add", "Flaky CI", "-p", "high", "-t", "ci", "--json").out)
    agent = make_agent("print('ok')\n")
    (project / "sub").mkdir()
    os.chdir(project / "sub")
    result = cli("--session", "feature-x", "run", "Refactor the parser", "--agent", agent.command)
    assert result.code == 0, result
    call = agent.calls()[0]
    assert call["cwd"] == str(project)
    assert call["AIDP_DIR"] == str(project)
    assert call["AIDP_SESSION"] == "feature-x"
    prompt = call["prompt"]
    assert prompt.splitlines()[0] == "Refactor the parser"
    assert "No active TODOs" in prompt  # feature-x has its own (empty) list
    assert f"- {task['id']} [high] Flaky CI (today) #ci" in prompt
    for needle in ('File task: "DESCRIPTION"', "Update task: ID status:", 'Todo pause: "REASON"',
                   "aidp todo tick"):
        assert needle in prompt


def test_the_prompt_shows_the_todo_list_exactly_as_todo_show(cli, make_agent) -> None:
    todo_add(cli, "First", "Second")
    assert cli("todo", "add", "1.last", "Sub step").code == 0
    shown = cli("todo", "show").out.rstrip("\n")
    agent = make_agent("open('touched.txt', 'w').write(str(CALL))\n")
    assert cli("run", "go", "--agent", agent.command).code == 0
    assert f"## Your TODO list\n\n{shown}\n" in agent.prompts()[0]


def test_prompt_placeholder_passes_the_prompt_as_an_argument(cli, make_agent) -> None:
    agent = make_agent("print('argv prompt starts:', sys.argv[1].splitlines()[0])\n")
    result = cli("run", "Say hi", "--agent", agent.command + " --flag={prompt}")
    assert result.code == 0, result
    assert agent.calls()[0]["argv"][0].startswith("--flag=Say hi\n")
    assert "argv prompt starts: --flag=Say hi" in result.out


def test_the_prompt_can_come_from_stdin(cli, make_agent) -> None:
    agent = make_agent("print('ok')\n")
    assert cli("run", "-", "--agent", agent.command, stdin="From a file\nline 2\n").code == 0
    assert agent.prompts()[0].startswith("From a file\nline 2\n")


def test_agent_output_is_shown_as_inert_data(cli, make_agent) -> None:
    agent = make_agent(
        "print('\\x1b[2J\\x1b]0;owned\\x07 [bold red]markup[/] $(rm -rf ~) \\x00end')\n"
        "print('oops', file=sys.stderr)\n"
    )
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0
    assert "\x1b" not in result.out and "\x07" not in result.out and "\x00" not in result.out
    assert "\\x1b[2J\\x1b]0;owned\\x07 [bold red]markup[/] $(rm -rf ~) \\x00end" in result.out
    assert "oops" in result.err


def test_nothing_in_a_signal_is_run(cli, make_agent, project: Path) -> None:
    agent = make_agent("print('File task: \"$(touch pwned) `touch pwned2`; touch pwned3\"')\n")
    assert cli("run", "go", "--agent", agent.command).code == 0
    assert [t["description"] for t in tasks_json(cli)] == [
        "$(touch pwned) `touch pwned2`; touch pwned3"
    ]
    assert not any(project.glob("pwned*"))


# --- run --json ------------------------------------------------------------------------


def test_run_json_prints_one_summary_on_stdout_and_progress_on_stderr(cli, make_agent) -> None:
    old = json.loads(cli("tasks", "add", "Known bug", "--json").out)
    todo_add(cli, "Write the parser")
    agent = make_agent(printing(
        "Working on it.",
        'File task: "New bug" priority: high',
        'File task: "known BUG"',
        f"Update task: {old['id']} status: in_progress",
    ))
    result = cli("run", "go", "--agent", agent.command, "--max-continuations", "2", "--json")
    assert result.code == 0, result
    summary = json.loads(result.out)  # stdout is the object alone
    new = next(t for t in tasks_json(cli) if t["description"] == "New bug")
    assert summary == {
        "session": "default", "exit_code": 0, "exit_reason": "progress",
        "invocations": 1, "continuations": 0, "tasks_filed": [new["id"]],
        "tasks_not_filed": [old["id"]], "tasks_updated": [old["id"]],
    }
    assert "Working on it." in result.err and "📋 Filed task: New bug" in result.err
    # a lazy agent: pushed on twice, then the budget is spent
    lazy = cli("run", "go", "--agent", make_agent("print('Done, I think.')").command,
               "--max-continuations", "2", "--json")
    assert lazy.code == 0, lazy
    summary = json.loads(lazy.out)
    assert (summary["exit_reason"], summary["invocations"], summary["continuations"]) == (
        "continuations_used_up", 3, 2)
    assert summary["tasks_filed"] == summary["tasks_updated"] == []
    assert "↻ Continuation 2/2" in lazy.err and "Done, I think." in lazy.err


def test_run_json_on_failure_keeps_the_exit_code_and_still_reports(cli, make_agent) -> None:
    agent = make_agent("print('File task: \"Saved before failing\"')\nsys.exit(3)\n")
    result = cli("run", "go", "--agent", agent.command, "--json")
    assert result.code == 3, result
    summary = json.loads(result.out)
    assert (summary["exit_code"], summary["exit_reason"]) == (3, "agent_failed")
    assert len(summary["tasks_filed"]) == 1 and summary["continuations"] == 0
    assert "The agent exited with code 3" in result.err


def test_run_json_resume_with_nothing_to_resume(cli, make_agent) -> None:
    result = cli("run", "--agent", make_agent("").command, "--json")
    assert result.code == 0, result
    summary = json.loads(result.out)
    assert (summary["exit_reason"], summary["invocations"]) == ("nothing_to_resume", 0)
    assert "Nothing to resume" in result.err


def test_run_json_refuses_interactive(cli, make_agent, project: Path) -> None:
    before = sorted(p.name for p in project.rglob("*"))
    result = cli("run", "-i", "--json", "--agent", make_agent("").command)
    assert (result.code, result.out) == (2, "")
    assert result.err == "Error: Conflicting --json and --interactive: give one of them\n"
    assert sorted(p.name for p in project.rglob("*")) == before


# --- the lazy agent -----------------------------------------------------------------


def test_a_lazy_agent_gets_exactly_three_continuations(cli, make_agent) -> None:
    todo_add(cli, "Write the parser", "Write the tests")
    assert cli("todo", "start", "2").code == 0
    agent = make_agent("print('I think we are done here.')\n")
    result = cli("run", "Build it", "--agent", agent.command)
    assert result.code == 0, result
    prompts = agent.prompts()
    assert len(prompts) == 4
    assert prompts[0].startswith("Build it\n")
    assert first_lines(prompts[1:]) == ["You have an active task: Write the tests"] * 3
    assert "stays active" in result.out
    assert "No active TODOs" not in cli("todo", "show").out
    # The next prompt is a fresh budget: one more round.
    assert cli("run", "Please finish", "--agent", agent.command).code == 0
    prompts = agent.prompts()
    assert len(prompts) == 8
    assert prompts[4].startswith("Please finish\n")
    assert first_lines(prompts[5:]) == ["You have an active task: Write the tests"] * 3


def test_the_continuation_names_the_first_pending_item_if_none_is_started(cli, make_agent) -> None:
    todo_add(cli, "Done already", "Next up", "Later")
    assert cli("todo", "tick", "1").code == 0
    agent = make_agent("")
    assert cli("run", "go", "--agent", agent.command, "--max-continuations", "1").code == 0
    assert first_lines(agent.prompts()) == ["go", "You have an active task: Next up"]


@pytest.mark.parametrize(("limit", "calls"), [("0", 1), ("1", 2), ("5", 6)])
def test_max_continuations(cli, make_agent, limit: str, calls: int) -> None:
    todo_add(cli, "Item")
    agent = make_agent("")
    assert cli("run", "go", "--agent", agent.command, "--max-continuations", limit).code == 0
    assert len(agent.calls()) == calls


def test_no_continuation_without_open_items(cli, make_agent) -> None:
    agent = make_agent("print('nothing to do')\n")
    assert cli("run", "hello", "--agent", agent.command).code == 0
    assert len(agent.calls()) == 1


def test_progress_through_todo_tick_ends_the_turn(cli, make_agent) -> None:
    todo_add(cli, "One", "Two", "Three")
    agent = make_agent("aidp('todo', 'tick', str(CALL))\n")
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    assert len(agent.calls()) == 1  # progress, though items are still open
    assert "1/3 completed" in cli("todo", "show").out
    # Resuming continues, and again progress ends the turn.
    assert cli("run", "--agent", agent.command).code == 0
    prompts = agent.prompts()
    assert len(prompts) == 2
    assert prompts[1].splitlines()[0] == "You have an active task: Two"
    assert "2/3 completed" in cli("todo", "show").out


def test_progress_through_a_changed_work_tree_ends_the_turn(cli, make_agent, project: Path) -> None:
    git(project, "init", "-q")
    todo_add(cli, "Edit the code")
    agent = make_agent("Path('code.py').write_text('edit ' + str(CALL))\n")
    assert cli("run", "go", "--agent", agent.command).code == 0
    assert len(agent.calls()) == 1
    # The same content again is no change: a lazy round follows.
    lazy = make_agent("Path('code.py').write_text('edit 1')\n")
    assert cli("run", "again", "--agent", lazy.command, "--max-continuations", "2").code == 0
    assert len(lazy.calls()) == 3


def test_outside_git_files_written_are_not_watched(cli, make_agent, project: Path) -> None:
    todo_add(cli, "Edit the code")
    agent = make_agent("Path('notes.txt').write_text('call ' + str(CALL))\n")
    assert cli("run", "go", "--agent", agent.command, "--max-continuations", "1").code == 0
    assert len(agent.calls()) == 2


def test_a_tool_call_in_json_events_is_progress(cli, make_agent) -> None:
    todo_add(cli, "Investigate")
    event = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "src/a.py"}}]}}
    agent = make_agent(f"print({json.dumps(json.dumps(event))})\n")
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    assert len(agent.calls()) == 1
    assert "🔧 Read: src/a.py" in result.out


def test_filing_a_task_is_progress(cli, make_agent) -> None:
    todo_add(cli, "Item")
    agent = make_agent("print('File task: \"Found a bug\"')\n")
    assert cli("run", "go", "--agent", agent.command).code == 0
    assert len(agent.calls()) == 1


# --- user prompts, resume -----------------------------------------------------------


def test_a_completed_list_is_cleared_by_the_next_prompt(cli, make_agent) -> None:
    todo_add(cli, "A", "B")
    assert cli("todo", "tick", "1").code == 0
    assert cli("todo", "tick", "2").code == 0
    agent = make_agent("print('ok')\n")
    assert cli("run", "next thing", "--agent", agent.command).code == 0
    assert "## Your TODO list\n\nNo active TODOs" in agent.prompts()[0]
    assert cli("todo", "show").out.strip() == "No active TODOs"
    assert len(agent.calls()) == 1


def test_an_incomplete_list_is_kept_by_the_next_prompt(cli, make_agent) -> None:
    todo_add(cli, "A", "B")
    assert cli("todo", "tick", "1").code == 0
    agent = make_agent("aidp('todo', 'tick', '2')\n")
    assert cli("run", "next thing", "--agent", agent.command).code == 0
    assert "1/2 completed" in agent.prompts()[0]


def test_resume_starts_with_the_continuation_prompt(cli, make_agent) -> None:
    todo_add(cli, "Keep going")
    agent = make_agent("")
    result = cli("run", "--agent", agent.command)
    assert result.code == 0, result
    assert first_lines(agent.prompts()) == ["You have an active task: Keep going"] * 3
    assert "↻ Resuming (1/3): You have an active task: Keep going" in result.out


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        ([], "has no active TODOs"),
        ([("todo", "add", "x"), ("todo", "tick", "1")], "is completed"),
        ([("todo", "add", "x"), ("todo", "pause", "blocked on review")],
         "paused (blocked on review)"),
        ([("todo", "add", "x"), ("todo", "clear")], "has no active TODOs"),
    ],
)
def test_nothing_to_resume_says_why_and_exits_0(cli, make_agent, setup, why: str) -> None:
    for args in setup:
        assert cli(*args).code == 0
    agent = make_agent("")
    result = cli("run", "--agent", agent.command)
    assert result.code == 0, result
    assert "Nothing to resume" in result.out and why in result.out
    assert agent.calls() == []


# --- exit codes ---------------------------------------------------------------------


def test_the_agents_failure_is_the_exit_code(cli, make_agent) -> None:
    todo_add(cli, "Item")
    agent = make_agent("print('File task: \"Saved before failing\"')\nsys.exit(3)\n")
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 3, result
    assert "The agent exited with code 3" in result.err
    assert len(agent.calls()) == 1  # no continuation after a failure
    assert [t["description"] for t in tasks_json(cli)] == ["Saved before failing"]


def test_timeout_stops_the_agent_with_124(cli, make_agent) -> None:
    agent = make_agent("print('File task: \"Before the hang\"', flush=True)\ntime.sleep(300)\n")
    result = cli("run", "go", "--agent", agent.command, "--timeout", "2")
    assert result.code == 124, result
    assert "--timeout 2s" in result.err
    assert [t["description"] for t in tasks_json(cli)] == ["Before the hang"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "no-such-agent-xyz"], "Agent command not found: 'no-such-agent-xyz'"),
        (["--agent", "./missing.py"], "Agent command not found: './missing.py'"),
        (["--agent", "codex"], "Agent command not found: preset 'codex' runs 'codex'"),
        (["--agent", "python3 'unclosed"], "Invalid agent command in --agent"),
        (["--agent", ""], "Invalid agent in --agent: it is empty"),
        ([], "No agent configured"),
        (["--agent", "true", "--max-continuations", "-1"], "Invalid --max-continuations -1"),
        (["--agent", "true", "--timeout", "0"], "Invalid --timeout 0"),
    ],
)
def test_usage_errors_exit_2(cli, monkeypatch, tmp_path: Path, args: list[str],
                            message: str) -> None:
    # PATH is the suite's own (tests/conftest.py): no codex, whatever the machine has.
    result = cli("run", "go", *args)
    assert result.code == 2, result
    assert message in result.err
    assert "Traceback" not in result.err and result.err.count("\n") == 1


def test_empty_prompt_is_a_usage_error(cli) -> None:
    result = cli("run", "  ", "--agent", "true")
    assert result.code == 2 and "Invalid PROMPT" in result.err


def test_agent_from_env_and_from_config(cli, person, make_agent, project: Path, monkeypatch) -> None:
    from_config = make_agent("print('config agent')\n")
    (project / ".aidp").mkdir(exist_ok=True)
    (project / ".aidp" / "config.toml").write_text(
        f"agent = {json.dumps(from_config.command)}\n", encoding="utf-8")
    assert person("trust").code == 0  # a command line in config.toml runs only once trusted
    assert "config agent" in cli("run", "go").out
    from_env = make_agent("print('env agent')\n")
    monkeypatch.setenv("AIDP_AGENT", from_env.command)
    assert "env agent" in cli("run", "go").out
    from_option = make_agent("print('option agent')\n")
    assert "option agent" in cli("run", "go", "--agent", from_option.command).out


def test_broken_config_is_exit_2(cli, project: Path) -> None:
    (project / ".aidp").mkdir(exist_ok=True)
    (project / ".aidp" / "config.toml").write_text("agent = [unclosed\n", encoding="utf-8")
    result = cli("run", "go")
    assert result.code == 2 and "config.toml" in result.err


# --- structured agents --------------------------------------------------------------


def test_recorded_claude_stream_json(cli, make_agent) -> None:
    todo_add(cli, "Something the user added")
    recording = DATA / "claude-stream-json.jsonl"
    agent = make_agent(f"sys.stdout.write(open({str(recording)!r}, encoding='utf-8').read())\n")
    result = cli("--session", "cc", "run", "Fix the tokenizer", "--agent", agent.command)
    assert result.code == 0, result
    out = result.out
    assert "I'll start by planning the work." in out
    assert "🔧 TodoWrite: 3 items" in out
    assert '🔧 Bash: grep -n "def tokenize" src/parser.py' in out
    assert out.count("The tokenizer drops the last token.") == 1  # the result is not repeated
    assert '"type"' not in out  # events are read, not dumped
    # The session's TODO list follows the agent's own plan.
    shown = json.loads(cli("--session", "cc", "todo", "show", "--json").out)
    assert [(i["content"], i["status"]) for i in shown["items"]] == [
        ("Read the parser module", "completed"),
        ("Fix the off-by-one in tokenize()", "in_progress"),
        ("Add a regression test", "pending"),
    ]
    # The signal inside the assistant's text is applied once (not again from `result`).
    filed = [t for t in tasks_json(cli) if t["description"] == "Localize parser error messages"]
    assert len(filed) == 1
    assert filed[0]["priority"] == "low" and filed[0]["session"] == "cc"
    assert filed[0]["tags"] == ["i18n", "parser"]
    assert len(agent.calls()) == 1  # tool calls are progress


def test_recorded_codex_exec_json(cli, make_agent) -> None:
    task = json.loads(cli("tasks", "add", "Crash on empty input", "--json").out)
    recording = (DATA / "codex-exec-json.jsonl").read_text(encoding="utf-8")
    replay = recording.replace("TASKREF", task["id"])
    agent = make_agent(f"sys.stdout.write({replay!r})\n")
    result = cli("run", "Fix the crash", "--agent", agent.command + " exec --json {prompt}")
    assert result.code == 0, result
    assert "🔧 command: bash -lc 'pytest -q tests/test_io.py'" in result.out
    assert "🔧 file_change: update src/io.py" in result.out
    found = {t["description"]: t for t in tasks_json(cli)}
    assert found["Crash on empty input"]["status"] == "done"
    assert "Audit the other readers for null checks" in found
    shown = json.loads(cli("todo", "show", "--json").out)
    assert [(i["content"], i["status"]) for i in shown["items"]] == [
        ("Reproduce the crash", "completed"),
        ("Fix the null check", "completed"),
    ]


def test_an_agent_echoing_its_prompt_files_nothing(cli, make_agent) -> None:
    agent = make_agent("print(PROMPT)\n")
    result = cli("run", "Echo this", "--agent", agent.command)
    assert result.code == 0, result
    assert tasks_json(cli) == []
    assert "Warning" not in result.err


# --- start-up, transcript -----------------------------------------------------------


def test_the_pending_backlog_is_shown_at_start(cli, make_agent) -> None:
    for n in range(7):
        assert cli("tasks", "add", f"Backlog item {n}", "-p", "high" if n == 6 else "low").code == 0
    agent = make_agent("print('agent ran')\n")
    result = cli("run", "go", "--agent", agent.command)
    assert result.code == 0, result
    head = result.out.split("agent ran")[0]
    assert "📋 Pending tasks (7):" in head
    assert head.count("Backlog item") == 5
    assert "▲ Backlog item 6" in head  # highest priority first
    assert "… and 2 more (see all: aidp tasks list pending)" in head


def test_the_transcript_records_the_run(cli, make_agent, project: Path) -> None:
    agent = make_agent("print('File task: \"Recorded\"')\nprint('err line', file=sys.stderr)\n")
    assert cli("--session", "feat/../../x", "run", "go", "--agent", agent.command).code == 0
    runs = list((project / ".aidp" / "runs").iterdir())
    assert len(runs) == 1 and runs[0].name.startswith("feat_.._.._x-")
    records = [json.loads(line) for line in runs[0].read_text(encoding="utf-8").splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "prompt" and kinds[-1] == "exit"
    assert {"stdout", "stderr", "signal"} <= set(kinds)
    assert "runs/" in (project / ".aidp" / ".gitignore").read_text(encoding="utf-8")


# --- interactive --------------------------------------------------------------------


def test_interactive_prompts_and_slash_commands(cli, make_agent) -> None:
    assert cli("tasks", "add", "Existing task").code == 0
    agent = make_agent("print('agent saw:', PROMPT.splitlines()[0])\n")
    stdin = (
        '/todo add "Write tests"\n'
        "/todo show\n"
        "\n"
        "first prompt\n"
        "/tasks list pending\n"
        "/tasks add 'From the prompt loop' -p high\n"
        "second prompt\n"
        "/exit\n"
        "never sent\n"
    )
    result = cli("run", "-i", "--agent", agent.command, "--max-continuations", "0", stdin=stdin)
    assert result.code == 0, result
    assert first_lines(agent.prompts()) == ["first prompt", "second prompt"]
    assert "1. [PENDING] (MEDIUM) Write tests" in result.out
    assert "agent saw: first prompt" in result.out
    _before, after_first = result.out.split("agent saw: first prompt")
    assert "PENDING (1)" in after_first and "Existing task" in after_first  # /tasks list pending
    assert "Added ▲" in result.out and "From the prompt loop" in result.out
    assert "PENDING (2)" in cli("tasks", "list", "pending").out
    assert "[high] From the prompt loop" in agent.prompts()[1]


def test_interactive_ends_at_end_of_input_and_reports_bad_commands(cli, make_agent) -> None:
    agent = make_agent("print('hi')\n")
    result = cli("run", "--interactive", "--agent", agent.command,
                 stdin="/todo tick 9\n/todo 'unclosed\n/run x\nhello\n")
    assert result.code == 0, result
    assert "Invalid position '9'" in result.err
    assert "Cannot read /todo 'unclosed" in result.err
    assert "/run is not available" in result.err
    assert first_lines(agent.prompts()) == ["hello"]


def test_interactive_exit_code_is_the_last_turns(cli, make_agent) -> None:
    agent = make_agent("sys.exit(5 if 'fail' in PROMPT.splitlines()[0] else 0)\n")
    assert cli("run", "-i", "--agent", agent.command, stdin="fail now\n").code == 5
    assert cli("run", "-i", "--agent", agent.command, stdin="fail now\nfine\n").code == 0


# --- Ctrl-C -------------------------------------------------------------------------


@pytest.mark.parametrize(("sent", "as_json"), [(signal.SIGINT, False), (signal.SIGTERM, False),
                                              (signal.SIGINT, True)])
def test_ctrl_c_stops_the_agents_process_group_and_keeps_what_was_applied(
        make_agent, project: Path, tmp_path: Path, sent: signal.Signals, as_json: bool) -> None:
    pid_file = tmp_path / "grandchild.pid"
    agent = make_agent(
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r} + '.tmp', 'w').write(str(child.pid))\n"
        f"os.replace({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\n"
        "print('File task: \"Applied before Ctrl-C\"', flush=True)\n"
        "time.sleep(300)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "aidp", "run", "go", "--agent", agent.command,
         *(["--json"] if as_json else [])],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        end = time.monotonic() + 60
        log = TaskLog(project)
        while time.monotonic() < end and not (
                pid_file.exists() and log.path.exists() and log.read().tasks):
            time.sleep(0.05)
        assert pid_file.exists(), "the agent never started"
        proc.send_signal(sent)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    assert "Interrupted" in err and "Traceback" not in err
    grandchild = int(pid_file.read_text())
    end = time.monotonic() + 20
    while time.monotonic() < end and _alive(grandchild):
        time.sleep(0.02)
    assert not _alive(grandchild)
    saved = [t["description"] for t in TaskLog(project).read().tasks.values()]
    assert saved == ["Applied before Ctrl-C"]
    if as_json:  # the summary is still printed, alone on stdout
        summary = json.loads(out)
        assert (summary["exit_code"], summary["exit_reason"]) == (130, "interrupted")
        assert summary["invocations"] == 1  # the agent had started (review14 item 7)
        assert summary["tasks_filed"] == [t for t in TaskLog(project).read().tasks]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_run_is_listed_in_help_and_documents_its_options(cli) -> None:
    result = cli("run", "--help")
    assert result.code == 0
    for option in ("--agent", "--max-continuations", "--timeout", "--interactive", "--session"):
        assert option in result.out


def test_session_after_the_command(cli, make_agent) -> None:
    agent = make_agent("aidp('todo', 'add', 'from the agent')\n")
    assert cli("run", "go", "--session", "late", "--agent", agent.command).code == 0
    assert agent.calls()[0]["AIDP_SESSION"] == "late"
    assert "from the agent" in cli("--session", "late", "todo", "show").out
    assert todos.current(TaskLog(Path(agent.calls()[0]["AIDP_DIR"])).read(), "late").active


def without_mcp(argv: list[str]) -> list[str]:
    """The arguments with those that hand `aidp mcp` to the agent left out."""
    out: list[str] = []
    skip = False
    for n, arg in enumerate(argv):
        if skip:
            skip = False
        elif arg == "--mcp-config" or (arg == "-c" and argv[n + 1].startswith("mcp_servers.")):
            skip = True
        elif not arg.startswith(("mcp__aidp__", "--additional-mcp-config=", "--allow-tool=aidp")):
            out.append(arg)
    return out


@pytest.mark.parametrize(
    ("preset", "prompt_on_stdin"),
    [("claude", True), ("codex", True), ("gemini", False), ("aider", False),
     ("cursor", False), ("copilot", False), ("opencode", True)],
)
def test_presets_run_their_cli_with_the_prompt_where_it_expects_it(
        cli, tmp_path: Path, monkeypatch, preset: str, prompt_on_stdin: bool) -> None:
    from aidp.agent.presets import PRESETS

    program, *preset_args = shlex.split(PRESETS[preset])
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    record = tmp_path / "fake.json"
    fake = bin_dir / program
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        "stdin = sys.stdin.read()\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], 'stdin': stdin}}))\n"
        "print('fake agent done')\n",
        encoding="utf-8",
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = cli("run", "Do the work", "--agent", preset)
    assert result.code == 0, result
    assert "fake agent done" in result.out
    seen = json.loads(record.read_text(encoding="utf-8"))
    seen["argv"] = without_mcp(seen["argv"])  # what aidp mcp's handover adds: test_run_mcp.py
    if prompt_on_stdin:
        assert seen["argv"] == preset_args
        assert seen["stdin"].startswith("Do the work\n")
    else:
        # The prompt replaces {prompt}, alone or in `--prompt={prompt}`: one argument.
        where = next(n for n, arg in enumerate(preset_args) if "{prompt}" in arg)
        assert seen["argv"][:where] + seen["argv"][where + 1:] == (
            preset_args[:where] + preset_args[where + 1:])
        head = preset_args[where].removesuffix("{prompt}")
        assert seen["argv"][where].startswith(head + "Do the work\n")
        assert seen["stdin"] == ""
