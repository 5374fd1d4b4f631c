"""`aidp setup AGENT`: put aidp's hooks into an agent's project settings, or take them out.

The settings are merged, never rewritten: every other key and every other hook stays
as it was, in its place. aidp's own hook handlers are recognised by their command,
which is always `aidp hook AGENT EVENT` (nothing else is ever written: `aidp trust`
relies on that), so `--remove` takes out exactly those and running setup twice
changes nothing. A settings file that is not a JSON object with well-formed `hooks` is
refused and left as it was. Optionally the agent's instructions file (CLAUDE.md,
GEMINI.md) gets a short snippet between markers (aidp.integrate_snippet) and its MCP
settings aidp's server (aidp.integrate_mcp). Pure apart from the files it edits;
returns what it did.
"""

from __future__ import annotations

import os
import stat
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from aidp import files
from aidp.agent import agents
from aidp.errors import AidpError, InvalidInput, StorageError

if TYPE_CHECKING:
    from aidp.agent.agents.base import Adapter
    from aidp.integrate_mcp import Registered


@dataclass(frozen=True)
class AgentSettings:
    """What `aidp setup NAME` writes for one agent, as its adapter says
    (aidp.agent.agents.base: `Adapter.setup`, `Adapter.hooks`, `Adapter.plan_tools`)."""

    name: str
    title: str
    settings: str  # the project settings file, relative to the root
    instructions: str  # the instructions file `--instructions` writes to
    mcp_settings: str  # the MCP settings file `--mcp` writes to
    # event → matcher (None: the event takes no matcher)
    matchers: dict[str, str | None]
    stop_events: frozenset[str]  # the events whose hook refuses a stop
    names: dict[str, str] = field(default_factory=dict)  # event → the handler's "name"
    mcp_entry: dict[str, object] = field(default_factory=dict)  # added to aidp's server
    note: str | None = None  # said once after the hooks were added

    @classmethod
    def of(cls, adapter: Adapter) -> AgentSettings | None:
        """The settings of an agent whose hooks aidp answers; None for another."""
        if adapter.hooks is None or adapter.setup is None:
            return None
        hooks, setup = adapter.hooks, adapter.setup
        plan_matcher = "|".join(adapter.plan_tools)
        return cls(
            name=adapter.name, title=adapter.title, settings=setup.settings,
            instructions=setup.instructions, mcp_settings=setup.mcp_settings,
            matchers={event: plan_matcher if kind == "plan" else None
                      for event, kind in hooks.events.items()},
            stop_events=frozenset(e for e, kind in hooks.events.items() if kind == "stop"),
            names=dict(setup.hook_names), mcp_entry=dict(setup.mcp_entry), note=setup.note)


# The agents `aidp setup` serves, from the adapters' registry.
AGENTS: dict[str, AgentSettings] = {
    spec.name: spec for spec in map(AgentSettings.of, agents.HOOKED) if spec is not None}


class SettingsError(AidpError):
    """A settings or instructions file aidp will not edit; it is left as it was."""

    exit_code = InvalidInput.exit_code


def agent(name: str) -> AgentSettings:
    found = AGENTS.get(name.strip().lower())
    if found is None:
        raise InvalidInput(f"Unknown agent {name!r}: use one of {', '.join(AGENTS)}")
    return found


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


# --- reading and writing ------------------------------------------------------------


def inside_project(root: Path, path: Path) -> None:
    """Refuse a file that is a link, or lies below a linked folder, anywhere under the
    project root (aidp.files): a cloned repository may plant `.claude -> ~/.claude` or
    `CLAUDE.md -> ~/.bashrc`, and setup must never edit anything through it; a FIFO or
    device is refused too (aidp.integrate_mcp uses it as well). StorageError, exit 1."""
    try:
        files.checked_path(root, path.relative_to(root))
    except StorageError as exc:
        if not isinstance(exc.__cause__, FileNotFoundError):
            raise  # a missing folder on the way is made when the file is written


def read_settings(root: Path, path: Path) -> bytes | None:
    """The file's bytes (None when missing), never through a link or from a FIFO."""
    try:
        return files.read_file(root, path.relative_to(root))
    except OSError as exc:
        raise SettingsError(f"Cannot read {path}: {exc.strerror or exc}") from exc


def load_settings(root: Path, path: Path) -> dict[str, Any]:
    """A JSON settings file as an object ({} when missing or empty); SettingsError for
    one aidp will not edit (not an object, too deep, malformed `hooks`)."""
    raw = read_settings(root, path)
    if raw is None:
        return {}
    if not raw.strip():
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise SettingsError(
            f"Cannot edit {path}: it is not valid JSON ({exc}); fix it by hand "
            "(aidp edits plain JSON only, without comments) and run setup again"
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"Cannot edit {path}: it holds a JSON "
                            f"{type(data).__name__}, expected an object")
    from aidp.fold import MAX_DEPTH, too_deep

    if too_deep(data):
        raise SettingsError(f"Cannot edit {path}: it nests JSON more than {MAX_DEPTH} levels "
                            "deep, more than aidp writes back; nothing was changed")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsError(f"Cannot edit {path}: its \"hooks\" is not an object")
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
            raise SettingsError(
                f"Cannot edit {path}: hooks.{event} is not a list of hook groups"
            )
        for group in groups:
            if "hooks" in group and not isinstance(group["hooks"], list):
                raise SettingsError(
                    f"Cannot edit {path}: a hooks.{event} group's \"hooks\" is not a list"
                )
    return data


def dump_settings(data: dict[str, Any]) -> bytes:
    """JSON settings as setup writes them: two-space indents, a final newline."""
    return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"


# True while `setup` checks every file it would change before changing any: the writers
# below then only refuse what they would refuse, and write nothing.
_CHECKING: ContextVar[bool] = ContextVar("aidp_setup_checking", default=False)


def _would_write(root: Path, path: Path) -> None:
    """Refuse now what writing `path` would refuse (a link on the way or there, a FIFO,
    a file in a folder's place); folders still to be made are fine."""
    relative = path.relative_to(root)
    try:
        with files.folder(root, relative.parent) as folder:
            _regular_or_none(folder, relative.name)
    except StorageError as exc:
        if not isinstance(exc.__cause__, FileNotFoundError):
            raise


def write_settings(root: Path, path: Path, body: bytes) -> None:
    """Replace `path` with `body` atomically (a temp file, then renamed, keeping its
    mode) without following a link anywhere below the project root: aidp.files refuses
    one with a line (exit 1); SettingsError when it cannot be written."""
    if _CHECKING.get():
        return _would_write(root, path)
    relative = path.relative_to(root)
    with files.folder(root, relative.parent, create=True) as folder:
        info = _regular_or_none(folder, relative.name)
        mode = info.st_mode & 0o7777 if info is not None else 0o644
        temp = f".{relative.name}.aidp.tmp"
        folder.unlink(temp)  # a leftover temp file (a link or anything else stays)
        try:
            fd = folder.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
            folder.replace(temp, relative.name)
        except BaseException as exc:
            folder.unlink(temp)
            if isinstance(exc, OSError):
                raise SettingsError(f"Cannot write {path}: {exc.strerror or exc}") from exc
            raise


def remove_settings(root: Path, path: Path) -> None:
    """Delete the file (a link, a FIFO or a device there is refused, never removed)."""
    if _CHECKING.get():
        return _would_write(root, path)
    relative = path.relative_to(root)
    with files.folder(root, relative.parent) as folder:
        _regular_or_none(folder, relative.name)  # a link or a FIFO is refused
        folder.unlink(relative.name)


def _regular_or_none(folder: files.Folder, name: str) -> os.stat_result | None:
    """What `name` is (None: missing); a link, FIFO or device there is refused."""
    info = folder.lstat(name)
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise files.link_error(folder.path / name)
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise files.not_regular_error(folder.path / name)
    return info


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
    registration of `aidp mcp` (aidp.integrate_mcp). With `remove`, a snippet and a
    server found are always taken out. Every file is checked before any is written: a
    refusal (a link, a file aidp cannot parse or edit) leaves all of them as they were."""
    if not check:
        token = _CHECKING.set(True)
        try:
            _setup(root, name, remove=remove, check=False, instructions=instructions,
                   limit=limit, mcp=mcp)
        finally:
            _CHECKING.reset(token)
    return _setup(root, name, remove=remove, check=check, instructions=instructions,
                  limit=limit, mcp=mcp)


def _setup(root: Path, name: str, *, remove: bool, check: bool, instructions: bool,
           limit: int | None, mcp: bool) -> Result:
    spec = agent(name)
    path = root / spec.settings
    inside_project(root, path)
    data = load_settings(root, path)
    result = Result(agent=spec.name, path=path, changed=False, events=list(spec.matchers))
    if check:
        present = installed(data, spec, limit)
        result.missing = [e for e in spec.matchers if e not in present]
    else:
        new = merged(data, spec, remove=remove, limit=limit)
        if new != data:
            if remove and not new and path.exists():
                remove_settings(root, path)  # nothing but aidp's hooks was in it
            else:
                write_settings(root, path, dump_settings(new))
            result.changed = True
    if instructions or remove:
        from aidp.integrate_snippet import instructions as snippet

        where, snippet_changed, snippet_present = snippet(root, spec, remove=remove,
                                                          check=check)
        result.instructions = where if (instructions or snippet_changed) else None
        result.instructions_changed = snippet_changed
        result.instructions_present = snippet_present
    if mcp or remove:
        from aidp.integrate_mcp import register

        result.server = register(root, spec.name, remove=remove, check=check)
    return result
