"""The agent CLI versions the real-agent suite (tests/agents/) verified: the pins of
tests/agents/versions.toml, kept here so that an installed aidp knows them.
`python tests/agents/install.py --upgrade` rewrites both; tests/agent/test_inventory.py
fails when they disagree."""

from __future__ import annotations

# name → (package manager, package, version)
VERIFIED: dict[str, tuple[str, str, str]] = {
    "claude": ("npm", "@anthropic-ai/claude-code", "2.1.332"),
    "codex": ("npm", "@openai/codex", "0.171.0"),
    "gemini": ("npm", "@google/gemini-cli", "0.61.0"),
    "opencode": ("npm", "opencode-ai", "1.18.33"),
    "copilot": ("npm", "@github/copilot", "1.0.102"),
    "aider": ("pip", "aider-chat", "0.86.2"),
}
