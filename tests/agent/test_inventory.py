"""`aidp agents`' survey: installed or not, the version read from package files (never
by starting Codex), and whether it is the version the real-agent suite verified."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path

from aidp.agent import inventory
from aidp.agent.agents import adapters
from aidp.agent.agents.verified import VERIFIED

VERSIONS_TOML = Path(__file__).parents[1] / "agents" / "versions.toml"


def npm_cli(root: Path, program: str, package: str, version: str, *, body: str = "") -> None:
    """An npm install: node_modules/<package>/package.json and a .bin link to its script."""
    folder = root / "node_modules" / package
    (folder / "bin").mkdir(parents=True)
    (folder / "package.json").write_text(json.dumps({"name": package, "version": version}))
    script = folder / "bin" / f"{program}.js"
    script.write_text(f"#!{sys.executable}\n{body}")
    script.chmod(0o755)
    bin_dir = root / "node_modules" / ".bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / program).symlink_to(os.path.relpath(script, bin_dir))


def by_name(found: list[inventory.AgentInfo]) -> dict[str, inventory.AgentInfo]:
    return {info.name: info for info in found}


def test_the_verified_versions_are_the_suites_pins() -> None:
    with open(VERSIONS_TOML, "rb") as handle:
        pins = tomllib.load(handle)["cli"]
    assert {name: (p["manager"], p["package"], p["version"]) for name, p in pins.items()} \
        == VERIFIED


def test_versions_come_from_package_files_and_codex_is_never_started(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    touch = f"open({str(marker)!r}, 'a').write('x')\n"
    npm_cli(tmp_path, "gemini", "@google/gemini-cli", VERIFIED["gemini"][2], body=touch)
    npm_cli(tmp_path, "codex", "@openai/codex", "0.170.0", body=touch)
    env = {"PATH": str(tmp_path / "node_modules" / ".bin")}
    found = by_name(inventory.survey(env=env))
    gemini, codex = found["gemini"], found["codex"]
    assert (gemini.version, gemini.version_from, gemini.verified) == (
        VERIFIED["gemini"][2], "package.json", True)
    assert (codex.version, codex.verified, codex.verified_version) == (
        "0.170.0", False, VERIFIED["codex"][2])
    assert found["claude"].path is None and found["claude"].version is None
    assert not marker.exists()  # read, never run


def test_a_cli_without_package_files_is_asked_briefly_but_codex_never(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    marker = tmp_path / "codex-started"
    claude_version = VERIFIED["claude"][2]
    for program, body in (
        ("claude", f"print('{claude_version} (Claude Code)')"),
        ("codex", f"open({str(marker)!r}, 'a').write('x'); print('codex-cli 0.169.0')"),
    ):
        path = bin_dir / program
        path.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
        path.chmod(0o755)
    found = by_name(inventory.survey(env={"PATH": str(bin_dir)}))
    assert (found["claude"].version, found["claude"].version_from) == (claude_version, "--version")
    assert found["claude"].verified is True
    assert found["codex"].path == str(bin_dir / "codex") and found["codex"].version is None
    assert not marker.exists()
    assert inventory.survey(env={"PATH": str(bin_dir)}, ask=False)[0].version is None


def test_aider_version_from_its_virtual_environment(tmp_path: Path) -> None:
    venv = tmp_path / "aider"
    site = venv / "lib" / "python3.11" / "site-packages" / "aider_chat-0.80.0.dist-info"
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.4\nName: aider-chat\nVersion: 0.80.0\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "aider").write_text("#!/bin/false\n")
    (venv / "bin" / "aider").chmod(0o755)
    aider = by_name(inventory.survey(env={"PATH": str(venv / "bin")}))["aider"]
    assert (aider.version, aider.version_from, aider.verified) == (
        "0.80.0", "package metadata", False)


def test_every_preset_is_listed_in_run_order() -> None:
    found = inventory.survey(env={"PATH": ""})
    assert [info.name for info in found] == [a.name for a in adapters()]
    assert all(info.path is None and not info.verified for info in found)
    assert found[0].to_json()["installed"] is False
