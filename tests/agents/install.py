"""Install the agent CLIs the real-agent suite drives, at the versions pinned in
tests/agents/versions.toml, into $AIDP_AGENTS_HOME (default: .agents/ in the repository,
git-ignored):

    $AIDP_AGENTS_HOME/npm/node_modules/.bin/{claude,codex,gemini,opencode,copilot}
    $AIDP_AGENTS_HOME/aider/bin/aider          (a virtualenv holding aider-chat)

    python tests/agents/install.py             install what is missing or at another version
    python tests/agents/install.py --upgrade   ask the registries for the latest versions,
                                               rewrite versions.toml, install them
    python tests/agents/install.py --check     only report (exit 1 when something differs)
    python tests/agents/install.py --only claude,codex

Only the package managers' own clients talk to the registries (npm, pip). No CLI is
started here: versions are read from the installed package metadata. npm runs no
install scripts (--ignore-scripts); the CLIs that need their own (Claude Code and
opencode, whose `bin/*.exe` is a placeholder until their script copies the native binary
over it from the platform package npm already installed — a local copy, no download)
get just that script run by name afterwards (POSTINSTALL below).

Exit codes: 0 everything asked for is installed; 1 something failed or differs
(--check); 75 nothing could be installed (no npm/node, no network): the suite then
skips with that reason.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import VERSIONS_FILE, agents_home, installed_version, pinned

CANNOT_INSTALL = 75  # EX_TEMPFAIL: the suite skips
TIMEOUT = 1200


FAILURES: list[str] = []  # why each install failed, for the one-line summary


def say(text: str) -> None:
    print(f"install.py: {text}", file=sys.stderr, flush=True)


def failed(text: str) -> None:
    FAILURES.append(text)
    say(text)


def run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT,
                          check=False, **kwargs)  # type: ignore[call-overload]


# --- latest versions (for --upgrade) -----------------------------------------------------


def latest_npm(package: str) -> str:
    result = run(["npm", "view", package, "version", "--json"])
    if result.returncode != 0:
        raise RuntimeError(f"npm view {package} failed: {_last_line(result.stderr)}")
    value = json.loads(result.stdout)
    return value[-1] if isinstance(value, list) else str(value)


def latest_pip(package: str) -> str:
    result = run([sys.executable, "-m", "pip", "index", "versions", package])
    match = re.search(rf"^{re.escape(package)} \(([^)]+)\)", result.stdout, re.MULTILINE)
    if result.returncode != 0 or match is None:
        raise RuntimeError(f"pip index versions {package} failed: {_last_line(result.stderr)}")
    return match.group(1)


def rewrite_pins(new: dict[str, str]) -> None:
    """Change the `version = "…"` line of each [cli.NAME] section, keeping the rest."""
    text = VERSIONS_FILE.read_text()
    for cli, version in new.items():
        pattern = re.compile(
            rf'(\[cli\.{re.escape(cli)}\][^\[]*?^version = )"[^"]*"', re.MULTILINE | re.DOTALL
        )
        text, count = pattern.subn(rf'\g<1>"{version}"', text)
        if count != 1:
            raise RuntimeError(f"cannot find the version of [cli.{cli}] in {VERSIONS_FILE}")
    VERSIONS_FILE.write_text(text)
    rewrite_verified(new)


# aidp's own copy of the pins (`aidp agents` says whether an installed CLI is the version
# this suite verified); tests/agent/test_inventory.py holds the two equal.
VERIFIED_FILE = Path(__file__).parents[2] / "src" / "aidp" / "agent" / "agents" / "verified.py"


def rewrite_verified(new: dict[str, str]) -> None:
    text = VERIFIED_FILE.read_text()
    for cli, version in new.items():
        pattern = re.compile(rf'^(    "{re.escape(cli)}": \("[^"]*", "[^"]*", )"[^"]*"', re.MULTILINE)
        text, count = pattern.subn(rf'\g<1>"{version}"', text)
        if count != 1:
            raise RuntimeError(f"cannot find the version of {cli} in {VERIFIED_FILE}")
    VERIFIED_FILE.write_text(text)


# --- installing ----------------------------------------------------------------------------


def install_npm(home: Path, wanted: dict[str, dict[str, str]]) -> list[str]:
    """npm install --prefix home/npm pkg@version …; returns the CLIs that failed."""
    if not wanted:
        return []
    if shutil.which("npm") is None or shutil.which("node") is None:
        failed("npm/node is not installed")
        return list(wanted)
    prefix = home / "npm"
    prefix.mkdir(parents=True, exist_ok=True)
    specs = [f"{info['package']}@{info['version']}" for info in wanted.values()]
    say(f"npm install {' '.join(specs)} (into {prefix})")
    result = run(["npm", "install", "--prefix", str(prefix), "--save-exact", "--no-audit",
                  "--no-fund", "--ignore-scripts", "--loglevel=error", *specs])
    if result.returncode != 0:
        failed(f"npm install failed: {_last_line(result.stderr)}")
        return list(wanted)
    return []


# Local postinstall steps a CLI cannot run without: package → (script, the file it
# replaces). Each was read before being listed here; none reaches the network.
POSTINSTALL = {
    "@anthropic-ai/claude-code": ("install.cjs", "bin/claude.exe"),
    "opencode-ai": ("postinstall.mjs", "bin/opencode.exe"),
}
PLACEHOLDER_MAX = 64 * 1024  # the placeholders are tiny shell scripts; the binaries are MBs


def needs_postinstall(home: Path, package: str) -> bool:
    """The package is installed but its executable is still the placeholder."""
    if package not in POSTINSTALL:
        return False
    target = home / "npm" / "node_modules" / package / POSTINSTALL[package][1]
    try:
        return target.stat().st_size < PLACEHOLDER_MAX
    except OSError:
        return False


def finish_npm(home: Path, pins: dict[str, dict[str, str]], names: list[str]) -> list[str]:
    """Run the listed postinstall scripts where the placeholder is still in place;
    returns the CLIs whose script failed."""
    broken = []
    for name in names:
        package = pins[name]["package"]
        if not needs_postinstall(home, package):
            continue
        folder = home / "npm" / "node_modules" / package
        script = POSTINSTALL[package][0]
        say(f"node {script} (in {folder})")
        result = run(["node", script], cwd=folder)
        if result.returncode != 0 or needs_postinstall(home, package):
            failed(f"{package}: {script} failed: {_last_line(result.stderr)}")
            broken.append(name)
    return broken


def install_aider(home: Path, info: dict[str, str]) -> bool:
    venv = home / "aider"
    python = venv / "bin" / "python"
    if not python.exists():
        say(f"python -m venv {venv}")
        result = run([sys.executable, "-m", "venv", str(venv)])
        if result.returncode != 0:
            failed(f"cannot create the aider virtualenv: {_last_line(result.stderr)}")
            return False
    spec = f"{info['package']}=={info['version']}"
    say(f"pip install {spec} (into {venv})")
    result = run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", spec])
    if result.returncode != 0:
        failed(f"pip install {spec} failed: {_last_line(result.stderr)}")
        return False
    return True


def _last_line(text: str) -> str:
    """The line of a tool's stderr that says what went wrong."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    useful = [line for line in lines if "complete log of this run" not in line
              and not line.startswith("npm warn")]
    errors = [line for line in useful if "error" in line.lower()]
    return (errors or useful or ["no output"])[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=None,
                        help="where to install (default: $AIDP_AGENTS_HOME, else .agents/)")
    parser.add_argument("--only", default="", help="comma-separated CLI names")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--upgrade", action="store_true",
                      help="pin the registries' latest versions, then install them")
    mode.add_argument("--check", action="store_true", help="report only; exit 1 on a difference")
    args = parser.parse_args(argv)

    home = (args.home or agents_home()).expanduser().resolve()
    pins = pinned()
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(pins)
    unknown = [n for n in names if n not in pins]
    if unknown:
        parser.error(f"unknown CLI {', '.join(unknown)}; known: {', '.join(pins)}")

    if args.upgrade:
        new: dict[str, str] = {}
        for name in names:
            info = pins[name]
            try:
                latest = (latest_npm if info["manager"] == "npm" else latest_pip)(info["package"])
            except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as exc:
                say(f"cannot ask for the latest {info['package']}: {exc}")
                return 1
            if latest != info["version"]:
                say(f"{name}: {info['version']} → {latest}")
                new[name] = latest
        if new:
            rewrite_pins(new)
            pins = pinned()
        else:
            say("every pin is already the latest version")

    differs = {n: pins[n] for n in names if installed_version(n, home) != pins[n]["version"]
               or needs_postinstall(home, pins[n]["package"])}
    for name in names:
        have = installed_version(name, home)
        state = "ok" if name not in differs else f"installed {have or 'nothing'}"
        say(f"{name:9} {pins[name]['package']}@{pins[name]['version']}: {state}")
    if args.check:
        return 1 if differs else 0
    if not differs:
        return 0

    failed = install_npm(home, {n: i for n, i in differs.items() if i["manager"] == "npm"})
    failed += finish_npm(home, pins, [n for n in differs if pins[n]["manager"] == "npm"])
    if "aider" in differs and not install_aider(home, differs["aider"]):
        failed.append("aider")
    still = [n for n in names if installed_version(n, home) != pins[n]["version"]
             or needs_postinstall(home, pins[n]["package"])]
    if not still:
        say(f"installed into {home}")
        return 0
    if len(still) == len(names) and all(installed_version(n, home) is None for n in names):
        say(f"cannot install any agent CLI: {'; '.join(FAILURES) or 'see above'}")
        return CANNOT_INSTALL
    say(f"not at the pinned version: {', '.join(still)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
