"""A home for one `aidp run` of Gemini CLI, so that it gets `aidp mcp` for that run only.

Gemini CLI (0.61) takes MCP servers only from settings files, and its user settings
are `<home>/.gemini/settings.json`, where home is `GEMINI_CLI_HOME` when set. So the
run gets a home of its own, in a fresh private temporary folder: its `.gemini/` holds
the user's settings with aidp's server added (`mcpServers.aidp`, trusted), and every
other entry of the user's `.gemini/` (credentials, memory, trusted folders, history)
as a symbolic link to it, so Gemini sees and updates the user's own files. The folder
is made once per `aidp run` process and removed when it ends.

Nothing is given (None) when the user's settings are not a JSON object aidp can read
(Gemini allows comments in them), or when they already name a server `aidp`: then the
run goes on as without the server, and the user's files are never changed.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from aidp.agent.agents.base import McpServer

SETTINGS = "settings.json"
_MADE: dict[tuple[str, str], Path] = {}  # (user's .gemini, settings written) → home


def user_gemini_dir(env: dict[str, str]) -> Path:
    """The `.gemini` folder Gemini would read for this environment."""
    home = env.get("GEMINI_CLI_HOME") or env.get("HOME") or str(Path.home())
    return Path(home) / ".gemini"


def run_settings(user_dir: Path, server: McpServer) -> dict[str, Any] | None:
    """The user's settings with aidp's server added; None when they cannot be read as a
    JSON object or already have a server named like aidp's."""
    path = user_dir / SETTINGS
    try:
        settings: Any = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(settings, dict):
        return None
    servers = settings.get("mcpServers", {})
    if not isinstance(servers, dict) or server.name in servers:
        return None
    entry = {**server.stdio(), "trust": True}
    return {**settings, "mcpServers": {**servers, server.name: entry}}


def run_home(env: dict[str, str], server: McpServer) -> Path | None:
    """A GEMINI_CLI_HOME for this run holding aidp's server (see the module's doc)."""
    user_dir = user_gemini_dir(env)
    settings = run_settings(user_dir, server)
    if settings is None:
        return None
    text = json.dumps(settings, indent=2)
    key = (str(user_dir), text)
    made = _MADE.get(key)
    if made is not None and made.is_dir():
        return made
    home = Path(tempfile.mkdtemp(prefix="aidp-gemini-home-"))  # private: mode 0700
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    own = home / ".gemini"
    own.mkdir()
    if user_dir.is_dir():
        for entry in user_dir.iterdir():
            if entry.name != SETTINGS:
                os.symlink(entry, own / entry.name)
    (own / SETTINGS).write_text(text + "\n", encoding="utf-8")
    _MADE[key] = home
    return home
