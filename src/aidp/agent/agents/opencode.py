"""opencode: `opencode run PROMPT`; plain text output."""

from __future__ import annotations

NAME = "opencode"
PRESET = "opencode run {prompt}"
