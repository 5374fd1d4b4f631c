"""GitHub Copilot CLI: `copilot -p PROMPT`; plain text output."""

from __future__ import annotations

NAME = "copilot"
PRESET = "copilot -p {prompt}"
