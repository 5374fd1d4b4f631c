"""`aidp hook AGENT EVENT`: each agent's hook JSON in, that agent's answer out."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from aidp.agent.hook import handler

TODO_TYPES = {"todo_list", "todo_head", "todo_item"}  # the TODO list's own records


def hook(cli, agent: str, event: str, payload: object, *args: str):
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return cli("hook", agent, event, *args, stdin=stdin)


def answer(result) -> dict | None:
    assert result.code == 0, result
    return json.loads(result.out) if result.out.strip() else None


def shown(cli, session: str) -> dict:
    result = cli("--session", session, "todo", "show", "--json")
    assert result.code == 0, result
    return json.loads(result.out)


def contents(cli, session: str) -> list[tuple[str, str]]:
    return [(i["content"], i["status"]) for i in shown(cli, session)["items"]]


def todo_write(session: str, *todos: tuple[str, str]) -> dict:
    return {"session_id": session, "hook_event_name": "PostToolUse", "tool_name": "TodoWrite",
            "tool_input": {"todos": [{"content": c, "status": s, "activeForm": c}
                                     for c, s in todos]},
            "tool_response": {}}


def stop(session: str, *, active: bool = False, message: str = "Done.") -> dict:
    return {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active,
            "last_assistant_message": message}


def records(project: Path) -> list[dict]:
    path = project / ".aidp" / "tasklist.jsonl"
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


# --- session start ------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_session_start_gives_the_prime_text_as_context(cli, agent: str) -> None:
    assert cli("tasks", "add", "Fix the login bug", "-p", "high").code == 0
    payload = {"session_id": "sess-1", "hook_event_name": "SessionStart", "source": "startup"}
    out = answer(hook(cli, agent, "SessionStart", payload))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert context.startswith("# aidp: your TODO list and the project backlog")
    assert "Session: sess-1." in context and "Fix the login bug" in context
    assert "aidp --session sess-1 todo tick N" in context
    assert len(context) < 6000


def test_claude_session_start_exports_the_session_for_the_agents_shell(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / "claude-env.sh"
    monkeypatch.setenv("CLAUDE_ENV_FILE", str(env_file))
    answer(hook(cli, "claude", "SessionStart", {"session_id": "it's", "source": "compact"}))
    assert env_file.read_text() == "export AIDP_SESSION='it'\"'\"'s'\n"


def test_aidp_session_overrides_the_agents_session(
    cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIDP_SESSION", "mine")
    answer(hook(cli, "claude", "PostToolUse", todo_write("theirs", ("Step", "pending"))))
    assert contents(cli, "mine") == [("Step", "pending")]
    assert shown(cli, "theirs")["items"] == []
    context = answer(hook(cli, "claude", "SessionStart", {"session_id": "theirs"}))
    text = context["hookSpecificOutput"]["additionalContext"]
    assert "Session: mine." in text and "--session" not in text


# --- plans --------------------------------------------------------------------------


def test_todowrite_mirrors_the_plan_and_bad_entries_skip_only_themselves(cli) -> None:
    payload = todo_write("s", ("Write tests", "in_progress"), ("Docs", "pending"))
    payload["tool_input"]["todos"] += [{"content": "x" * 300, "status": "pending"}, "junk",
                                       {"status": "pending"},
                                       {"content": "bad\x00char", "status": "pending"}]
    result = hook(cli, "claude", "PostToolUse", payload)
    assert result.code == 0 and result.out == ""
    assert result.err.splitlines() == [
        "aidp: left out plan entry 3: Invalid description: 300 characters; at most 200 are "
        "accepted",
        "aidp: left out plan entry 4 is not an object",
        "aidp: left out plan entry 5 has no text",
        "aidp: left out plan entry 6: Invalid description: it contains control characters "
        "(newlines, escapes, …); plain text only",
    ]
    assert contents(cli, "s") == [("Write tests", "in_progress"), ("Docs", "pending")]
    answer(hook(cli, "claude", "PostToolUse",
                todo_write("s", ("Write tests", "completed"), ("Docs", "in_progress"))))
    assert contents(cli, "s") == [("Write tests", "completed"), ("Docs", "in_progress")]
    # An unusable plan changes nothing; an empty plan clears the list.
    result = hook(cli, "claude", "PostToolUse", {**todo_write("s"),
                                                 "tool_input": {"todos": ["junk"]}})
    assert "no entry was usable" in result.err
    assert len(contents(cli, "s")) == 2
    answer(hook(cli, "claude", "PostToolUse", todo_write("s")))
    assert shown(cli, "s")["active"] is False


def test_claude_tasks_api_is_mirrored_through_the_id_map(cli, project: Path) -> None:
    def call(tool: str, tool_input: dict, response: dict) -> None:
        answer(hook(cli, "claude", "PostToolUse", {
            "session_id": "s", "tool_name": tool, "tool_input": tool_input,
            "tool_response": response}))

    call("TaskCreate", {"subject": "Parse input", "description": "d", "activeForm": "Parsing"},
         {"task": {"id": "1", "subject": "Parse input"}})
    call("TaskCreate", {"subject": "Write output", "description": "d"},
         {"task": {"id": "2", "subject": "Write output"}})
    call("TaskUpdate", {"taskId": "1", "status": "in_progress"},
         {"success": True, "taskId": "1", "updatedFields": ["status"],
          "statusChange": {"from": "pending", "to": "in_progress"}})
    assert contents(cli, "s") == [("Parse input", "in_progress"), ("Write output", "pending")]
    call("TaskUpdate", {"taskId": "1", "status": "completed"}, {"success": True})
    call("TaskUpdate", {"taskId": "2", "status": "deleted"}, {"success": True})
    assert contents(cli, "s") == [("Parse input", "completed")]
    # The map is local state, never a record in the tasklist.
    types = {r.get("type") for r in records(project)}
    assert types == {"todo_head", "todo_item"}  # the TODO list's own records only
    state = list((project / ".aidp" / "hooks").glob("claude-s-*.json"))
    assert len(state) == 1 and json.loads(state[0].read_text())["claude_tasks"]["tasks"]
    assert (project / ".aidp" / "hooks" / ".gitignore").read_text().endswith("*\n")


def test_parallel_task_creates_lose_nothing(project: Path) -> None:
    """Claude runs the PostToolUse hooks of one message's tool calls in parallel."""
    def create(n: int) -> int:
        payload = {"session_id": "p", "tool_name": "TaskCreate",
                   "tool_input": {"subject": f"Task {n}"},
                   "tool_response": {"task": {"id": str(n)}}}
        proc = subprocess.run([sys.executable, "-m", "aidp", "hook", "claude", "PostToolUse"],
                              input=json.dumps(payload), capture_output=True, text=True,
                              timeout=60, check=False)
        return proc.returncode

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(create, range(1, 7))) == [0] * 6
    from aidp import todos
    from aidp.tasklist.log import TaskLog

    todo = todos.current(TaskLog(project).read(), "p")
    assert [i["content"] for i in todo.visible] == [f"Task {n}" for n in range(1, 7)]


def test_gemini_write_todos(cli) -> None:
    payload = {"session_id": "g", "hook_event_name": "AfterTool", "tool_name": "write_todos",
               "tool_input": {"todos": [{"description": "Plan", "status": "completed"},
                                        {"description": "Build", "status": "in_progress"},
                                        {"description": "Dropped", "status": "cancelled"},
                                        {"description": "Ship", "status": "pending"}]}}
    assert answer(hook(cli, "gemini", "AfterTool", payload)) is None
    assert contents(cli, "g") == [("Plan", "completed"), ("Build", "in_progress"),
                                  ("Ship", "pending")]


def test_other_tools_and_missing_fields_are_no_ops(cli, project: Path) -> None:
    for payload in ({"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "ls"}},
                    {"session_id": "s", "tool_name": "TodoWrite"},
                    {"session_id": "s", "tool_name": "TodoWrite", "tool_input": {"todos": 3}},
                    {"session_id": "s", "tool_name": "TaskUpdate",
                     "tool_input": {"taskId": "9", "status": "completed"}}):
        result = hook(cli, "claude", "PostToolUse", payload)
        assert result.code == 0 and result.out == "", result
    assert shown(cli, "s")["items"] == []
    assert all(r.get("type") not in TODO_TYPES for r in records(project))


# --- stop ---------------------------------------------------------------------------


def test_claude_stop_is_refused_at_most_three_times_in_a_row(cli) -> None:
    answer(hook(cli, "claude", "PostToolUse",
                todo_write("s", ("Write tests", "completed"), ("Fix bug", "pending"))))
    first = answer(hook(cli, "claude", "Stop", stop("s")))
    assert first["decision"] == "block"
    reason = first["reason"]
    assert reason.startswith("You have an active task: Fix bug\n")
    assert "reminder 1 of 3" in reason and "2. [PENDING] (MEDIUM) Fix bug" in reason
    assert "`aidp --session s todo pause \"REASON\"`" in reason
    assert "reminder 2 of 3" in answer(hook(cli, "claude", "Stop", stop("s", active=True)))[
        "reason"]
    assert "reminder 3 of 3" in answer(hook(cli, "claude", "Stop", stop("s", active=True)))[
        "reason"]
    used = hook(cli, "claude", "Stop", stop("s", active=True))
    assert used.code == 0 and used.out == ""
    assert "3 reminders in a row used up" in used.err
    # The next user prompt resets the count.
    assert answer(hook(cli, "claude", "UserPromptSubmit",
                       {"session_id": "s", "prompt": "go on"})) is None
    assert answer(hook(cli, "claude", "Stop", stop("s")))["decision"] == "block"


def test_claude_stop_that_follows_no_block_starts_a_new_count(cli) -> None:
    answer(hook(cli, "claude", "PostToolUse", todo_write("s", ("A", "pending"))))
    for _ in range(3):
        answer(hook(cli, "claude", "Stop", stop("s", active=True)))
    assert hook(cli, "claude", "Stop", stop("s", active=True)).out == ""
    # stop_hook_active false: this stop does not follow one of our blocks.
    assert answer(hook(cli, "claude", "Stop", stop("s", active=False)))["decision"] == "block"


def test_gemini_counts_itself_and_its_own_prompt_does_not_reset(cli) -> None:
    payload = {"session_id": "g", "tool_name": "write_todos",
               "tool_input": {"todos": [{"description": "Build", "status": "pending"}]}}
    answer(hook(cli, "gemini", "AfterTool", payload))
    after = {"session_id": "g", "prompt": "p", "prompt_response": "ok",
             "stop_hook_active": False}
    reasons = []
    for _ in range(3):
        out = answer(hook(cli, "gemini", "AfterAgent", after))
        assert out["decision"] == "deny"
        reasons.append(out["reason"])
        # Gemini may fire BeforeAgent for the retry: our own prompt is not a user prompt.
        answer(hook(cli, "gemini", "BeforeAgent", {"session_id": "g", "prompt": out["reason"]}))
    assert reasons[0].startswith("You have an active task: Build")
    assert hook(cli, "gemini", "AfterAgent", after).out == ""
    answer(hook(cli, "gemini", "BeforeAgent", {"session_id": "g", "prompt": "next"}))
    assert answer(hook(cli, "gemini", "AfterAgent", after))["decision"] == "deny"


def test_no_block_without_open_items_or_when_paused(cli) -> None:
    assert hook(cli, "claude", "Stop", stop("empty")).out == ""
    answer(hook(cli, "claude", "PostToolUse", todo_write("done", ("A", "completed"))))
    assert hook(cli, "claude", "Stop", stop("done")).out == ""
    answer(hook(cli, "claude", "PostToolUse", todo_write("p", ("A", "pending"))))
    assert cli("--session", "p", "todo", "pause", "Need the API key").code == 0
    assert hook(cli, "claude", "Stop", stop("p")).out == ""
    # A user prompt lifts the pause (as in aidp run); a finished list is cleared.
    answer(hook(cli, "claude", "UserPromptSubmit", {"session_id": "p", "prompt": "key set"}))
    assert shown(cli, "p")["paused"] is False
    assert answer(hook(cli, "claude", "Stop", stop("p")))["decision"] == "block"
    answer(hook(cli, "claude", "UserPromptSubmit", {"session_id": "done", "prompt": "new"}))
    assert shown(cli, "done")["active"] is False


def test_max_continuations_option(cli) -> None:
    answer(hook(cli, "claude", "PostToolUse", todo_write("s", ("A", "pending"))))
    assert hook(cli, "claude", "Stop", stop("s"), "--max-continuations", "0").out == ""
    out = answer(hook(cli, "claude", "Stop", stop("s"), "--max-continuations", "1"))
    assert "reminder 1 of 1" in out["reason"]
    assert hook(cli, "claude", "Stop", stop("s", active=True), "--max-continuations",
                "1").out == ""
    bad = hook(cli, "claude", "Stop", stop("s"), "--max-continuations", "-1")
    assert bad.code == 2 and "--max-continuations" in bad.err


def test_signals_in_the_final_reply_are_applied(cli) -> None:
    answer(hook(cli, "claude", "PostToolUse", todo_write("s", ("A", "pending"))))
    message = ('I am stuck.\nFile task: "Flaky test in CI" priority: high tags: ci\n'
               'Todo pause: "Need the database password"')
    result = hook(cli, "claude", "Stop", stop("s", message=message))
    assert result.code == 0 and result.out == ""  # paused: the stop is allowed
    assert "filed task" in result.err
    assert shown(cli, "s")["paused"] is True
    listed = json.loads(cli("tasks", "list", "--json").out)
    assert [(t["description"], t["priority"], t["tags"]) for t in listed] == [
        ("Flaky test in CI", "high", ["ci"])]
    # The same reply again files nothing new; placeholders from the prime text are ignored.
    hook(cli, "claude", "Stop", stop("s", message=message + '\nFile task: "DESCRIPTION"'))
    assert len(json.loads(cli("tasks", "list", "--json").out)) == 1
    gemini = {"session_id": "g", "prompt_response": "Update task: zzzz status: done"}
    result = hook(cli, "gemini", "AfterAgent", gemini)
    assert result.code == 0 and "ignored a signal: Task not found: zzzz" in result.err


def test_a_file_task_in_the_final_reply_carries_its_body(cli) -> None:
    message = ('Found one.\nFile task: "Flaky test in CI" priority: high\n```body\n'
               'Fails 1 run in 10 on `test_lock`.\n\n## Done when\n- 100 green runs\n```\n'
               'Bye.')
    assert hook(cli, "claude", "Stop", stop("s", message=message)).code == 0
    (task,) = json.loads(cli("tasks", "list", "--json").out)
    assert json.loads(cli("tasks", "show", task["id"], "--json").out)["body"] == (
        "Fails 1 run in 10 on `test_lock`.\n\n## Done when\n- 100 green runs")


def test_a_hook_files_no_duplicate_of_an_open_task_and_names_the_ignored_parts(cli) -> None:
    """The rules of `aidp run` (docs/agents.md, Signals): the same description as an
    open task files nothing (another session's hook, or a person, filed it); a bad
    priority is left out with a note."""
    assert cli("tasks", "add", "Flaky test in CI").code == 0
    message = ('File task: "flaky  TEST in ci" priority: high\n'
               'File task: "Slow build" priority: urgent tags: ci b\n'
               'File task: "Never closed')
    result = hook(cli, "claude", "Stop", stop("other", message=message))
    assert result.code == 0, result
    assert "aidp: not filed again: open task " in result.err
    assert "has the same description: Flaky test in CI" in result.err
    assert ("aidp: left out priority 'urgent' (use high, medium or low); filed with "
            "priority medium and tags ci") in result.err
    assert "aidp: left out 'b' after the tags" in result.err
    assert ("aidp: ignored the File task signal: no closing quote after 'Never closed'"
            in result.err)
    listed = {t["description"]: t["priority"]
              for t in json.loads(cli("tasks", "list", "--json").out)}
    assert listed == {"Flaky test in CI": "medium", "Slow build": "medium"}


# --- a hook never breaks the agent ------------------------------------------------------


@pytest.mark.parametrize("stdin", ["not json", "", "[1, 2]", '"text"', "{\"session_id\": "])
def test_bad_input_is_a_one_line_note_and_exit_0(cli, stdin: str, project: Path) -> None:
    result = cli("hook", "claude", "Stop", stdin=stdin)
    assert result.code == 0 and result.out == ""
    assert result.err.count("\n") == 1 and result.err.startswith("aidp hook claude Stop: ")
    assert "Traceback" not in result.err
    assert not (project / ".aidp" / "tasklist.jsonl").exists()


def test_missing_session_is_a_no_op(cli, project: Path) -> None:
    result = hook(cli, "claude", "PostToolUse", {"tool_name": "TodoWrite",
                                                 "tool_input": {"todos": []}})
    assert result.code == 0 and result.out == "" and "no session_id" in result.err
    assert not (project / ".aidp").exists()


def test_an_internal_error_never_blocks(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ctx, payload):
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(handler, "handle", broken)
    result = hook(cli, "claude", "Stop", stop("s"))
    assert result.code == 0 and result.out == ""
    assert result.err == "aidp hook claude Stop: disk on fire second line\n"


def test_an_unreadable_tasklist_never_blocks(cli, project: Path) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / "tasklist.jsonl").mkdir()  # a folder where the file should be
    result = hook(cli, "claude", "Stop", stop("s"))
    assert result.code == 0 and result.out == "" and result.err.count("\n") == 1


def test_damaged_hook_state_starts_afresh(cli, project: Path) -> None:
    answer(hook(cli, "claude", "PostToolUse", todo_write("s", ("A", "pending"))))
    path = handler.state_path(project, "claude", "s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{garbage")
    assert "reminder 1 of 3" in answer(hook(cli, "claude", "Stop", stop("s")))["reason"]
    assert orjson.loads(path.read_bytes())["blocks"] == 1


@pytest.mark.parametrize(("agent", "event", "message"), [
    ("cursor", "Stop", "Error: Unknown agent 'cursor': use one of claude, gemini, codex\n"),
    ("claude", "AfterAgent", "Error: Unknown claude hook event 'AfterAgent': use one of "
     "SessionStart, UserPromptSubmit, PostToolUse, Stop\n"),
    ("gemini", "Stop", "Error: Unknown gemini hook event 'Stop': use one of SessionStart, "
     "BeforeAgent, AfterTool, AfterAgent\n"),
])
def test_unknown_agent_or_event_is_usage(cli, agent: str, event: str, message: str) -> None:
    result = hook(cli, agent, event, stop("s"))
    assert result.code == 2 and result.err == message and result.out == ""


def test_event_names_ignore_case_and_dashes(cli) -> None:
    answer(hook(cli, "claude", "post-tool-use", todo_write("s", ("A", "pending"))))
    assert answer(hook(cli, "CLAUDE", "stop", stop("s")))["decision"] == "block"


def test_old_state_is_swept(project: Path) -> None:
    import os

    from aidp.agent.hook.state import state_path

    folder = project / ".aidp" / "hooks"
    folder.mkdir(parents=True)
    old, new = state_path(project, "claude", "old"), state_path(project, "claude", "new")
    other = folder / "settings.json"  # not a name aidp gives its state: never swept
    for path in (old, new, other):
        path.write_text("{}")
    os.utime(old, (1, 1))
    os.utime(other, (1, 1))
    handler.sweep(project)
    assert not old.exists() and new.exists() and other.exists()


# --- codex ----------------------------------------------------------------------------


def test_codex_update_plan_and_stop(cli) -> None:
    payload = {"session_id": "c", "hook_event_name": "PostToolUse", "tool_name": "update_plan",
               "tool_input": {"plan": [{"step": "Write code", "status": "in_progress"},
                                       {"step": "Write tests", "status": "pending"}]},
               "tool_response": "Plan updated"}
    assert answer(hook(cli, "codex", "PostToolUse", payload)) is None
    assert contents(cli, "c") == [("Write code", "in_progress"), ("Write tests", "pending")]
    start = answer(hook(cli, "codex", "SessionStart", {"session_id": "c", "source": "startup"}))
    assert "1. [IN_PROGRESS] (MEDIUM) Write code" in start["hookSpecificOutput"][
        "additionalContext"]
    stopping = {"session_id": "c", "stop_hook_active": False, "last_assistant_message": "ok"}
    for n in (1, 2, 3):
        out = answer(hook(cli, "codex", "Stop", stopping))
        assert out["decision"] == "block" and f"reminder {n} of 3" in out["reason"]
        # Codex wraps its hook prompts; one reaching the prompt hook is not the user's.
        wrapped = f'<hook_prompt hook_run_id="stop:3">{out["reason"]}</hook_prompt>'
        answer(hook(cli, "codex", "UserPromptSubmit", {"session_id": "c", "prompt": wrapped}))
    # stop_hook_active false did not reset the count: only a user prompt does for Codex.
    assert hook(cli, "codex", "Stop", stopping).out == ""
    answer(hook(cli, "codex", "UserPromptSubmit", {"session_id": "c", "prompt": "go on"}))
    assert answer(hook(cli, "codex", "Stop", stopping))["decision"] == "block"


# --- start-up: hooks run at every session start, stop and plan change --------------------


def _imported(args: list[str], stdin: str) -> set[str]:
    import os

    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "aidp", *args],
                          input=stdin, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1"}, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


@pytest.mark.parametrize(("args", "payload"), [
    (["prime"], ""),
    (["hook", "claude", "SessionStart"], '{"session_id": "s", "source": "startup"}'),
    (["hook", "claude", "Stop"], '{"session_id": "s", "stop_hook_active": false}'),
    (["hook", "gemini", "AfterTool"], '{"session_id": "s", "tool_name": "write_todos", '
                                      '"tool_input": {"todos": []}}'),
])
def test_prime_and_hooks_stay_light(args: list[str], payload: str) -> None:
    names = _imported(args, payload)
    assert "aidp.cli" in names
    heavy = ("rich", "pydantic", "dateutil", "aidp.agent.loop", "aidp.agent.process",
             "aidp.cli.tasks", "aidp.cli.todo", "aidp.cli.runner", "aidp.cli.init")
    assert sorted(n for n in names if n.startswith(heavy)) == []


def test_unusable_hook_state_still_gives_the_prime(cli, project: Path) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / "hooks").write_text("a file where the folder should be")
    result = hook(cli, "claude", "SessionStart", {"session_id": "s", "source": "startup"})
    assert result.code == 0
    assert "# aidp: your TODO list" in json.loads(result.out)["hookSpecificOutput"][
        "additionalContext"]
    assert result.err.count("\n") == 1 and "hook state" in result.err and "unusable" in result.err


def test_a_planted_link_for_the_state_folder_is_not_followed(
    cli, project: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".aidp").mkdir()
    (project / ".aidp" / "hooks").symlink_to(elsewhere)
    result = hook(cli, "claude", "SessionStart", {"session_id": "s", "source": "startup"})
    assert result.code == 0 and "additionalContext" in result.out
    assert "symbolic link" in result.err
    assert list(elsewhere.iterdir()) == []
