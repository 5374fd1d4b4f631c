"""`aidp setup AGENT --mcp`: register `aidp mcp` in the agent's project MCP settings, or
take it out (`--remove`), next to the hooks aidp.agent.setup.integrate installs.

| agent | file | entry |
|---|---|---|
| claude | `.mcp.json` | `{"mcpServers": {"aidp": {"command": "aidp", "args": ["mcp"]}}}` |
| gemini | `.gemini/settings.json` | `mcpServers.aidp`, the same plus `"trust": true` |
| codex  | `.codex/config.toml` | `[mcp_servers.aidp]`: `command`, `args`, an approval mode |

The tools must be callable headless with nobody to approve them: Gemini's `trust` and
Codex's `default_tools_approval_mode = "approve"` do that in the entry; Claude Code's
rules `mcp__aidp__<tool>` go into its settings' `permissions.allow`
(aidp.agent.setup.integrate, `tool_rules`).

The file and any extra keys of the entry come from the agent's adapter
(aidp.agent.agents.base.Setup). The entry is recognised by its command, `aidp mcp`
(nothing else is written: `aidp trust` relies on that); every other server and key
stays as it was. A server of your own named `aidp` is never replaced. The TOML file is
edited as text and checked by parsing it again: an edit that would change anything but
aidp's table is refused, and the file is left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aidp.agent.setup.files import (
    AgentSettings,
    SettingsError,
    agent,
    dump_settings,
    inside_project,
    load_settings,
    read_settings,
    remove_settings,
    write_settings,
)
from aidp.core.toml_text import Unparsable, parse

NAME = "aidp"
COMMAND = "aidp"
ARGS = ["mcp"]
_TOML_HEADER = re.compile(r'^\s*\[\s*mcp_servers\s*\.\s*(?:aidp|"aidp")\s*\]\s*(?:#.*)?$')
_ANY_HEADER = re.compile(r"^\s*\[")


@dataclass
class Registered:
    path: Path
    changed: bool = False
    present: bool = False  # aidp's server is registered (after the change)


def entry(spec: AgentSettings) -> dict[str, Any]:
    """aidp's server as setup writes it, with the keys the agent's adapter adds (Gemini:
    `"trust": true`)."""
    return {"command": COMMAND, "args": list(ARGS), **spec.mcp_entry}


def toml_table(spec: AgentSettings) -> str:
    """aidp's table as setup adds it to a TOML settings file (values written as JSON
    strings, numbers and booleans are TOML too)."""
    import json

    lines = [f"[mcp_servers.{NAME}]"] + [f"{key} = {json.dumps(value)}"
                                          for key, value in entry(spec).items()]
    return "\n".join(lines) + "\n"


def is_ours(server: object) -> bool:
    return (isinstance(server, dict) and server.get("command") == COMMAND
            and server.get("args") == ARGS)


def _refuse_theirs(path: Path, server: object) -> None:
    if server is not None and not is_ours(server):
        raise SettingsError(f"Cannot register aidp's MCP server in {path}: a server named "
                            f"'{NAME}' that is not 'aidp mcp' is there; rename or remove it "
                            "and run setup again")


def register(root: Path, name: str, *, remove: bool = False,
             check: bool = False) -> Registered:
    """Add (take out, or only look at) aidp's server in the MCP settings file the
    agent's adapter names (`Setup.mcp_settings`)."""
    spec = agent(name)
    path = root / spec.mcp_settings
    inside_project(root, path)
    if path.suffix == ".toml":
        return _toml(root, path, spec, remove=remove, check=check)
    data = load_settings(root, path)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise SettingsError(f"Cannot edit {path}: its \"mcpServers\" is not an object")
    current = servers.get(NAME)
    result = Registered(path, present=is_ours(current))
    if check:
        return result
    if remove:
        if not result.present:
            return result
        rest = {k: v for k, v in servers.items() if k != NAME}
        new = dict(data)  # every other key, in its place
        if rest:
            new["mcpServers"] = rest
        else:
            del new["mcpServers"]
        if new:
            write_settings(root, path, dump_settings(new, read_settings(root, path)))
        else:
            remove_settings(root, path)  # nothing but aidp's server was in it
        result.changed, result.present = True, False
        return result
    _refuse_theirs(path, current)
    if current is not None:
        return result  # already there: the user's own extra keys (env, …) are kept
    new = dict(data)
    new["mcpServers"] = {**servers, NAME: entry(spec)}
    write_settings(root, path, dump_settings(new, read_settings(root, path)))
    result.changed = result.present = True
    return result


def _toml(root: Path, path: Path, spec: AgentSettings, *, remove: bool,
          check: bool) -> Registered:
    try:
        text = (read_settings(root, path) or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"Cannot read {path}: {exc}") from exc
    parsed = _parse(path, text)
    servers = parsed.get("mcp_servers", {})
    current = servers.get(NAME) if isinstance(servers, dict) else None
    result = Registered(path, present=is_ours(current))
    if check or (remove and not result.present):
        return result
    if remove:
        expected = dict(parsed)
        rest = {k: v for k, v in servers.items() if k != NAME}
        if rest:
            expected["mcp_servers"] = rest
        else:
            expected.pop("mcp_servers", None)
        new_text = _without_table(text)
    else:
        _refuse_theirs(path, current)
        if current is not None:
            return result
        expected = dict(parsed)
        expected["mcp_servers"] = {**(servers if isinstance(servers, dict) else {}),
                                   NAME: entry(spec)}
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        new_text = text + sep + toml_table(spec)
    if new_text is None or _parse(path, new_text, quiet=True) != expected:
        raise SettingsError(f"Cannot edit {path} safely (aidp's [mcp_servers.{NAME}] table "
                            "is not a plain table there); edit it by hand")
    if remove and not new_text.strip():
        remove_settings(root, path)
    else:
        write_settings(root, path, new_text.encode("utf-8"))
    result.changed, result.present = True, not remove
    return result


def _parse(path: Path, text: str, *, quiet: bool = False) -> dict[str, Any]:
    try:
        return parse(text)
    except Unparsable as exc:
        if quiet:
            return {"": "unparsable"}  # never equal to what was expected
        raise SettingsError(f"Cannot edit {path}: it is not valid TOML ({exc}); fix it "
                            "by hand and run setup again") from None


def _without_table(text: str) -> str | None:
    """The text without aidp's table (its header to the next header), and the blank line
    setup put before it; None when there is no such header."""
    lines = text.splitlines(keepends=True)
    start = next((n for n, line in enumerate(lines) if _TOML_HEADER.match(line)), None)
    if start is None:
        return None
    stop = next((n for n in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[n])),
                len(lines))
    before = lines[:start]
    if before and not before[-1].strip() and (stop == len(lines) or not start):
        before = before[:-1]
    return "".join(before + lines[stop:])
