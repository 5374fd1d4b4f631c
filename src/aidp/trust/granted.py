"""The trust store: which project config files the user trusted, by content hash, in
`$XDG_CONFIG_HOME/aidp/trust.json` (outside every repository). Read on every gated
config value, changed only by `aidp trust` under a lock. aidp.trust.gate decides what needs
trust; this module only keeps the record."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aidp.core.errors import ConfigError

STORE_NAME = "trust.json"
STORE_VERSION = 1


def config_dir() -> Path:
    """aidp's own folder in the user's config dir (XDG; a relative XDG_CONFIG_HOME is
    ignored, as the spec says)."""
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / "aidp"


def store_path() -> Path:
    return config_dir() / STORE_NAME


# --- the trust store --------------------------------------------------------------------------


def read_store() -> dict[str, dict[str, Any]]:
    """file key → {"sha256", "trusted_at"}; {} when there is no store yet."""
    path = store_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"Cannot read the trust store {path}: {exc.strerror or exc}; "
                          "nothing was run") from None
    return _parse_store(raw, path)


def _parse_store(raw: bytes, path: Path) -> dict[str, dict[str, Any]]:
    bad = (f"Invalid trust store {path}: {{}}; nothing was run or changed — fix it, or "
           "remove it and run 'aidp trust' again where you trust a config")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(bad.format(f"not JSON ({exc})")) from None
    if not isinstance(data, dict) or data.get("version") != STORE_VERSION:
        raise ConfigError(bad.format(f"expected an object with \"version\": {STORE_VERSION}"))
    files = data.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("sha256"), str)
        and isinstance(v.get("files", {}), dict) for v in files.values()
    ):
        raise ConfigError(bad.format('"files" must map each file to {"sha256": …}'))
    return files


def update_store(change: Callable[[dict[str, dict[str, Any]]], None]) -> None:
    """Read, change and atomically replace the store under a lock, so two `aidp trust`
    at once lose nothing; a malformed store is refused, never overwritten."""
    import fcntl
    import tempfile

    path = store_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        lock = os.open(path.with_name(STORE_NAME + ".lock"),
                       os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError as exc:
        raise ConfigError(f"Cannot write the trust store in {path.parent}: "
                          f"{exc.strerror or exc}") from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        files = read_store()
        change(files)
        body = json.dumps({"version": STORE_VERSION, "files": files}, indent=2,
                          ensure_ascii=False, sort_keys=True) + "\n"
        try:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trust.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(body)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp, path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError as exc:
            raise ConfigError(f"Cannot write the trust store {path}: "
                              f"{exc.strerror or exc}; it was left as it was") from None
    finally:
        os.close(lock)
