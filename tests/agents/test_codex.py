"""Codex specifics of the `codex` preset, with the real CLI (see test_scenarios.py for
the shared table)."""

from __future__ import annotations

from fakemodel import FakeModelServer, Scenario, shell, text
from harness import AgentWorld


def test_the_sandbox_writes_the_project_and_keeps_git_read_only(
        codex: AgentWorld, fake_model: FakeModelServer) -> None:
    """workspace-write: the project (and so .aidp/) is writable; Codex keeps .git
    read-only there, which shows its sandbox is on. (Its writable roots also include
    /tmp, where this test's whole world lives, so "outside" cannot be shown here.)"""
    outside = codex.project / ".git" / "written-by-the-agent"
    fake_model.scenario = Scenario.of(
        shell("touch inside.txt"),
        shell(f"touch {outside}"),
        text("Tried both."),
    )
    result = codex.aidp_run("Try two commands")
    assert result.exit_code == 0, str(result)
    assert (codex.project / "inside.txt").exists(), str(result)
    assert not outside.exists(), str(result)


def test_the_plan_tool_is_offered(codex: AgentWorld, fake_model: FakeModelServer) -> None:
    fake_model.scenario = Scenario.of(text("Nothing to do."))
    result = codex.aidp_run("Look around")
    assert result.exit_code == 0, str(result)
    assert "update_plan" in fake_model.tools_offered(), fake_model.describe()
