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
