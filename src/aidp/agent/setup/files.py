"""The files `aidp setup` edits, and what it writes for each agent.

`AgentSettings`: what setup writes for one agent, as its adapter says; the settings
helpers read and write a project's JSON or text settings file safely: never through a
link, never from a FIFO, atomically, and not at all while `checking()` (setup checks
every file it would change before changing any). Used by aidp.agent.setup.integrate (hooks),
aidp.agent.setup.snippet (instructions) and aidp.agent.setup.mcp (MCP servers).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from aidp.agent import agents
from aidp.core.errors import AidpError, InvalidInput
from aidp.tasklist import files

if TYPE_CHECKING:
    from aidp.agent.agents.base import Adapter


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
    mcp_allow: str | None = None  # the rule allowing one MCP tool in `settings`
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
            names=dict(setup.hook_names), mcp_entry=dict(setup.mcp_entry),
            mcp_allow=setup.mcp_allow, note=setup.note)


# The agents `aidp setup` serves, from the adapters' registry.
AGENTS: dict[str, AgentSettings] = {
    spec.name: spec for spec in map(AgentSettings.of, agents.hooked()) if spec is not None}


class SettingsError(AidpError):
    """A settings or instructions file aidp will not edit; it is left as it was."""

    exit_code = InvalidInput.exit_code


def agent(name: str) -> AgentSettings:
    found = AGENTS.get(name.strip().lower())
    if found is None:
        raise InvalidInput(f"Unknown agent {name!r}: use one of {', '.join(AGENTS)}")
    return found



# --- reading and writing ------------------------------------------------------------


def inside_project(root: Path, path: Path) -> None:
    """Refuse a file that is a link, or lies below a linked folder, anywhere under the
    project root (aidp.tasklist.files): a cloned repository may plant `.claude -> ~/.claude` or
    `CLAUDE.md -> ~/.bashrc`, and setup must never edit anything through it; a FIFO or
    device is refused too (aidp.agent.setup.mcp uses it as well). StorageError, exit 1."""
    relative = path.relative_to(root)
    parent = files.present_folder(root, relative.parent)
    if parent is None:
        return  # a missing folder on the way is made when the file is written
    with parent:
        parent.require_regular(relative.name)


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
    from aidp.tasklist.line import MAX_DEPTH, too_deep

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


def dump_settings(data: dict[str, Any], like: bytes | None = None) -> bytes:
    """JSON settings as setup writes them: in the style of the file they replace
    (`like`) when one of the common styles gives that file back byte for byte —
    compact or indented by 2, 4 or a tab, with or without a final newline, non-ASCII
    escaped or not —, else two-space indents and a final newline. So a setup keeps a
    compact file compact, and `--remove` gives it back as it was."""
    style = _style_of(like) if like else None
    if style is None:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    return _dumped(data, style)


# (indent, item separator, key separator, ASCII only, final newline)
_Style = tuple[int | str | None, str, str, bool, bool]
_LAYOUTS: list[tuple[int | str | None, str, str]] = [
    (2, ",", ": "), (4, ",", ": "), ("\t", ",", ": "), (None, ",", ":"), (None, ", ", ": ")]
_STYLES: list[_Style] = [(indent, item, key, ascii_only, newline)
                         for indent, item, key in _LAYOUTS
                         for ascii_only in (False, True) for newline in (True, False)]


def _dumped(data: object, style: _Style) -> bytes:
    import json

    indent, item, key, ascii_only, newline = style
    text = json.dumps(data, indent=indent, separators=(item, key), ensure_ascii=ascii_only)
    return (text + ("\n" if newline else "")).encode("utf-8")


def _style_of(raw: bytes) -> _Style | None:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return next((style for style in _STYLES if _dumped(data, style) == raw), None)


# True while `setup` checks every file it would change before changing any: the writers
# below then only refuse what they would refuse, and write nothing.
_CHECKING: ContextVar[bool] = ContextVar("aidp_setup_checking", default=False)


@contextmanager
def checking() -> Iterator[None]:
    """Within it, the writers below refuse what they would refuse and write nothing."""
    token = _CHECKING.set(True)
    try:
        yield
    finally:
        _CHECKING.reset(token)


def _would_write(root: Path, path: Path) -> None:
    """Refuse now what writing `path` would refuse (a link on the way or there, a FIFO,
    a file in a folder's place); folders still to be made are fine."""
    relative = path.relative_to(root)
    parent = files.present_folder(root, relative.parent)
    if parent is None:
        return  # folders still to be made
    with parent:
        _regular_or_none(parent, relative.name)


def write_settings(root: Path, path: Path, body: bytes) -> None:
    """Replace `path` with `body` atomically (a temp file, then renamed, keeping its
    mode) without following a link anywhere below the project root: aidp.tasklist.files refuses
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
    """Delete the file (a link, a FIFO or a device there is refused, never removed), and
    its folder below the project root when that leaves it empty (`.claude/`, made by
    setup for the file): never a folder that holds anything, never through a link."""
    if _CHECKING.get():
        return _would_write(root, path)
    relative = path.relative_to(root)
    with files.folder(root, relative.parent) as folder:
        _regular_or_none(folder, relative.name)  # a link or a FIFO is refused
        folder.unlink(relative.name)
    if relative.parent != Path("."):
        with files.folder(root, relative.parent.parent) as above:
            try:  # rmdir removes only an empty folder, and never follows a link
                os.rmdir(relative.parent.name, dir_fd=above.fd)
            except OSError:
                pass  # it holds something else: it stays


def _regular_or_none(folder: files.Folder, name: str) -> os.stat_result | None:
    """What `name` is (None: missing); a link, FIFO or device there is refused."""
    return folder.require_regular(name)
