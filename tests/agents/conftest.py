"""Fixtures of the real-agent suite (`make test-agents`).

- `fake_model`: a FakeModelServer on 127.0.0.1 (port 0) with an empty script; a test
  sets `fake_model.scenario` before running the agent.
- `agent_world(cli)`: a factory building the hermetic AgentWorld for one CLI (skips
  the test with a clear reason when that CLI is not installed).
- `claude`, `codex`, `gemini`, `opencode`, `copilot`, `aider`: an AgentWorld per CLI.

See tests/agents/README.md.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakemodel import FakeModelServer
from harness import AgentWorld, missing_reason


@pytest.fixture
def fake_model() -> Iterator[FakeModelServer]:
    """The scripted model server; the test fails if anything tried to reach another
    host through it (it is every world's proxy), or if the script needed a tool the
    CLI did not offer."""
    with FakeModelServer() as server:
        yield server
        outside = [r for r in server.outside() if r.path not in REGISTRIES]
        assert not outside, "traffic to outside hosts: " + ", ".join(r.path for r in outside)
        unrendered = server.unrendered()
        assert not unrendered, "scripted step not sent: " + unrendered[0]


# Package registries (allowed on this machine) that a CLI asks for its own parts: opencode
# installs `@opencode-ai/plugin` into each fresh config folder in the background (it
# logs "background dependency install failed" and goes on). Such a request is still
# refused by the proxy — nothing leaves the machine — but it fails no test.
REGISTRIES = {"registry.npmjs.org:443"}


@pytest.fixture
def agent_world(tmp_path: Path, fake_model: FakeModelServer) -> Callable[[str], AgentWorld]:
    def make(cli: str) -> AgentWorld:
        why = missing_reason(cli)
        if why is not None:
            pytest.skip(why)
        fake_model.tool_less = cli == "aider"  # aider offers the model no tools
        return AgentWorld(cli, tmp_path / cli, fake_model).build()

    return make


@pytest.fixture
def claude(agent_world: Callable[[str], AgentWorld]) -> AgentWorld:
    return agent_world("claude")


@pytest.fixture
def codex(agent_world: Callable[[str], AgentWorld]) -> AgentWorld:
    return agent_world("codex")


@pytest.fixture
def gemini(agent_world: Callable[[str], AgentWorld]) -> AgentWorld:
    return agent_world("gemini")


@pytest.fixture
def opencode(agent_world: Callable[[str], AgentWorld]) -> AgentWorld:
    return agent_world("opencode")


@pytest.fixture
def copilot(agent_world: Callable[[str], AgentWorld]) -> AgentWorld:
    return agent_world("copilot")


@pytest.fixture
def aider(agent_world: Callable[[str], AgentWorld]) -> AgentWorld:
    return agent_world("aider")
