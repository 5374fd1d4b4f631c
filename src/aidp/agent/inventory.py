"""`aidp agents`: the presets, whether each agent CLI is installed, which version, and
whether that version is the one the real-agent suite verified. Core: returns values.

A version is read without starting the CLI wherever possible: an npm package's
`package.json` next to the program PATH finds, or a Python package's metadata in the
program's own virtual environment. Only where neither exists, and only for CLIs whose
`--version` answers from the program itself (no network, no account), is the CLI
asked, with a short timeout, its input closed and its update checks and telemetry
off. Codex is never started: without a configuration of yours it calls its vendor.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from aidp.agent import agents
from aidp.agent.agents.base import Adapter
from aidp.agent.agents.verified import VERIFIED

VERSION_TIMEOUT = 5.0
# Every adapter's quiet variables, for any CLI asked (one CLI's variable is nothing to
# another): no update check, no telemetry while it answers `--version`.
_QUIET_ENV = {name: value for adapter in agents.adapters()
              for name, value in adapter.quiet_env.items()}
_VERSION = re.compile(r"\b(\d+\.\d+(?:\.\d+)?(?:[-.+][0-9A-Za-z.]+)?)\b")


@dataclass(frozen=True)
class AgentInfo:
    name: str
    command: str  # the preset's command line
    program: str
    path: str | None  # where PATH finds the program; None: not installed
    version: str | None
    version_from: str | None  # "package.json", "package metadata", "--version"
    verified_version: str | None  # what the real-agent suite verified, if it covers it
    verified: bool  # installed at exactly the verified version

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["installed"] = self.path is not None
        return data


def survey(*, env: dict[str, str] | None = None, ask: bool = True) -> list[AgentInfo]:
    """Every preset, in `aidp run --agent` order. `ask=False` never starts a program."""
    environment = dict(os.environ if env is None else env)
    found = []
    for adapter in agents.adapters():
        program = adapter.program
        path = shutil.which(program, path=environment.get("PATH"))
        pin = VERIFIED.get(adapter.name)
        version, source = (None, None)
        if path is not None:
            version, source = installed_version(adapter, path, pin, environment, ask=ask)
        verified_version = pin[2] if pin else None
        found.append(AgentInfo(
            name=adapter.name, command=adapter.preset, program=program, path=path,
            version=version, version_from=source, verified_version=verified_version,
            verified=version is not None and version == verified_version,
        ))
    return found


def installed_version(adapter: Adapter, path: str, pin: tuple[str, str, str] | None,
                      env: dict[str, str], *, ask: bool) -> tuple[str | None, str | None]:
    """(version, where it was read) for the program at `path`. Its `--version` is asked
    only where the adapter says the program answers it alone (`version_from_cli`)."""
    if pin is not None and pin[0] == "npm":
        version = npm_version(Path(path), pin[1])
        if version is not None:
            return version, "package.json"
    if pin is not None and pin[0] == "pip":
        version = pip_version(Path(path), pin[1])
        if version is not None:
            return version, "package metadata"
    if ask and adapter.version_from_cli:
        version = ask_version(path, env)
        if version is not None:
            return version, "--version"
    return None, None


def npm_version(program: Path, package: str) -> str | None:
    """The version in the package.json of `package` that holds the program (npm's bin
    folder links into the package)."""
    try:
        target = program.resolve()
    except OSError:
        return None
    for folder in target.parents:
        manifest = folder / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            if isinstance(data, dict) and data.get("name") == package:
                version = data.get("version")
                return version if isinstance(version, str) else None
        if folder.name == "node_modules":
            break
    return None


def pip_version(program: Path, package: str) -> str | None:
    """The version in the metadata of `package` installed in the program's virtual
    environment (a console script sits in <venv>/bin)."""
    venv = program.parent.parent
    wanted = re.sub(r"[-_.]+", "_", package).lower()
    for site in [*sorted(venv.glob("lib/python3*/site-packages")), venv / "Lib/site-packages"]:
        if not site.is_dir():
            continue
        for meta in site.glob("*.dist-info/METADATA"):
            folder = meta.parent.name.removesuffix(".dist-info").rsplit("-", 1)[0]
            if re.sub(r"[-_.]+", "_", folder).lower() != wanted:
                continue
            try:
                for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
            except OSError:
                return None
    return None


def ask_version(path: str, env: dict[str, str]) -> str | None:
    """`PROGRAM --version`, briefly, with nothing on its stdin."""
    try:
        result = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT,
            stdin=subprocess.DEVNULL, env={**env, **_QUIET_ENV}, errors="replace",
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    match = _VERSION.search(result.stdout)
    return match.group(1) if match else None
