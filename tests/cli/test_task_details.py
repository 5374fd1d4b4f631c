"""What a task holds beyond its title: a body, a type, a close reason (docs/guide.md
`aidp tasks add`, `edit`, `show`, `done`; docs/file-format.md "Body, type and close
reason"), through the CLI as people and scripts use it."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path

import orjson
import pytest

from aidp.backlog.details import MAX_BODY
from tests.test_sync import ok as synced
from tests.test_sync import shared_task, team  # noqa: F401 (team: a fixture used here)

TASKLIST = Path(".aidp") / "tasklist.jsonl"


def ok(result) -> str:
    assert result.code == 0, result
    return result.out


def lines(project: Path) -> list[dict]:
    return [orjson.loads(raw) for raw in (project / TASKLIST).read_bytes().splitlines()]


def of_type(project: Path, kind: str) -> list[dict]:
    return [r for r in lines(project) if r.get("type") == kind]


def shown(cli, tid: str) -> dict:
    return json.loads(ok(cli("tasks", "show", tid, "--json")))


def test_a_body_and_a_type_are_filed_shown_and_kept_out_of_the_task_record(
        cli, project) -> None:
    body = "## Steps\n\n1. run it with an empty HOME\n2.\tsee it crash\n"
    tid = ok(cli("tasks", "add", "Crash on an empty config", "--type", "bug", "--body", body,
                 "-q")).strip()
    (task,) = [r for r in lines(project) if "type" not in r]
    assert "body" not in task and "task_type" not in task  # the Ruby reader keeps reading
    (record,) = of_type(project, "body")
    assert (record["id"], record["task"], record["body"]) == (
        f"body:{tid}", tid, body.rstrip())
    assert of_type(project, "task_type")[0]["task_type"] == "bug"
    got = shown(cli, tid)
    assert (got["task_type"], got["body"]) == ("bug", body.rstrip())
    assert list(got)[-1] == "body"  # after the links, last
    # a listing stays small; a script asks for the bodies
    (listed,) = json.loads(ok(cli("tasks", "list", "--json")))
    assert listed["task_type"] == "bug" and "body" not in listed
    (full,) = json.loads(ok(cli("tasks", "list", "--json", "--with-body")))
    assert full["body"] == body.rstrip()
    assert json.loads(ok(cli("tasks", "list", "--all", "-f", "jsonl", "--with-body")
                         ).splitlines()[0])["body"] == body.rstrip()
    refused = cli("tasks", "list", "--with-body")
    assert refused.code == 2 and "applies to json and jsonl only" in refused.err
    # the table shows the type, show the body as written when piped
    assert "bug: Crash on an empty config" in ok(cli("tasks", "list"))
    text = ok(cli("tasks", "show", tid))
    assert "task_type" in text and text.rstrip().endswith(
        "Body\n## Steps\n\n1. run it with an empty HOME\n2.\tsee it crash")


def test_the_ready_and_blocked_tables_show_the_type_as_list_does(cli, project) -> None:
    """`bug: …` on a ready task's line, and on a blocked task's (before: only `list`
    showed it); a `task` has no prefix, and neither has what a task waits on."""
    first = ok(cli("tasks", "add", "Flaky login", "--type", "bug", "-q")).strip()
    ok(cli("tasks", "add", "Plain one", "-q"))
    ok(cli("tasks", "add", "Dark mode", "--type", "feature", "--blocked-by", first, "-q"))
    ok(cli("tasks", "claim", first, "--as", "ann"))
    # its lease run out (its record again, ending in the past, winning by its later
    # line): ready offers the task after the fresh ones, stale
    (claim,) = of_type(project, "claim")
    with (project / TASKLIST).open("a") as tasklist:
        tasklist.write(json.dumps({**claim, "lease_until": "2000-01-01T00:00:00.000000Z"})
                       + "\n")
    ready = ok(cli("tasks", "ready"))
    assert "] Plain one (" in ready and "] bug: Flaky login (" in ready, ready
    assert "stale: @ann" in ready.splitlines()[-1], ready
    blocked = ok(cli("tasks", "blocked"))
    assert "] feature: Dark mode (" in blocked, blocked
    assert "waits on: [" in blocked and "] Flaky login (in_progress)" in blocked, blocked


def test_a_plain_task_has_no_records_of_its_own(cli, project) -> None:
    tid = ok(cli("tasks", "add", "Plain", "--type", "task", "--body", "  \n", "-q")).strip()
    assert [r for r in lines(project) if "type" in r] == []
    got = shown(cli, tid)
    assert "task_type" not in got and "body" not in got


def test_body_file_and_standard_input(cli, project) -> None:
    (project / "notes.md").write_bytes(b"# Title\r\nline two\r\n")
    tid = ok(cli("tasks", "add", "From a file", "--body-file", "notes.md", "-q")).strip()
    assert shown(cli, tid)["body"] == "# Title\nline two"
    tid = ok(cli("tasks", "add", "From stdin", "--body-file", "-", "-q",
                 stdin="piped *text*\n")).strip()
    assert shown(cli, tid)["body"] == "piped *text*"


@pytest.mark.parametrize(("args", "message"), [
    (("--body", "a\x1bb"), "Invalid body: it contains the control character U+001B"),
    (("--body", "a\rb"), "Invalid body: it contains the control character U+000D"),
    (("--body", "x" * (MAX_BODY + 1)), "Invalid body: 65,537 bytes; at most 64 KiB"),
    (("--body", "é" * (MAX_BODY // 2 + 1)), "Invalid body: 65,538 bytes"),
    (("--body", "x", "--body-file", "-"), "Conflicting --body and --body-file"),
    (("--body-file", "missing.md"), "Invalid --body-file 'missing.md': cannot read it"),
    (("--body-file", "latin1.md"), "Invalid --body-file 'latin1.md': byte 1 is not UTF-8"),
    (("--type", "story"), "Invalid type 'story': use one of task, bug, feature, chore, epic"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(cli, project, args, message) -> None:
    ok(cli("tasks", "add", "Existing", "-q"))
    (project / "latin1.md").write_bytes(b"a\xe9b")
    before = (project / TASKLIST).read_bytes()
    for command in (("tasks", "add", "New"), ("tasks", "edit", lines(project)[0]["id"])):
        result = cli(*command, *args)
        assert result.code == 2, (command, result)
        assert result.err.startswith(f"Error: {message}"), result.err
        assert result.err.count("\n") == 1
        assert (project / TASKLIST).read_bytes() == before


def test_a_body_just_under_the_limit_is_taken(cli, project) -> None:
    text = "x" * MAX_BODY
    tid = ok(cli("tasks", "add", "Big", "--body", text, "-q")).strip()
    assert shown(cli, tid)["body"] == text


def test_an_edit_writes_a_body_or_type_only_when_it_changes(cli, project) -> None:
    tid = ok(cli("tasks", "add", "Task", "--body", "first", "-q")).strip()
    ok(cli("tasks", "edit", tid, "-p", "high"))  # another field: the body is not repeated
    ok(cli("tasks", "edit", tid, "--body", "first"))  # the same body: nothing
    ok(cli("tasks", "edit", tid, "--type", "task"))  # the default: nothing
    assert len(of_type(project, "body")) == 1 and of_type(project, "task_type") == []
    before = len(lines(project))
    out = ok(cli("tasks", "edit", tid, "--body", "second", "--type", "chore"))
    assert "Edited" in out
    added = lines(project)[before:]
    assert [r.get("type") for r in added] == ["body", "task_type"]  # no task record
    got = shown(cli, tid)
    assert (got["body"], got["task_type"], got["priority"]) == ("second", "chore", "high")
    ok(cli("tasks", "edit", tid, "--body", ""))
    assert "body" not in shown(cli, tid)
    assert of_type(project, "body")[-1]["body"] == ""
    assert ok(cli("tasks", "edit", tid, "--body", "")).startswith("Nothing changed")


def test_done_with_a_reason_is_shown_like_an_abandon_reason(cli, project) -> None:
    tid = ok(cli("tasks", "add", "Raise the limit", "-q")).strip()
    ok(cli("tasks", "done", tid, "--reason", "Raised to 64"))
    assert shown(cli, tid)["close_reason"] == "Raised to 64"
    assert "Raise the limit (today) — Raised to 64" in ok(cli("tasks", "list", "-s", "done"))
    (listed,) = json.loads(ok(cli("tasks", "list", "--all", "--json")))
    assert listed["close_reason"] == "Raised to 64"
    assert "close_reason" not in lines(project)[-2]  # the task record: Ruby's keys only
    ok(cli("tasks", "reopen", tid))  # gone with the close, as abandoned_reason would be
    assert "close_reason" not in shown(cli, tid)
    ok(cli("tasks", "done", tid))  # done again without one: still none
    assert "close_reason" not in shown(cli, tid)
    ok(cli("tasks", "reopen", tid))
    ok(cli("tasks", "done", tid, "-r", "Second time"))
    assert shown(cli, tid)["close_reason"] == "Second time"
    refused = cli("tasks", "done", tid, "--reason", "")
    assert refused.code == 2 and "Invalid reason: it is empty" in refused.err


def test_list_filters_by_type(cli, project) -> None:
    ids = {kind: ok(cli("tasks", "add", f"A {kind}", "--type", kind, "-q")).strip()
           for kind in ("task", "bug", "feature")}
    def found(*args: str) -> set[str]:
        return {t["id"] for t in json.loads(ok(cli("tasks", "list", "--json", *args)))}
    assert found("--type", "bug") == {ids["bug"]}
    assert found("--type", "bug", "--type", "TASK") == {ids["bug"], ids["task"]}
    assert found("--type", "epic") == set()
    assert found() == set(ids.values())
    assert "No open tasks match --type chore" in ok(cli("tasks", "list", "--type", "chore"))
    refused = cli("tasks", "list", "--type", "story")
    assert refused.code == 2 and "use one of task, bug, feature, chore, epic" in refused.err


def test_compact_keeps_bodies_types_and_reasons(cli, project) -> None:
    tid = ok(cli("tasks", "add", "Task", "--body", "one", "--type", "bug", "-q")).strip()
    ok(cli("tasks", "edit", tid, "--body", "two", "-p", "high"))
    ok(cli("tasks", "done", tid, "--reason", "Fixed"))
    before = shown(cli, tid)
    ok(cli("tasks", "compact"))
    assert shown(cli, tid) == before
    assert [r["body"] for r in of_type(project, "body")] == ["two"]
    assert len(of_type(project, "close_reason")) == 1


# --- the editor -----------------------------------------------------------------------


def editor(project: Path, script: str) -> str:
    """A stand-in for $EDITOR: a shell script that edits the file it is given."""
    path = project.parent / "editor.sh"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_edit_without_options_opens_the_editor_on_title_fields_and_body(
        cli, project, monkeypatch) -> None:
    tid = ok(cli("tasks", "add", "Crash", "-t", "cli", "--body", "# Steps\nold", "-q")).strip()
    seen = project.parent / "seen.txt"
    monkeypatch.setenv("EDITOR", editor(project, f"""cp "$1" {seen}
sed -i 's/^Crash$/Crash on an empty config/; s/^priority: medium/priority: high/; \
s/^type: task/type: bug/; s/^tags: cli/tags: cli, config/; s/^old$/new/' "$1"
"""))
    monkeypatch.setenv("VISUAL", "")
    out = ok(cli("tasks", "edit", tid))
    assert "Edited" in out
    draft = seen.read_text()
    assert "\nCrash\npriority: medium\ntype: task\ntags: cli\n--- body" in draft
    assert draft.endswith("everything below this line ---\n# Steps\nold\n")
    got = shown(cli, tid)
    assert (got["description"], got["priority"], got["task_type"], got["tags"], got["body"]) == (
        "Crash on an empty config", "high", "bug", ["cli", "config"], "# Steps\nnew")
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"aidp-task-{tid[-8:][:4]}*"))


def test_visual_wins_over_editor(cli, project, monkeypatch) -> None:
    tid = ok(cli("tasks", "add", "Task", "-q")).strip()
    monkeypatch.setenv("EDITOR", "false")
    monkeypatch.setenv("VISUAL", editor(project, "echo 'body from visual' >> \"$1\"\n"))
    ok(cli("tasks", "edit", tid))
    assert shown(cli, tid)["body"] == "body from visual"


@pytest.mark.parametrize(("script", "said"), [
    (":\n", "Nothing changed: ["),  # saved as it was
    (": > \"$1\"\n", "Nothing changed: the file was emptied"),
    ("sed -i '/^[^#]/d' \"$1\"\n", "Nothing changed: the file was emptied"),  # comments left
])
def test_an_unchanged_or_emptied_file_writes_nothing_and_says_so(
        cli, project, monkeypatch, script, said) -> None:
    tid = ok(cli("tasks", "add", "Task", "--body", "kept", "-q")).strip()
    before = (project / TASKLIST).read_bytes()
    monkeypatch.setenv("EDITOR", editor(project, script))
    assert ok(cli("tasks", "edit", tid)).startswith(said)
    assert (project / TASKLIST).read_bytes() == before


def test_a_failing_editor_writes_nothing_and_says_so(cli, project, monkeypatch) -> None:
    tid = ok(cli("tasks", "add", "Task", "-q")).strip()
    before = (project / TASKLIST).read_bytes()
    monkeypatch.setenv("EDITOR", editor(project, "echo 'half' >> \"$1\"; exit 3\n"))
    result = cli("tasks", "edit", tid)
    assert result.code == 1
    assert result.err.startswith("Error: The editor ") and "exited with status 3; nothing " \
        "was written" in result.err
    monkeypatch.setenv("EDITOR", str(project / "no-such-editor"))
    result = cli("tasks", "edit", tid)
    assert result.code == 1 and "Cannot run the editor" in result.err
    assert "(No such file or directory); nothing was written" in result.err
    monkeypatch.setenv("EDITOR", "vi 'unclosed")
    result = cli("tasks", "edit", tid)
    assert result.code == 1 and "Cannot read the editor command" in result.err
    assert (project / TASKLIST).read_bytes() == before
    # the command's words as a shell splits them, run without a shell
    script = editor(project, 'echo "$1" >> "$2"\n')
    monkeypatch.setenv("EDITOR", f"{script} 'two words'")
    ok(cli("tasks", "edit", tid))
    assert shown(cli, tid)["body"] == "two words"


def test_no_editor_and_no_terminal_says_to_pass_body(cli, project, monkeypatch) -> None:
    tid = ok(cli("tasks", "add", "Task", "-q")).strip()
    for name in ("EDITOR", "VISUAL"):
        monkeypatch.delenv(name, raising=False)
    result = cli("tasks", "edit", tid)
    assert result.code == 2
    assert result.err.count("\n") == 1 and "pass the change as options (--body TEXT" in result.err


def test_a_bad_value_in_the_editor_keeps_the_text(cli, project, monkeypatch) -> None:
    tid = ok(cli("tasks", "add", "Task", "-q")).strip()
    before = (project / TASKLIST).read_bytes()
    monkeypatch.setenv("EDITOR", editor(project, "sed -i 's/^type: task/type: story/' \"$1\"; "
                                                 "echo 'my long text' >> \"$1\"\n"))
    result = cli("tasks", "edit", tid)
    assert result.code == 2 and "Invalid type 'story'" in result.err
    kept = Path(result.err.rpartition("your text is kept in ")[2].rstrip(")\n"))
    assert "my long text" in kept.read_text()
    kept.unlink()
    assert (project / TASKLIST).read_bytes() == before
    monkeypatch.setenv("EDITOR", editor(project, "sed -i 's/^priority: medium/when: now/' "
                                                 "\"$1\"\n"))
    result = cli("tasks", "edit", tid)
    assert result.code == 2 and "line 'when: now' is not a field" in result.err
    Path(result.err.rpartition("your text is kept in ")[2].rstrip(")\n")).unlink()
    assert (project / TASKLIST).read_bytes() == before


def test_the_editor_changes_only_what_was_changed_there(cli, project, monkeypatch) -> None:
    """A change made elsewhere while the editor was open stays (field by field)."""
    tid = ok(cli("tasks", "add", "Task", "-q")).strip()
    monkeypatch.setenv("EDITOR", editor(project, f"""\
{shlex.quote(sys.executable)} -m aidp tasks edit {tid} -p low -d "Renamed meanwhile" >/dev/null
echo 'a body' >> "$1"
"""))
    ok(cli("tasks", "edit", tid))
    got = shown(cli, tid)
    assert (got["priority"], got["description"], got["body"]) == (
        "low", "Renamed meanwhile", "a body")


# --- two clones --------------------------------------------------------------------------


def test_a_body_in_one_clone_and_a_priority_in_the_other_both_survive(
        team) -> None:  # noqa: F811 (the fixture imported above)
    _clones, aidp = team
    tid = shared_task(team)
    synced(aidp("alice", "tasks", "edit", tid, "--body", "Alice's details", "--type", "bug"))
    synced(aidp("bob", "tasks", "edit", tid, "-p", "high"))
    synced(aidp("alice", "sync"))
    out = synced(aidp("bob", "sync"))
    assert "replaced" not in out
    synced(aidp("alice", "sync"))
    for who in ("alice", "bob"):
        task = json.loads(synced(aidp(who, "tasks", "show", tid, "--json")))
        assert (task["priority"], task["body"], task["task_type"]) == (
            "high", "Alice's details", "bug"), who


def test_two_body_edits_the_later_wins_and_sync_and_changes_name_it(
        team) -> None:  # noqa: F811 (the fixture imported above)
    _clones, aidp = team
    tid = shared_task(team)
    short = tid[-8:][:4]
    synced(aidp("bob", "tasks", "edit", tid, "--body", "Bob's plan\nin two lines"))
    synced(aidp("alice", "tasks", "edit", tid, "--body", "Alice's plan"))  # later: it wins
    synced(aidp("alice", "sync"))
    out = synced(aidp("bob", "sync"))
    assert (f"! {short} Auth endpoints: body \"Bob's plan\" (2 lines) (yours) replaced by "
            "\"Alice's plan\" (1 line) (from aidp tests <alice@example.invalid>)"
            ) in out.splitlines(), out
    task = json.loads(synced(aidp("bob", "tasks", "show", tid, "--json")))
    assert task["body"] == "Alice's plan"
    changes = json.loads(synced(aidp("bob", "tasks", "changes", "HEAD~3..HEAD", "--json")))
    (entry,) = changes["overwritten"]
    assert (entry["field"], entry["lost"], entry["kept"], entry["side"]) == (
        "body", "Bob's plan\nin two lines", "Alice's plan", "ours")


def test_changes_and_history_tell_body_type_and_reason(cli, project) -> None:
    from tests.test_sync import git

    git(project, "init", "-q", "-b", "main")
    ok(cli("init"))
    tid = ok(cli("tasks", "add", "Task", "--body", "one\ntwo", "-q")).strip()
    git(project, "add", "-A")
    git(project, "commit", "-qm", "one")
    ok(cli("tasks", "edit", tid, "--body", "one\n2\nthree", "--type", "feature"))
    ok(cli("tasks", "done", tid, "--reason", "Shipped"))
    data = json.loads(ok(cli("tasks", "changes", "--json")))
    (edit,) = data["edited"]
    assert edit["fields"] == {"body": {"from": "one\ntwo", "to": "one\n2\nthree"},
                              "task_type": {"from": None, "to": "feature"}}
    assert data["summary"] == "1 done, 1 edited"  # the reason goes with the close
    text = ok(cli("tasks", "changes"))
    assert "(body: 'one' (2 lines) → 'one' (3 lines); task_type: (none) → feature)" in text
    # git diff: a summary line and the changed lines, not an escaped blob
    diff = git(project, "diff").stdout
    added = [line[1:] for line in diff.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    hexpart = tid[-8:]
    assert added[:4] == [
        f"task {hexpart} body changed (3 lines, was 2: +2 -1)  {{"
        + added[0].partition("  {")[2],
        "    - two", "    + 2", "    + three"]
    assert f"task {hexpart} type: feature" in "\n".join(added)
    assert f"task {hexpart} close reason: Shipped" in "\n".join(added)
    assert "\\n" not in "\n".join(added)  # no escaped blob
    history = ok(cli("tasks", "history", tid))
    for said in ("body: 'one' (2 lines)", "body: 'one' (3 lines)", "type: feature",
                 "close reason: Shipped"):
        assert said in history, said


def test_a_one_line_body_is_one_line_in_the_diff(cli, project) -> None:
    from tests.test_sync import git

    git(project, "init", "-q", "-b", "main")
    ok(cli("init"))
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    tid = ok(cli("tasks", "add", "Task", "--body", "just this", "-q")).strip()
    diff = git(project, "diff").stdout
    assert f"task {tid[-8:]} body set (1 line)" in diff, diff


def test_a_body_is_rendered_as_markdown_on_a_terminal_and_inert_either_way() -> None:
    from aidp.core.terminal import terminal_text
    from aidp.views.render import body_text

    body = "# Title\n\n- one *item*\n- [link](https://example.com)\n\n\tcode\x1b]0;x\x07"
    plain = body_text(body, color=False)
    assert plain == "# Title\n\n- one *item*\n- [link](https://example.com)\n\n\tcode\\x1b]0;x\\x07"
    rich = body_text(body, color=True, width=60)
    assert "# Title" not in rich and "Title" in rich  # a heading, not its markup
    assert "\x1b[" in rich  # styled
    assert "\x07" not in rich and "\x1b]" not in rich  # no title, no hyperlink escape
    assert terminal_text(rich) == rich  # nothing but colours reaches the terminal
