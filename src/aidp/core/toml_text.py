"""Reading TOML a repository wrote: the one reader every config file aidp parses goes
through (aidp's own config files, read by aidp.trust.gate behind the trust gate, and
Codex's `.codex/config.toml`, merged by aidp.agent.setup.mcp). It reads no file itself.

tomllib parses nested arrays and inline tables by recursion, so a file of a thousand
`[` ends in a RecursionError rather than a TOMLDecodeError; both are a file aidp cannot
parse, said in one line by the caller (exit 2), and nothing is written or run.
"""

from __future__ import annotations

from typing import Any


class Unparsable(ValueError):
    """The text is not TOML aidp can read; str() says why, for one line."""


def parse(text: str) -> dict[str, Any]:
    """The settings in `text`; Unparsable for invalid TOML and for nesting deeper than
    the parser can follow."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Unparsable(f"cannot parse it: {exc}") from None
    except RecursionError:
        raise Unparsable("cannot parse it: arrays or tables nested too deeply") from None
