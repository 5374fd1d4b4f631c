"""Names a cloned repository chooses that aidp could take for paths: a task id holding
`/..` as the name of the file `tasks edit` opens in the editor, and a file named to
`--body-file` that the clone made a link (docs/security.md, "The board, task bodies and
an agent's commands"). Each an attacker's repository cloned with real git, `aidp` run
as a subprocess in the clone (the `hostile` fixture)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

STAMP = "2026-09-21T12:00:00.000000Z"


def _task(tid: str, description: str) -> str:
    return json.dumps({"id": tid, "description": description, "status": "pending",
                       "priority": "medium", "created_at": STAMP, "updated_at": STAMP,
                       "session": "default", "tags": []}) + "\n"


def _recording_editor(folder: Path) -> tuple[Path, Path]:
    """An editor that records the file it was given (and leaves it as it was)."""
    record = folder / "edited.txt"
    editor = folder / "editor"
    editor.write_text(f"#!{sys.executable}\nimport sys\n"
                      f"open({str(record)!r}, 'w').write(sys.argv[-1])\n")
    editor.chmod(0o755)
    return editor, record


def test_a_planted_id_never_moves_the_editors_file_out_of_the_temporary_folder(
        hostile) -> None:
    """An id `abcd/../../<folder>/x` made `tasks edit` create its file where the clone
    said, through a folder another user of the machine can make in /tmp (the draft,
    the task's body, kept there on bad input); with no such folder, a traceback."""
    target = hostile.outside / "target"
    target.mkdir()
    tmp = hostile.home / "tmp"
    tmp.mkdir()
    climb = "../" * (len(tmp.parts) + 1)
    tid = f"abcd/{climb}{str(target).lstrip('/')}/x"
    hostile.write(".aidp/tasklist.jsonl", _task(tid, "Planted"))
    hostile.write(".gitattributes", ".aidp/tasklist.jsonl merge=union\n")
    hostile.clone()
    editor, record = _recording_editor(hostile.home)
    env = {"EDITOR": str(editor), "TMPDIR": str(tmp)}
    for planted_folder in (False, True):
        if planted_folder:
            (tmp / "aidp-task-abcd").mkdir()  # made by another user of the machine
        ran = hostile.aidp("tasks", "edit", tid, env=env)
        assert ran.code == 0 and "Traceback" not in ran.err, ran
        edited = Path(record.read_text())
        assert edited.parent == tmp and ".." not in edited.name, edited
        assert list(target.iterdir()) == []


def test_body_file_reads_no_file_a_clone_links_to_and_an_agent_no_file_of_yours(
        hostile) -> None:
    """`--body-file notes.md`, where the clone made `notes.md` (or a folder above it) a
    link to a file of the user's: the file's text went into the git-tracked tasklist,
    which `aidp sync` pushes. And an agent allowed `aidp tasks add` read any file of the
    user's that way, past its own CLI's rules."""
    secret = hostile.home / "secret"
    secret.mkdir()
    (secret / "id_rsa").write_text("PRIVATE KEY\n")
    hostile.link("notes.md", secret / "id_rsa")
    hostile.link("docs", secret)
    hostile.write("spec/task.md", "# The spec\n")
    hostile.write(".aidp/tasklist.jsonl", "")
    hostile.write(".gitattributes", ".aidp/tasklist.jsonl merge=union\n")
    clone = hostile.clone()
    tasklist = clone / ".aidp" / "tasklist.jsonl"
    os.mkfifo(clone / "pipe.md")  # nobody writes it: a read would wait forever
    for named in ("notes.md", "docs/id_rsa", "./docs/../notes.md", "pipe.md",
                  str(clone / "notes.md")):
        ran = hostile.aidp("tasks", "add", "Filed", "--body-file", named)
        assert ran.code == 2 and ran.err.count("\n") == 1, (named, ran)
        assert "symbolic link" in ran.err and "Traceback" not in ran.err
    assert tasklist.read_bytes() == b""
    # The project's own file, as itself: filed; then edits are held to the same rule.
    tid = hostile.aidp("tasks", "add", "Filed", "--body-file", "spec/task.md", "-q").out.strip()
    assert json.loads(hostile.aidp("tasks", "show", tid, "--json").out)["body"] == "# The spec"
    before = tasklist.read_bytes()
    assert hostile.aidp("tasks", "edit", tid, "--body-file", "docs/id_rsa").code == 2
    # A file of the user's outside the project: theirs to name, never an agent's.
    agent = {"AIDP_AGENT_PROCESS": "aidp run"}
    for command in (("tasks", "add", "Leak"), ("tasks", "edit", tid)):
        ran = hostile.aidp(*command, "--body-file", str(secret / "id_rsa"), env=agent)
        assert ran.code == 2 and "outside the project" in ran.err, ran
    assert tasklist.read_bytes() == before
    assert b"PRIVATE" not in tasklist.read_bytes()
    ran = hostile.aidp("tasks", "add", "Piped", "--body-file", "-", stdin="From stdin\n",
                       env=agent)
    assert ran.code == 0, ran
    ran = hostile.aidp("tasks", "add", "Mine", "--body-file", str(secret / "id_rsa"))
    assert ran.code == 0, ran  # a person names their own file
