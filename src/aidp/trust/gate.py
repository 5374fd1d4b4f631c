"""What a repository may make aidp do: reading `.aidp/config.toml` behind a trust gate.

A clone of someone else's project brings its `.aidp/config.toml`. Naming a built-in
agent preset there is harmless; a command line (or anything else that starts a
process or changes what is started) runs only after the user ran `aidp trust` on that
exact file content. Trust is a SHA-256 of the file's bytes recorded per file in the
user's config dir ($XDG_CONFIG_HOME/aidp/trust.json, else ~/.config/aidp/trust.json),
outside every repository; a changed file needs trust again.

A git-ignored `.aidp/config.local.toml` is the user's own: it needs no trust and wins
over config.toml. One that git does not ignore (committed, or no git to ask) is
treated like config.toml.

Every reader of these files goes through `load()`; `Config.get` is default-deny: a
value from an untrusted file raises `Untrusted` unless `INERT` says its key and value
can never start a process. New settings are therefore gated without their reader
doing anything (see docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aidp.core.errors import ConfigError, InvalidInput
from aidp.tasklist.git_runner import ignores
from aidp.tasklist.paths import DATA_DIR
from aidp.trust.granted import (
    read_store,
    update_store,
)

if TYPE_CHECKING:
    from aidp.trust.scope import Scope

CONFIG_NAME = "config.toml"
LOCAL_NAME = "config.local.toml"


class Untrusted(InvalidInput):
    """A value from an untrusted repository config would start a process (exit 2)."""


def _is_preset_name(value: object, presets: Collection[str]) -> bool:
    return isinstance(value, str) and value.strip().lower() in {p.lower() for p in presets}


# Settings a repository may set without trust: key path → "this value starts nothing
# the user did not choose". Everything else read from an untrusted file is refused.
# Add a line here for a setting that can never start or change a process. The checks
# get the preset names of the agent layer, which the callers of `load`, `trust` and
# `status` pass in (`aidp.agent.presets.PRESETS`): this module knows no agent.
INERT: dict[tuple[str, ...], Callable[[object, Collection[str]], bool]] = {
    ("agent",): _is_preset_name,
    # how long a claim holds (docs/guide.md, "Leases"): a duration, never a process
    ("lease",): lambda value, presets: isinstance(value, str),
}


def is_inert(keys: tuple[str, ...], value: object, presets: Collection[str]) -> bool:
    check = INERT.get(keys)
    return check is not None and check(value, presets)


# --- where things live ------------------------------------------------------------------


def config_files(root: Path) -> tuple[Path, Path]:
    """(config.local.toml, config.toml) of the project at `root`."""
    folder = root / DATA_DIR
    return folder / LOCAL_NAME, folder / CONFIG_NAME


def _key_of(path: Path) -> str:
    """How the trust store names a file: its real folder (a linked .aidp/ is followed,
    as the tasklist's is) and its name."""
    return str(Path(os.path.realpath(path.parent)) / path.name)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- reading the config -------------------------------------------------------------------


@dataclass(frozen=True)
class Layer:
    """One config file as read: its bytes' hash, its settings, and whether it is the
    user's own (no trust needed)."""

    path: Path
    shown: str  # ".aidp/config.toml"
    sha256: str
    data: dict[str, Any]
    own: bool  # the user's own file: a git-ignored config.local.toml
    presets: frozenset[str]  # the agent preset names (an `agent` naming one is inert)


@dataclass(frozen=True)
class Described:
    """A setting as `Config.describe` shows it."""

    text: str  # "the agent command 'python3 x.py'", "agents.claude.args = [...]"
    source: str  # ".aidp/config.toml"
    allowed: bool  # get() would return it: the user's own, inert, or trusted


@dataclass
class Config:
    """The project's settings: config.local.toml over config.toml, gated by trust."""

    root: Path
    layers: list[Layer]
    _store: dict[str, Any] | None = field(default=None, repr=False)
    # each file's verdict, once per command: checking lists folders and runs git
    _verdicts: dict[Path, str | None] = field(default_factory=dict, repr=False)

    def get(self, *keys: str) -> object | None:
        """The value at `keys` (`get("agent")`, `get("agents", "claude", "args")`) from
        the first file that sets it, or None. A value from a file the user has not
        trusted is refused with `Untrusted` unless `INERT` lets that key hold it."""
        for layer in self.layers:
            value = _lookup(layer.data, keys)
            if value is None:
                continue
            if not layer.own and not is_inert(keys, value, layer.presets):
                self._require_trust(layer, keys, value)
            return value
        return None

    def source(self, *keys: str) -> str | None:
        """Which file sets `keys` (".aidp/config.local.toml" or ".aidp/config.toml")."""
        for layer in self.layers:
            if _lookup(layer.data, keys) is not None:
                return layer.shown
        return None

    def describe(self, *keys: str) -> Described | None:
        """How the setting at `keys` reads, for showing it (`aidp agents`, `doctor`):
        a description, not the value, so nothing can start it by mistake. None when no
        file sets it. Never raises Untrusted."""
        for layer in self.layers:
            value = _lookup(layer.data, keys)
            if value is None:
                continue
            allowed = (layer.own or is_inert(keys, value, layer.presets)
                       or self.is_trusted(layer))
            return Described(text=describe(keys, value), source=layer.shown, allowed=allowed)
        return None

    def is_trusted(self, layer: Layer) -> bool:
        return self._distrust(layer) is None

    def _distrust(self, layer: Layer) -> str | None:
        """None when `layer` may be used; else why not, for the error message."""
        if layer.own:
            return None
        if layer.path not in self._verdicts:
            self._verdicts[layer.path] = self._check(layer)
        return self._verdicts[layer.path]

    def _check(self, layer: Layer) -> str | None:
        from aidp.trust import scope as scope_module

        entry = self._trust_store().get(_key_of(layer.path))
        if entry is None:
            return "this file is not trusted"
        if entry.get("sha256") != layer.sha256:
            return "this file has changed since you trusted it"
        recorded = entry["files"] if isinstance(entry.get("files"), dict) else {}
        try:
            now = covered(self.root, layer, entry)
        except scope_module.TooWide as exc:
            return f"what it runs is no longer covered by trust ({exc})"
        if now.folders and not isinstance(entry.get("folders"), list):
            return ("trust now covers the folder of the script it runs "
                    f"({', '.join(map(scope_module.shown_folder, now.folders))}), which was not "
                    "checked when you trusted it")
        changed = sorted(name for name in recorded.keys() | now.files.keys()
                         if recorded.get(name) != now.files.get(name))
        if not changed:
            return None
        name = changed[0]
        role = "which it runs" if name in now.named else "which the script it runs can load"
        what = ("has changed" if name in recorded and name in now.files else
                "appeared" if name in now.files else "is gone")
        more = f" (and {len(changed) - 1} more)" if len(changed) > 1 else ""
        return f"{name}, {role}, {what} since you trusted it{more}"

    def _trust_store(self) -> dict[str, Any]:
        if self._store is None:
            self._store = read_store()
        return self._store

    def _require_trust(self, layer: Layer, keys: tuple[str, ...], value: object) -> None:
        why = self._distrust(layer)
        if why is None:
            return
        what = describe(keys, value)
        instead = (" (or choose your own agent with --agent or AIDP_AGENT)"
                   if keys == ("agent",) else
                   f" (or set it yourself in a git-ignored {DATA_DIR}/{LOCAL_NAME})")
        raise Untrusted(
            f"Not started: {layer.shown} sets {what}, and {why}. Review it, then run "
            f"'aidp trust' to allow it{instead}"
        )


def _lookup(data: dict[str, Any], keys: tuple[str, ...]) -> object | None:
    value: object = data
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def describe(keys: tuple[str, ...], value: object) -> str:
    """A value as the user should see it before it runs: the agent's command line as a
    shell would show it, anything else as `key = value`."""
    if keys == ("agent",):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return f"the agent command {shlex.join(value)!r}"
        if isinstance(value, str):
            return f"the agent command {value.strip()!r}"
    return f"{'.'.join(keys)} = {json.dumps(value, ensure_ascii=False, default=str)}"


def load(root: Path, *, presets: Collection[str]) -> Config:
    """Read the project's config files (none is fine). A file that cannot be read or
    parsed is a ConfigError; the trust store is read only when a value needs it.
    `presets`: the agent preset names, which `agent` may name without trust."""
    local, shared = config_files(root)
    layers = []
    for path in (local, shared):
        read = _read(path)
        if read is None:
            continue
        raw, data = read
        own = path == local and ignores(root, path)
        layers.append(Layer(path=path, shown=f"{DATA_DIR}/{path.name}", sha256=digest(raw),
                            data=data, own=own, presets=frozenset(presets)))
    return Config(root=root, layers=layers)


def _read(path: Path) -> tuple[bytes, dict[str, Any]] | None:
    """(bytes, settings) of one config file, or None when there is none. Never through
    a symbolic link: a clone could point one anywhere."""
    from aidp.core.toml_text import Unparsable, parse

    shown = f"{DATA_DIR}/{path.name}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise ConfigError(
                f"Cannot read {shown}: it is a symbolic link, and aidp reads no config "
                "through a link; replace it with the file itself"
            ) from None
        raise ConfigError(f"Cannot read {shown}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read()
    except OSError as exc:  # a folder named like the file, an I/O error
        raise ConfigError(f"Cannot read {shown}: {exc.strerror or exc}") from None
    try:
        data = parse(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"Invalid {shown}: it is not UTF-8 text; nothing was run") from None
    except Unparsable as exc:
        raise ConfigError(f"Invalid {shown}: {exc}; nothing was run") from None
    return raw, data


# --- what `aidp trust` shows ---------------------------------------------------------------


def _gated(layer: Layer) -> Iterator[tuple[tuple[str, ...], object]]:
    """(keys, value) of every setting in `layer` that needs trust, as `get` names them."""

    def walk(keys: tuple[str, ...], value: object) -> Iterator[tuple[tuple[str, ...], object]]:
        if isinstance(value, dict) and value and keys not in INERT:
            for key, sub in value.items():
                yield from walk((*keys, key), sub)
        elif not is_inert(keys, value, layer.presets):
            yield keys, value

    for key, value in layer.data.items():
        yield from walk((key,), value)


def gated_settings(layer: Layer) -> Iterator[str]:
    """Every setting in `layer` that needs trust, described for people."""
    return (describe(keys, value) for keys, value in _gated(layer))


def covered(root: Path, layer: Layer, known: dict[str, Any] | None = None) -> Scope:
    """What the gated settings of `layer` can load (aidp.trust.scope): the project files
    they name and, for a script, its folder. Trusting a command that runs a file of the
    repository means trusting that file and what it loads: a pull that changes any of
    it needs `aidp trust` again, like a change to the config. Raises TooWide."""
    from aidp.trust.scope import scope  # (only a file to trust: not for every claim)

    return scope(root, (value for _, value in _gated(layer)), known)


def referenced_files(root: Path, layer: Layer) -> dict[str, str]:
    """Every project file trusting `layer` covers: path → digest."""
    return covered(root, layer).files


@dataclass(frozen=True)
class Trusted:
    """What `aidp trust` did for one file."""

    shown: str
    sha256: str
    settings: list[str]
    already: bool
    files: list[str]  # project files its commands name, trusted with it
    folders: dict[str, int]  # the folders of the scripts they run (files in each)


@dataclass(frozen=True)
class Review:
    """What `aidp trust` would record, as it was read and shown: `record()` records
    exactly that (a file changed since is not trusted by it)."""

    items: list[Trusted]
    records: dict[str, dict[str, Any]]  # trust store key → what is recorded

    @property
    def needed(self) -> bool:
        """Whether anything is not trusted yet as it is now."""
        return any(not item.already for item in self.items)

    def record(self) -> None:
        """Record the trust; refused (NotAPerson) in a process an agent runs under."""
        from datetime import UTC, datetime

        from aidp.trust.person import refuse_agent

        refuse_agent()
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        def record(files: dict[str, dict[str, Any]]) -> None:
            for key, entry in self.records.items():
                files[key] = {"sha256": entry["sha256"], "trusted_at": stamp,
                              **{k: v for k, v in entry.items() if k != "sha256"}}

        update_store(record)


def review(root: Path, *, presets: Collection[str]) -> Review:
    """What trusting the project's config files that need trust (the ones read now)
    would record, nothing recorded yet; no items when there are none."""
    config = load(root, presets=presets)
    layers = [layer for layer in config.layers if not layer.own]
    if not layers:
        return Review([], {})
    store = config._trust_store()
    named = {layer.path: covered(root, layer, store.get(_key_of(layer.path)))
             for layer in layers}
    items = [
        Trusted(shown=layer.shown, sha256=layer.sha256, settings=list(gated_settings(layer)),
                already=config.is_trusted(layer), files=sorted(named[layer.path].named),
                folders=named[layer.path].folders)
        for layer in layers
    ]
    records = {_key_of(layer.path): {"sha256": layer.sha256, **named[layer.path].record()}
               for layer in layers}
    return Review(items, records)


def trust(root: Path, *, presets: Collection[str]) -> list[Trusted]:
    """Trust the exact content of the project's config files that need trust (the ones
    read now: what was shown is what is trusted). [] when there are none. Refused
    (NotAPerson) in a process an agent runs under; asking the person is the CLI's."""
    found = review(root, presets=presets)
    if found.items:
        found.record()
    return found.items


def revoke(root: Path) -> list[str]:
    """Forget the trust of this project's config files; the files it forgot (shown)."""
    local, shared = config_files(root)
    names = {_key_of(path): f"{DATA_DIR}/{path.name}" for path in (local, shared)}
    if not any(key in read_store() for key in names):
        return []
    forgotten: list[str] = []

    def forget(files: dict[str, dict[str, Any]]) -> None:
        for key, shown in names.items():
            if files.pop(key, None) is not None:
                forgotten.append(shown)

    update_store(forget)
    return forgotten


def status(root: Path, *, presets: Collection[str]) -> list[tuple[Layer, bool, list[str]]]:
    """(file, trusted?, settings that need trust) for each config file of the project."""
    config = load(root, presets=presets)
    return [(layer, config.is_trusted(layer), list(gated_settings(layer)))
            for layer in config.layers]
