"""`aidp setup AGENT`: put aidp's hooks into an agent's project settings, or take them out.

The settings are merged, never rewritten: every other key and every other hook stays
as it was, in its place. aidp's own hook handlers are recognised by their command,
which is always `aidp hook AGENT EVENT` (nothing else is ever written: `aidp trust`
relies on that), so `--remove` takes out exactly those and running setup twice
changes nothing. A settings file that is not a JSON object with well-formed `hooks` is
refused and left as it was. Optionally the agent's instructions file (CLAUDE.md,
GEMINI.md) gets a short snippet between markers (aidp.agent.setup.snippet) and its MCP
settings aidp's server (aidp.agent.setup.mcp). Pure apart from the files it edits;
returns what it did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidp.agent.setup.files import (
    AGENTS,
    AgentSettings,
    SettingsError,
    agent,
    checking,
    dump_settings,
    inside_project,
    load_settings,
    read_settings,
    remove_settings,
    write_settings,
)

if TYPE_CHECKING:
    from aidp.agent.setup.mcp import Registered

__all__ = ["AGENTS", "AgentSettings", "Result", "SettingsError", "agent", "command", "installed",
           "is_ours", "merged", "setup"]


def command(spec: AgentSettings, event: str, limit: int | None = None) -> str:
    """The command setup writes; the stop hook carries `--max-continuations N` when a
    limit was asked for."""
    base = f"aidp hook {spec.name} {event}"
    return base if limit is None or not _is_stop(spec, event) else (
        f"{base} --max-continuations {limit}")


def _is_stop(spec: AgentSettings, event: str) -> bool:
    return event in spec.stop_events


def _accepts(spec: AgentSettings, event: str, text: object, limit: int | None) -> bool:
    """Whether an existing handler's command is the one setup wants: with no limit asked
    for, a stop hook's own `--max-continuations N` (the user's choice) is kept."""
    if not isinstance(text, str):
        return False
    if limit is not None or not _is_stop(spec, event):
        return text == command(spec, event, limit)
    base = command(spec, event)
    if text == base:
        return True
    rest = text.removeprefix(base + " --max-continuations ")
    return rest != text and rest.isdigit() and rest.isascii()


def is_ours(handler: object, spec: AgentSettings) -> bool:
    return (isinstance(handler, dict)
            and isinstance(handler.get("command"), str)
            and handler["command"].strip().startswith(f"aidp hook {spec.name} "))


@dataclass
class Result:
    agent: str
    path: Path
    changed: bool
    events: list[str]  # the events aidp's hooks are (or were) set on
    missing: list[str] = field(default_factory=list)  # --check: events without our hook
    instructions: Path | None = None
    instructions_changed: bool = False
    instructions_present: bool = False
    server: Registered | None = None  # aidp's MCP server (with --mcp, and --remove)
    # aidp's MCP tools allowed in `path` (agents that ask otherwise: Claude Code's
    # `permissions.allow`): whether they are (after the change), and whether it changed
    tools_allowed: bool = False
    tools_changed: bool = False


# --- merging ------------------------------------------------------------------------


def _without_ours(groups: list[dict[str, Any]], spec: AgentSettings, event: str,
                  keep: tuple[str | None, int | None] | None) -> tuple[list[dict[str, Any]], bool]:
    """The groups with aidp's handlers taken out, except the first one setup wants for
    `keep` (matcher, limit); and whether that one was found."""
    out: list[dict[str, Any]] = []
    found = False
    for group in groups:
        handlers = group["hooks"] if isinstance(group.get("hooks"), list) else None
        if handlers is None:
            out.append(group)
            continue
        kept = []
        for handler in handlers:
            if not is_ours(handler, spec):
                kept.append(handler)
            elif (keep is not None and not found and group.get("matcher") == keep[0]
                  and _accepts(spec, event, handler.get("command"), keep[1])):
                kept.append(handler)
                found = True
        if kept or not handlers:
            out.append(group if kept == handlers else dict(group, hooks=kept))
    return out, found


def merged(data: dict[str, Any], spec: AgentSettings, *, remove: bool,
           limit: int | None = None) -> dict[str, Any]:
    """The settings with aidp's hooks added (or taken out); everything else as it was.
    `limit`: the stop hook's `--max-continuations`."""
    result = dict(data)
    hooks = dict(result.get("hooks") or {})
    for event, matcher in spec.matchers.items():
        groups = list(hooks.get(event) or [])
        keep = None if remove else (matcher, limit)
        groups, found = _without_ours(groups, spec, event, keep)
        if keep is not None and not found:
            group: dict[str, Any] = {}
            if matcher is not None:
                group["matcher"] = matcher
            handler: dict[str, Any] = {"type": "command",
                                       "command": command(spec, event, limit)}
            if event in spec.names:
                handler["name"] = spec.names[event]
            group["hooks"] = [handler]
            groups.append(group)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    # Events aidp no longer uses may still hold handlers of an older version.
    for event in [e for e in hooks if e not in spec.matchers]:
        groups, _ = _without_ours(list(hooks[event]), spec, event, None)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if hooks:
        result["hooks"] = hooks
    else:
        result.pop("hooks", None)
    return result


def tool_rules(spec: AgentSettings) -> list[str]:
    """The rules that allow aidp's MCP tools where the agent asks for each tool
    otherwise (Claude Code: `mcp__aidp__todo_write`, …); [] for the others."""
    if spec.mcp_allow is None:
        return []
    from aidp.agent.setup.mcp import NAME
    from aidp.toolserver.tools import TOOLS

    return [spec.mcp_allow.format(server=NAME, tool=tool) for tool in TOOLS]


def _allowed(data: dict[str, Any], path: Path) -> list[Any]:
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError(f"Cannot edit {path}: its \"permissions\" is not an object")
    allow = permissions.get("allow", [])
    if not isinstance(allow, list):
        raise SettingsError(f"Cannot edit {path}: its \"permissions.allow\" is not a list")
    return allow


def permitted(data: dict[str, Any], rules: list[str], path: Path, *,
              remove: bool) -> dict[str, Any]:
    """The settings with `rules` added to `permissions.allow` after the user's own (or
    with `remove` taken out, and a list or table left empty by that dropped);
    everything else as it was, in its place."""
    allow = _allowed(data, path)
    if remove:
        new_allow = [rule for rule in allow if rule not in rules]
    else:
        new_allow = allow + [rule for rule in rules if rule not in allow]
    if new_allow == allow:
        return data
    permissions = dict(data.get("permissions") or {})
    if new_allow:
        permissions["allow"] = new_allow
    else:
        permissions.pop("allow", None)
    result = dict(data)
    if permissions:
        result["permissions"] = permissions
    else:
        result.pop("permissions", None)
    return result


def installed(data: dict[str, Any], spec: AgentSettings, limit: int | None = None
              ) -> list[str]:
    """The events whose aidp hook is set as setup writes it (a stop hook with any
    `--max-continuations`, unless `limit` names one)."""
    found = []
    hooks = data.get("hooks") or {}
    for event, matcher in spec.matchers.items():
        for group in hooks.get(event) or []:
            handlers = group["hooks"] if isinstance(group.get("hooks"), list) else []
            if group.get("matcher") == matcher and any(
                isinstance(h, dict) and _accepts(spec, event, h.get("command"), limit)
                for h in handlers
            ):
                found.append(event)
                break
    return found


# --- the command --------------------------------------------------------------------


def setup(root: Path, name: str, *, remove: bool = False, check: bool = False,
          instructions: bool = False, limit: int | None = None, mcp: bool = False) -> Result:
    """Add (or with `remove` take out, or with `check` only look at) aidp's hooks in the
    agent's project settings; `instructions` also handles the snippet, `mcp` the
    registration of `aidp mcp` (aidp.agent.setup.mcp). With `remove`, a snippet and a
    server found are always taken out. Every file is checked before any is written: a
    refusal (a link, a file aidp cannot parse or edit) leaves all of them as they were."""
    if not check:
        with checking():
            _setup(root, name, remove=remove, check=False, instructions=instructions,
                   limit=limit, mcp=mcp)
    return _setup(root, name, remove=remove, check=check, instructions=instructions,
                  limit=limit, mcp=mcp)


def _setup(root: Path, name: str, *, remove: bool, check: bool, instructions: bool,
           limit: int | None, mcp: bool) -> Result:
    spec = agent(name)
    path = root / spec.settings
    inside_project(root, path)
    data = load_settings(root, path)
    result = Result(agent=spec.name, path=path, changed=False, events=list(spec.matchers))
    rules = tool_rules(spec) if (mcp or remove) else []
    result.tools_allowed = bool(rules) and not remove and all(
        rule in _allowed(data, path) for rule in rules)
    if check:
        present = installed(data, spec, limit)
        result.missing = [e for e in spec.matchers if e not in present]
    else:
        new = merged(data, spec, remove=remove, limit=limit)
        if rules:
            allowed = permitted(new, rules, path, remove=remove)
            result.tools_changed = _allowed(allowed, path) != _allowed(new, path)
            result.tools_allowed = not remove
            new = allowed
        if new != data:
            if remove and not new and path.exists():
                remove_settings(root, path)  # nothing but aidp's was in it
            else:
                write_settings(root, path, dump_settings(new, read_settings(root, path)))
            result.changed = new.get("hooks") != data.get("hooks")
    if instructions or remove:
        from aidp.agent.setup.snippet import instructions as snippet

        where, snippet_changed, snippet_present = snippet(root, spec, remove=remove,
                                                          check=check)
        result.instructions = where if (instructions or snippet_changed) else None
        result.instructions_changed = snippet_changed
        result.instructions_present = snippet_present
    if mcp or remove:
        from aidp.agent.setup.mcp import register

        result.server = register(root, spec.name, remove=remove, check=check)
    return result
