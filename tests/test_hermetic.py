"""The suite is hermetic: what a test finds never depends on the machine it runs on.

A run of representative tests in a hostile environment (a narrow terminal, the C
locale, another time zone, an agent CLI and an `aidp` first on PATH, a home with its
own git identity, colour forced) must pass exactly as it does in a clean one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Tests that read PATH (agent lookup, `setup`'s aidp check), the terminal width (tables,
# charts), git's identity (claims) and the time zone (dates in human output).
REPRESENTATIVE = (
    "tests/cli/test_run_cli.py::test_usage_errors_exit_2",
    "tests/cli/test_agents_cli.py",
    "tests/cli/test_stats_cli.py::test_human_stats_draw_bars_in_80_columns_without_colour_when_piped",
    "tests/cli/test_tasks_cli.py::test_list_table_groups_by_status",
    "tests/cli/test_stats_cli.py::test_no_color_is_honoured_even_on_a_terminal",
    "tests/cli/test_queue_cli.py::test_default_actor_comes_from_git_then_the_login",
    "tests/cli/test_queue_cli.py::test_list_table_shows_who_holds_a_task_and_what_it_waits_on",
    "tests/test_hermetic.py::test_the_test_environment_is_fixed",
)


def _hostile_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "hostile-bin"
    bin_dir.mkdir()
    for name in ("codex", "claude", "gemini", "aidp"):
        script = bin_dir / name
        script.write_text("#!/bin/sh\necho 'File task: \"from a hostile PATH\"'\nexit 0\n")
        script.chmod(0o755)
    home = tmp_path / "hostile-home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\temail = hostile@example.invalid\n\tname = Hostile\n"
        "[core]\n\tautocrlf = true\n[init]\n\tdefaultBranch = hostile\n"
    )
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "COLUMNS": "40",
        "LINES": "5",
        "LANG": "C",
        "LC_ALL": "C",
        "TZ": "Pacific/Kiritimati",
        "FORCE_COLOR": "1",
        "NO_COLOR": "1",
        "AIDP_ACTOR": "hostile",
        "AIDP_AGENT": "codex",
        "EMAIL": "hostile@example.invalid",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "PYTHONIOENCODING": "ascii:backslashreplace",
        "TERM": "dumb",
    }


def test_the_test_environment_is_fixed() -> None:
    assert os.environ["COLUMNS"] == "80" and os.environ["LINES"] == "24"
    assert os.environ["LC_ALL"] == "C.UTF-8" and os.environ["TZ"] == "UTC"
    for name in ("AIDP_ACTOR", "AIDP_AGENT", "EMAIL", "GIT_CONFIG_GLOBAL", "NO_COLOR",
                 "FORCE_COLOR", "PYTHONIOENCODING"):
        assert name not in os.environ, name
    import shutil

    for program in ("codex", "claude", "gemini", "aidp"):
        assert shutil.which(program) is None, f"{program} is reachable on the test PATH"
    assert shutil.which("git") is not None  # the rest of PATH stays usable


def test_representative_tests_pass_in_a_hostile_environment(tmp_path: Path) -> None:
    env = _hostile_env(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *REPRESENTATIVE],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
