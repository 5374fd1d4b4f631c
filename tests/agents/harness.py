"""The real-agent suite's harness: where the CLIs are, and a hermetic world per test.

`AgentWorld` is one test's world: a HOME, XDG folders and the CLI's own home inside
the test's tmp dir, config files pointing the CLI at the fake model server on
127.0.0.1 (telemetry and update checks off), a git project with `aidp init`, and a
PATH built from parts the test chose (this venv's bin for `aidp`, the CLI's bin,
node's folder, /usr/bin:/bin) — never the machine's PATH.

The configuration is always written before any CLI is started: `AgentWorld.run`
refuses to start when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from fakemodel import MODEL, FakeModelServer

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VERSIONS_FILE = HERE / "versions.toml"
API_KEY = "sk-fake-aidp-test-key"
RUN_TIMEOUT = 240.0  # seconds for one `aidp run` (a 500 with retries is the slowest)

# CLI name → (package manager, package) from versions.toml; the bin each installs.
NPM_BIN = {"claude": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode",
           "copilot": "copilot"}


def agents_home() -> Path:
    """$AIDP_AGENTS_HOME, else .agents/ in the repository (git-ignored)."""
    value = os.environ.get("AIDP_AGENTS_HOME")
    return Path(value).expanduser().resolve() if value else REPO / ".agents"


def pinned() -> dict[str, dict[str, str]]:
    """versions.toml: {cli: {"package", "version", "manager"}}."""
    with open(VERSIONS_FILE, "rb") as handle:
        data = tomllib.load(handle)
    return data["cli"]


def cli_bin(cli: str, home: Path | None = None) -> Path:
    home = home or agents_home()
    if cli == "aider":
        return home / "aider" / "bin" / "aider"
    return home / "npm" / "node_modules" / ".bin" / NPM_BIN[cli]


def installed_version(cli: str, home: Path | None = None) -> str | None:
    """The version installed under the agents home (read from the package metadata,
    never by starting the CLI)."""
    home = home or agents_home()
    info = pinned()[cli]
    if info["manager"] == "npm":
        manifest = home / "npm" / "node_modules" / info["package"] / "package.json"
        try:
            return json.loads(manifest.read_text())["version"]
        except (OSError, ValueError, KeyError):
            return None
    site = sorted((home / "aider" / "lib").glob("python3*/site-packages"))
    for folder in site:
        for meta in folder.glob("aider_chat-*.dist-info/METADATA"):
            for line in meta.read_text(errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    return None


def missing_reason(cli: str) -> str | None:
    """Why `cli` cannot be tested here, or None when it can."""
    if cli != "aider" and shutil.which("node") is None:
        return "node is not installed"
    path = cli_bin(cli)
    if not path.exists():
        return (f"{cli} is not installed under {agents_home()} "
                "(run `make agents`, or set AIDP_AGENTS_HOME)")
    return None


def node_dir() -> str | None:
    node = shutil.which("node")
    return str(Path(node).resolve().parent) if node else None


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    argv: list[str]

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __str__(self) -> str:
        return (f"$ {' '.join(self.argv)}\nexit {self.exit_code}\n--- stdout\n{self.stdout}"
                f"\n--- stderr\n{self.stderr}")


@dataclass
class AgentWorld:
    cli: str
    root: Path  # the test's tmp dir
    server: FakeModelServer
    env: dict[str, str] = field(default_factory=dict)
    configured: bool = False

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    # --- building it ---

    def build(self) -> AgentWorld:
        for folder in (self.home, self.project, self.root / "xdg-config", self.root / "xdg-data",
                       self.root / "xdg-state", self.root / "xdg-cache", self.root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        path = [str(Path(sys.executable).parent), str(cli_bin(self.cli).parent)]
        node = node_dir()
        if node and node not in path:
            path.append(node)
        path += ["/usr/bin", "/bin"]
        self.env = {
            "HOME": str(self.home),
            "USER": "aidp-test",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TMPDIR": str(self.root / "tmp"),
            "PATH": os.pathsep.join(path),
            "XDG_CONFIG_HOME": str(self.root / "xdg-config"),
            "XDG_DATA_HOME": str(self.root / "xdg-data"),
            "XDG_STATE_HOME": str(self.root / "xdg-state"),
            "XDG_CACHE_HOME": str(self.root / "xdg-cache"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "aidp tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
            "GIT_COMMITTER_NAME": "aidp tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
            "AIDP_SESSION": "agent-test",
        }
        # The fake server is the proxy for everything but itself: an attempt to reach
        # any other host is refused and fails the test (FakeModelServer.outside()).
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            self.env[name] = self.env[name.lower()] = self.server.url
        self.env["NO_PROXY"] = self.env["no_proxy"] = "127.0.0.1,localhost"
        getattr(self, f"_configure_{self.cli}")()
        self.configured = True
        self._git("init", "-q", "-b", "main")
        self._git("commit", "-q", "--allow-empty", "-m", "start")
        init = self.aidp("init")
        assert init.exit_code == 0, str(init)
        self._git("add", "-A")
        self._git("commit", "-q", "-m", "aidp init")
        return self

    def _git(self, *args: str) -> None:
        subprocess.run(["git", *args], cwd=self.project, env=self.env, check=True,
                       capture_output=True)

    @property
    def base_url(self) -> str:
        return self.server.url

    def _write(self, path: Path, content: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)

    def _configure_claude(self) -> None:
        self.env.update({
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": API_KEY,
            "CLAUDE_CONFIG_DIR": str(self.home / ".claude"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
        })

    def _configure_codex(self) -> None:
        codex_home = self.home / ".codex"
        self.env.update({"CODEX_HOME": str(codex_home), "FAKE_MODEL_API_KEY": API_KEY})
        self._write(codex_home / "config.toml", f'''\
model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{self.base_url}/v1"
env_key = "FAKE_MODEL_API_KEY"
wire_api = "responses"

# Plugins on (the default) sync a curated plugin list from github.com and chatgpt.com
# at start, even for an API-key provider.
[features]
plugins = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
''')

    def _configure_gemini(self) -> None:
        self.env.update({
            "GEMINI_API_KEY": API_KEY,
            "GOOGLE_GEMINI_BASE_URL": self.base_url,
            "GEMINI_MODEL": "gemini-2.5-pro",
        })
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            # maxAttempts: Gemini retries a 500 ten times over minutes (5 s to 30 s apart);
            # two attempts show the retry and keep the test short.
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True,
                        "enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                        "maxAttempts": 2},
        }
        self._write(self.home / ".gemini" / "settings.json", json.dumps(settings, indent=2))

    def _configure_opencode(self) -> None:
        self.env.update({
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "FAKE_MODEL_API_KEY": API_KEY,
        })
        config = {
            "$schema": "https://opencode.ai/config.json",
            "model": f"fake/{MODEL}",
            "autoupdate": False,
            "share": "disabled",
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "fake",
                "options": {"baseURL": f"{self.base_url}/v1", "apiKey": API_KEY},
                "models": {MODEL: {"name": MODEL, "tool_call": True}},
            }},
        }
        self._write(self.root / "xdg-config" / "opencode" / "opencode.json",
                    json.dumps(config, indent=2))

    def _configure_copilot(self) -> None:
        self.env.update({
            "COPILOT_PROVIDER_BASE_URL": f"{self.base_url}/v1",
            "COPILOT_PROVIDER_API_KEY": API_KEY,
            "COPILOT_MODEL": MODEL,
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_HOME": str(self.home / ".copilot"),
        })

    def _configure_aider(self) -> None:
        self.env.update({
            "OPENAI_API_BASE": f"{self.base_url}/v1",
            "OPENAI_API_KEY": API_KEY,
            "AIDER_MODEL": f"openai/{MODEL}",
            "AIDER_CHECK_UPDATE": "false",
            "AIDER_ANALYTICS_DISABLE": "true",
            "AIDER_SHOW_MODEL_WARNINGS": "false",
            "AIDER_SHOW_RELEASE_NOTES": "false",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        })
        # aider fetches litellm's price map at start unless a copy is in its cache.
        site = sorted((agents_home() / "aider" / "lib").glob("python3*/site-packages"))
        for folder in site:
            bundled = folder / "litellm" / "model_prices_and_context_window_backup.json"
            if bundled.exists():
                target = self.home / ".aider" / "caches" / "model_prices_and_context_window.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(bundled, target)
                break

    # --- running ---

    def run(self, argv: list[str], *, timeout: float = RUN_TIMEOUT,
            stdin: str | None = None) -> Result:
        if not self.configured:
            raise RuntimeError("the agent world is not configured: refusing to start anything")
        proc = subprocess.run(argv, cwd=self.project, env=self.env, capture_output=True,
                              text=True, timeout=timeout, input=stdin,
                              stdin=None if stdin is not None else subprocess.DEVNULL)
        return Result(proc.returncode, proc.stdout, proc.stderr, argv)

    def aidp(self, *args: str, timeout: float = RUN_TIMEOUT, stdin: str | None = None) -> Result:
        aidp = str(Path(sys.executable).parent / "aidp")
        return self.run([aidp, *args], timeout=timeout, stdin=stdin)

    def aidp_run(self, prompt: str | None, *extra: str, timeout: float = RUN_TIMEOUT) -> Result:
        """`aidp run PROMPT --agent CLI` with no other flags. A prompt starting with `-`
        goes after `--`, as a user types it."""
        args = ["run", "--agent", self.cli, *extra]
        if prompt is not None:
            args += ["--", prompt] if prompt.startswith("-") else [prompt]
        return self.aidp(*args, timeout=timeout)

    def json(self, *args: str) -> object:
        result = self.aidp(*args)
        assert result.exit_code == 0, str(result)
        return json.loads(result.stdout)

    def tasks(self) -> list[dict]:
        found = self.json("tasks", "list", "--all", "--json")
        assert isinstance(found, list)
        return found

    def todo(self) -> dict:
        found = self.json("todo", "show", "--json")
        assert isinstance(found, dict)
        return found
