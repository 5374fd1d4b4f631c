"""What aidp reads from Gemini CLI, opencode, Copilot CLI and aider, as their versions of
today print it (checked against the real CLIs: tests/agents/), and what `aidp run` does
with it."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import orjson
import pytest

from aidp.agent import agents
from aidp.agent.events import Notice, OutputReader, Plan, Text, Tool


def read_all(lines: list[str], program: str = "") -> tuple[list, OutputReader]:
    reader = agents.output_reader(agents.get(program) if program else None)
    items = []
    for line in lines:
        items.extend(reader.feed(line))
    items.extend(reader.finish())
    return items, reader


def dumps(*events: dict) -> list[str]:
    return [orjson.dumps(e).decode() for e in events]


# --- opencode run --format json --------------------------------------------------------

SESSION = "ses_df686ef54ffeIw8KWbwC2L3Qzd"


def oc(kind: str, part: dict) -> dict:
    return {"type": kind, "timestamp": 1795455277714, "sessionID": SESSION, "part": part}


def test_opencode_json_events() -> None:
    todos = [{"content": "Step one", "status": "in_progress", "priority": "high", "id": "1"},
             {"content": "Step two", "status": "pending", "priority": "medium", "id": "2"}]
    lines = dumps(
        oc("step_start", {"type": "step-start"}),
        oc("tool_use", {"type": "tool", "tool": "todowrite", "callID": "c1", "state": {
            "status": "completed", "input": {"todos": todos}, "output": "[]"}}),
        oc("text", {"type": "text", "text": 'Planning.\nFile task: "Handle the "draft" flag"'}),
        oc("tool_use", {"type": "tool", "tool": "bash", "callID": "c2", "state": {
            "status": "completed", "input": {"command": "aidp todo tick 1"},
            "output": 'File task: "from the output"'}}),
        oc("tool_use", {"type": "tool", "tool": "todowrite", "callID": "c3", "state": {
            "status": "error", "input": {"todos": []}, "error": "refused"}}),
        oc("step_finish", {"type": "step-finish", "reason": "stop"}),
    )
    items, _ = read_all(lines)
    assert items == [
        Tool("todowrite", "2 items"),
        Plan([{"content": "Step one", "status": "in_progress"},
              {"content": "Step two", "status": "pending"}]),
        Text("Planning."),
        Text('File task: "Handle the "draft" flag"'),
        Tool("bash", "aidp todo tick 1"),
        Tool("todowrite", "0 items"),  # a failed plan call changes nothing
    ]


def test_opencode_api_error_names_the_status() -> None:
    event = {"type": "error", "timestamp": 1, "sessionID": SESSION, "error": {
        "name": "APIError", "data": {"message": "bad key", "statusCode": 401,
                                     "isRetryable": False}}}
    items, _ = read_all(dumps(event))
    assert items == [Notice("the agent reported an error: HTTP 401: bad key")]


# --- copilot --output-format json --------------------------------------------------------


def cp(kind: str, data: dict) -> dict:
    return {"type": kind, "data": data, "id": "x", "timestamp": "t", "parentId": "p"}


def copilot_db(home: Path, session: str, rows: list[tuple[str, str, str]]) -> None:
    folder = home / "session-state" / session
    folder.mkdir(parents=True)
    db = sqlite3.connect(folder / "session.db")
    db.execute("CREATE TABLE todos (id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT,"
               " status TEXT DEFAULT 'pending', created_at TEXT DEFAULT (datetime('now')),"
               " updated_at TEXT)")
    db.executemany("INSERT INTO todos (id, title, status) VALUES (?, ?, ?)", rows)
    db.commit()
    db.close()


def test_copilot_json_events_and_its_todos_table(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    session = "5de4b114-a2c6-4d7d-91db-934e613ff91e"
    copilot_db(tmp_path, session, [("a", "Writing the parser", "done"),
                                   ("b", "Testing it", "in_progress"),
                                   ("c", "Shipping", "blocked")])
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path))
    lines = dumps(
        cp("assistant.message_delta", {"deltaContent": "Plan"}),
        cp("assistant.message", {"content": "Planning.", "toolRequests": [
            {"name": "sql", "arguments": {"query": "INSERT INTO todos …"}}]}),
        cp("tool.execution_start", {"toolName": "sql", "arguments": {
            "description": "Insert todos", "query": "INSERT INTO todos …"}}),
        cp("session.todos_changed", {}),
        cp("tool.execution_start", {"toolName": "bash", "arguments": {
            "command": "echo 'File task: \"x\"'", "description": "echo"}}),
        cp("tool.shell_output", {"stream": "stdout", "text": 'File task: "x"\n'}),
        cp("model.call_failure", {"statusCode": 500, "retryAttempt": 0}),
        cp("session.info", {"infoType": "model_retry",
                            "message": "Request failed due to a transient API error. Retrying..."}),
        cp("assistant.message", {"content": "Done.", "toolRequests": []}),
        {"type": "result", "timestamp": "t", "sessionId": session, "exitCode": 0},
    )
    items, _ = read_all(lines)
    assert items == [
        Text("Planning."),
        Tool("sql", "INSERT INTO todos …"),
        Tool("bash", "echo 'File task: \"x\"'"),
        Notice("the model API answered HTTP 500 (attempt 1)"),
        Notice("Request failed due to a transient API error. Retrying..."),
        Text("Done."),
        Plan([{"content": "Writing the parser", "status": "completed"},
              {"content": "Testing it", "status": "in_progress"},
              {"content": "Shipping", "status": "pending"}]),
    ]


def test_copilot_without_a_todo_change_reads_no_database(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path))
    items, _ = read_all(dumps({"type": "result", "sessionId": "../../etc", "exitCode": 0}))
    assert items == []
    changed = dumps(cp("session.todos_changed", {}),
                    {"type": "result", "sessionId": "../../etc", "exitCode": 0})
    assert read_all(changed)[0] == []  # a session id that is no plain name is not a path


def test_copilot_session_error_is_a_notice() -> None:
    event = cp("session.error", {"errorType": "authentication", "statusCode": 401,
                                 "message": "Authentication failed (HTTP 401).\n  Check it."})
    assert read_all(dumps(event))[0] == [
        Notice("the agent reported an error: Authentication failed (HTTP 401). Check it.")]


def test_copilot_text_mode_tool_lines_are_notes_not_signals() -> None:
    lines = [
        "Planning.",
        "",
        "● show todos (shell)",
        "  │ aidp todo show; echo 'File task: \"from echo\"'",
        "  └ 2 lines…",
        "",
        'File task: "From the reply"',
    ]
    items, _ = read_all(lines, program="copilot")
    assert items == [Text("Planning."), Text(""), Tool("copilot", "show todos (shell)"),
                     Text(""), Text('File task: "From the reply"')]
    # Another program's `●` bullet is its text.
    assert read_all(["● a bullet"])[0] == [Text("● a bullet")]


# --- aider ----------------------------------------------------------------------------------


def test_aider_api_error_marks_the_invocation_failed_until_a_retry() -> None:
    items, reader = read_all(["Aider v0.86.2", "",
                              "litellm.AuthenticationError: AuthenticationError: bad key",
                              "The API provider is not able to authenticate you."],
                             program="aider")
    assert items[2] == Notice("the agent reported an error: litellm.AuthenticationError "
                              "(HTTP 401): AuthenticationError: bad key")
    assert reader.failure == "litellm.AuthenticationError (HTTP 401): AuthenticationError: bad key"
    _, recovered = read_all(["litellm.InternalServerError: boom", "Retrying in 0.2 seconds...",
                             "Done."], program="aider")
    assert recovered.failure is None


# --- through aidp run ---------------------------------------------------------------------------


def fake_cli(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport json, os, sys\nfrom pathlib import Path\n"
                    f"CALLS = Path({str(folder / (name + '.calls'))!r})\n"
                    "CALLS.open('a').write('x')\n" + body)
    path.chmod(0o755)
    return path


def calls(path: Path) -> int:
    record = path.with_name(path.name + ".calls")
    return len(record.read_text()) if record.exists() else 0


def test_aider_exiting_0_after_an_api_error_fails_the_run(cli, tmp_path: Path) -> None:
    cli("todo", "add", "Write the parser")
    aider = fake_cli(tmp_path / "bin", "aider", (
        "print('litellm.AuthenticationError: OpenAIException - bad key')\n"
        "print('The API provider is not able to authenticate you. Check your API key.')\n"))
    result = cli("run", "go", "--agent", f"{aider} --message={{prompt}}")
    assert result.code == 1, result
    assert ("Warning: The agent exited with code 0 after an error it did not recover from "
            "(litellm.AuthenticationError (HTTP 401): OpenAIException - bad key); counted as a "
            "failure"
            ) in result.err
    assert "↻" not in result.out and calls(aider) == 1  # no re-prompt loop


def test_aider_that_recovered_after_a_retry_succeeds(cli, tmp_path: Path) -> None:
    aider = fake_cli(tmp_path / "bin", "aider", (
        "print('litellm.InternalServerError: server down')\n"
        "print('Retrying in 0.2 seconds...')\n"
        "print('File task: \"After the retry\"')\n"))
    result = cli("run", "go", "--agent", f"{aider} --message={{prompt}}")
    assert result.code == 0, result
    assert "Agent: Retrying in 0.2 seconds..." in result.err
    assert "📋 Filed task: After the retry" in result.out


def test_aiders_own_files_are_no_progress(cli, tmp_path: Path, project: Path) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(project), "init", "-q"], check=True)
    cli("todo", "add", "Write the parser")
    aider = fake_cli(tmp_path / "bin", "aider", (
        "n = len(CALLS.read_text())\n"
        "Path('.aider.chat.history.md').write_text('chat ' * n)\n"
        "Path('.aider.input.history').write_text('in ' * n)\n"
        "Path('.aider.tags.cache.v4').mkdir(exist_ok=True)\n"
        "Path('.aider.tags.cache.v4/cache.db').write_text('db ' * n)\n"
        "print('I will get to it.')\n"))
    result = cli("run", "go", "--agent", f"{aider} --message={{prompt}}",
                 "--max-continuations", "2")
    assert result.code == 0, result
    assert calls(aider) == 3, result  # continued twice: aider's own files are no progress
    # The same program writing a file of the project is progress.
    worker = fake_cli(tmp_path / "bin2", "aider", "Path('parser.py').write_text('x' * len(CALLS.read_text()))\n")
    assert cli("run", "go", "--agent", f"{worker} --message={{prompt}}").code == 0
    assert calls(worker) == 1


def test_copilot_text_mode_echo_files_nothing(cli, tmp_path: Path) -> None:
    copilot = fake_cli(tmp_path / "bin", "copilot", (
        "print('● Run echo (shell)')\n"
        "print(\"  │ echo 'File task: \\\"From a tool call\\\"'\")\n"
        "print('  └ 1 line…')\n"
        "print()\n"
        "print('All done.')\n"))
    result = cli("run", "go", "--agent", f"{copilot} -p {{prompt}}")
    assert result.code == 0, result
    assert json.loads(cli("tasks", "list", "--all", "--json").out) == []
    assert "🔧 copilot: Run echo (shell)" in result.out
