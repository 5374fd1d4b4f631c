"""aider: `aider --no-pretty --message PROMPT`; plain text output."""

from __future__ import annotations

NAME = "aider"
PRESET = "aider --no-pretty --message {prompt}"
