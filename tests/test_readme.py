"""The README's quick start works as written: its `aidp` lines run, in order, in a fresh
git repository, and none fails. Lines that reach outside (an agent, a remote, a
browser) are checked to be real commands by their --help instead."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
# Need an agent CLI, a git remote or a browser (or serve until stopped): their --help
# must work instead.
OUTSIDE = ("run", "setup", "sync", "report", "agents", "board")


def _quick_start() -> list[list[str]]:
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("aidp ")]


def test_the_readme_keeps_its_first_two_commands() -> None:
    first = re.search(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert first is not None
    assert [line.split()[:2] for line in first.group(1).splitlines()] == [
        ["make", "run"], ["make", "test"]]
    makefile = (README.parent / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^run: ", makefile, re.MULTILINE) and re.search(r"^test: ", makefile, re.MULTILINE)
    assert re.search(r"^install:", makefile, re.MULTILINE)


def test_the_readme_quick_start_runs(project: Path, tmp_path: Path) -> None:
    commands = _quick_start()
    assert len(commands) >= 10 and ["init"] in commands
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "tw.json").write_text('[{"description": "From taskwarrior", "status": '
                                     '"pending", "uuid": "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}]\n')
    env = {**os.environ, "AIDP_DIR": str(project)}
    first_id = None
    for written in commands:
        args = [written[0], "--help"] if written[0] in OUTSIDE else written
        if args[:2] == ["tasks", "done"] and first_id is not None:
            args = ["tasks", "done", first_id[:4]]  # the README's id is an example
        proc = subprocess.run([sys.executable, "-m", "aidp", *args], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, (args, proc.stderr)
        if args[:2] == ["tasks", "add"]:
            first_id = first_id or proc.stdout.split("[")[1].split("]")[0].rpartition("_")[2]
