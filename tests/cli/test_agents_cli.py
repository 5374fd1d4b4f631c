"""`aidp agents` on the command line: human lines and the --json contract."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aidp.agent.agents.verified import VERIFIED

KEYS = {"name", "command", "program", "path", "installed", "version", "version_from",
        "verified_version", "verified"}


def test_agents_lists_every_preset_with_its_state(cli, tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "node_modules" / "@google" / "gemini-cli"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps(
        {"name": "@google/gemini-cli", "version": VERIFIED["gemini"][2]}))
    (package / "gemini.js").write_text(f"#!{sys.executable}\n")
    (package / "gemini.js").chmod(0o755)
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").symlink_to("../@google/gemini-cli/gemini.js")
    monkeypatch.setenv("PATH", str(bin_dir))

    result = cli("agents")
    assert result.code == 0, result
    lines = result.out.splitlines()
    gemini = next(line for line in lines if line.startswith("gemini "))
    assert f"{VERIFIED['gemini'][2]} (verified) at {bin_dir / 'gemini'}" in gemini
    assert any(line.startswith("codex ") and "not installed (codex is not on PATH)" in line
               for line in lines)
    assert "preset: gemini --output-format stream-json" in result.out

    as_json = cli("agents", "--json")
    assert as_json.code == 0, as_json
    data = json.loads(as_json.out)
    assert [d["name"] for d in data] == ["claude", "codex", "gemini", "aider", "cursor",
                                         "copilot", "opencode"]
    assert all(set(d) == KEYS for d in data)
    row = next(d for d in data if d["name"] == "gemini")
    assert (row["installed"], row["version"], row["verified"]) == (
        True, VERIFIED["gemini"][2], True)
    cursor = next(d for d in data if d["name"] == "cursor")
    assert (cursor["installed"], cursor["verified_version"], cursor["verified"]) == (
        False, None, False)


def test_agents_rejects_an_unknown_option(cli) -> None:
    result = cli("agents", "--bogus")
    assert result.code == 2
    assert "No such option: --bogus" in result.err
