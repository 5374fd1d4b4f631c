"""The Makefile's first-hour promises (issue 14), checked on a copy of it in a temp dir
with stand-in tools (nothing is installed, no index is reached): a `.venv` built by
another Python is rebuilt; `make install` uses pipx, else uv, else says what to do."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def project_copy(tmp_path: Path) -> Path:
    where = tmp_path / "repo"
    where.mkdir()
    shutil.copy(ROOT / "Makefile", where / "Makefile")
    (where / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    return where


def make(where: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess:
    import os

    env = {"HOME": str(where), "LANG": "C.UTF-8", "PATH": path or os.environ["PATH"]}
    return subprocess.run([MAKE, "--no-print-directory", *args], cwd=where, env=env,
                          capture_output=True, text=True, timeout=60)


def stand_in(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(0o755)


def test_a_venv_of_another_python_is_rebuilt(tmp_path: Path) -> None:
    where = project_copy(tmp_path)
    stand_in(where / ".venv" / "bin", "python", "echo 2.7")  # another Python's venv
    done = make(where, "-n", ".venv/bin/aidp", f"PYTHON={sys.executable}")
    assert done.returncode == 0, done
    assert "not " in done.stdout and "rebuilding it" in done.stdout
    assert "rm -rf .venv" in done.stdout and f"{sys.executable} -m venv .venv" in done.stdout
    assert (where / ".venv").exists()  # -n prints the rebuild and deletes nothing
    done = make(where, "venv-check", f"PYTHON={sys.executable}")  # the step itself
    assert done.returncode == 0, done
    assert "rebuilding it" in done.stdout and not (where / ".venv").exists()


def test_a_venv_of_the_same_python_is_kept(tmp_path: Path) -> None:
    where = project_copy(tmp_path)
    (where / ".venv" / "bin").mkdir(parents=True)
    (where / ".venv" / "bin" / "python").symlink_to(sys.executable)
    done = make(where, "-n", ".venv/bin/aidp", f"PYTHON={sys.executable}")
    assert done.returncode == 0, done
    assert "rebuilding" not in done.stdout and "rm -rf" not in done.stdout
    assert (where / ".venv" / "bin" / "python").exists()
    done = make(where, "venv-check", f"PYTHON={sys.executable}")
    assert done.returncode == 0 and "nothing to do" in done.stdout, done
    assert (where / ".venv" / "bin" / "python").exists()


@pytest.mark.parametrize(("tools", "expected"), [
    (("pipx", "uv"), "pipx install --force ."),
    (("uv",), "uv tool install --force ."),
])
def test_make_install_uses_pipx_else_uv(tmp_path: Path, tools: tuple[str, ...],
                                        expected: str) -> None:
    where = project_copy(tmp_path)
    farm = tmp_path / "bin"
    log = tmp_path / "called"
    for tool in tools:
        stand_in(farm, tool, f'echo "{tool} $*" >> {log}')
    done = make(where, "install", path=str(farm))
    assert done.returncode == 0, done
    assert log.read_text().splitlines() == [expected]


def test_make_install_without_pipx_or_uv_says_what_to_do(tmp_path: Path) -> None:
    where = project_copy(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    done = make(where, "install", path=str(empty))
    assert done.returncode != 0
    assert "make install needs pipx or uv" in done.stdout
    assert "README" in done.stdout


def test_the_readme_says_how_to_install_anywhere() -> None:
    """After `make run` aidp is not on PATH: the README says how to get it there, and
    what to do when a system Python refuses pip (PEP 668)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for needed in ("pipx install .", "uv tool install .", "pip install -e .", "make install",
                   "PEP 668", "externally-managed-environment"):
        assert needed in text, needed


def test_the_package_metadata_uses_the_licence_form_setuptools_wants() -> None:
    """setuptools >= 77 warns (SetuptoolsDeprecationWarning) about a `license` table and
    about License :: classifiers; the SPDX string and license-files need >= 77."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = data["project"]
    assert isinstance(project["license"], str) and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").is_file()
    assert not [c for c in project.get("classifiers", []) if c.startswith("License ::")]
    assert "setuptools>=77" in data["build-system"]["requires"]
