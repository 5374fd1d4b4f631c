"""aider: `aider --no-pretty --no-gitignore --message=PROMPT`; plain text output.

aider has no plan tool and no shell tool of its own (it edits files, and only
suggests shell commands), so aidp keeps its TODO list through signals and the
continuation prompt.

The preset, checked against aider 0.86:

- `--no-gitignore`: aider otherwise adds `.aider*` to your `.gitignore` on its first
  run in a repository (add the line yourself if you want it). Whatever aider writes
  for itself — `.aider.chat.history.md`, `.aider.input.history`,
  `.aider.tags.cache.v4/` (`own_files`) — never counts as progress, so a turn where
  aider only talked is continued like any lazy turn.
- `--message=PROMPT` in one argument, so a prompt starting with `-` is the prompt.
- aider exits 0 after an API error it does not retry (a rejected key, say): its
  error line (`litellm.AuthenticationError: …`) is read, and when no retry followed
  it, `aidp run` reports the invocation as failed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from aidp.agent import events
from aidp.agent.agents.base import Adapter, Given, McpServer

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


_ERROR = re.compile(r"^litellm\.(?P<name>[A-Z]\w*(?:Error|Exception)):\s*(?P<what>.*)$")
_RETRY = re.compile(r"^Retrying in [\d.]+ seconds")
# The HTTP status each of litellm's errors stands for (aider prints only the name).
_STATUS = {
    "BadRequestError": 400, "AuthenticationError": 401, "PermissionDeniedError": 403,
    "NotFoundError": 404, "RateLimitError": 429, "InternalServerError": 500,
    "BadGatewayError": 502, "ServiceUnavailableError": 503, "Timeout": 408,
}


def _read_text(reader: events.OutputReader, line: str) -> list[events.Item] | None:
    """aider's API errors and retries become notices (and mark the invocation failed
    until a retry follows); None for every other line, which is its text."""
    text = line.strip()
    error = _ERROR.match(text)
    if error is not None:
        status = _STATUS.get(error["name"])
        what = f" (HTTP {status})" if status else ""
        reader.failure = events.one_line(f"litellm.{error['name']}{what}: {error['what']}", 200)
        return [events.Notice(f"the agent reported an error: {reader.failure}")]
    if _RETRY.match(text):
        reader.failure = None
        return [events.Notice(text)]
    return None


class Aider(Adapter):
    name = "aider"
    title = "aider"
    preset = "aider --no-pretty --no-gitignore --message={prompt}"
    # Files aider writes for itself (git pathspec globs, from the project root).
    own_files = (".aider*", ".aider*/**")
    version_from_cli = True
    quiet_env: ClassVar[Mapping[str, str]] = {
        "AIDER_CHECK_UPDATE": "false", "AIDER_ANALYTICS_DISABLE": "true"}

    def read_text(self, reader: events.OutputReader, line: str) -> list[events.Item] | None:
        return _read_text(reader, line)

    def hand_mcp(self, argv: list[str], server: McpServer, env: dict[str, str], *,
                 registered: Callable[[], bool]) -> Given | None:
        """aider takes no MCP servers: its TODO list is kept through signals."""
        return None
