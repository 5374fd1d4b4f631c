"""The run transcript under .aidp/runs/."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from aidp.agent.transcript import Transcript, safe_name
from aidp.tasklist.log import TaskLog


@given(st.text(max_size=200))
def test_safe_names_are_plain_file_names(session: str) -> None:
    name = safe_name(session)
    assert re.fullmatch(r"[A-Za-z0-9._-]{1,60}", name)
    assert not name.startswith((".", "-"))  # no dot file, nothing that reads as an option


def test_examples() -> None:
    assert safe_name("feature/login") == "feature_login"
    assert safe_name("../../etc/passwd") == "etc_passwd"
    assert safe_name("...") == "session"
    assert safe_name("") == "session"


def test_records_are_json_lines_in_a_git_ignored_folder(project: Path) -> None:
    log = TaskLog(project)
    transcript = Transcript(log, "../x/../../y")
    transcript.write("stdout", iteration=1, text="\x1b[31mred\x1b[0m")
    transcript.close()
    assert transcript.path is not None and transcript.path.parent == project / ".aidp" / "runs"
    assert transcript.path.name.startswith("x_.._.._y-")
    record = orjson.loads(transcript.path.read_bytes().splitlines()[0])
    assert record["kind"] == "stdout" and record["text"] == "\x1b[31mred\x1b[0m"
    assert b"\x1b" not in transcript.path.read_bytes()  # escaped by JSON, inert in a terminal
    assert "runs/" in (project / ".aidp" / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_an_old_gitignore_learns_runs(project: Path) -> None:
    (project / ".aidp").mkdir()
    (project / ".aidp" / ".gitignore").write_text("*.lock", encoding="utf-8")
    Transcript(TaskLog(project), "s").close()
    assert (project / ".aidp" / ".gitignore").read_text(encoding="utf-8") == "*.lock\nruns/\n"
