"""`aidp setup AGENT --instructions`: a short snippet about aidp in the agent's
instructions file (CLAUDE.md, GEMINI.md, AGENTS.md), between markers; `--remove`
takes it out (and deletes a file it alone was in). Written through aidp.agent.setup.integrate's
settings helpers: never through a link, checked before anything is written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aidp.agent.setup.files import SettingsError, read_settings, remove_settings, write_settings

if TYPE_CHECKING:
    from pathlib import Path

    from aidp.agent.setup.files import AgentSettings

BEGIN = "<!-- aidp:begin (written by `aidp setup`; `aidp setup --remove` takes it out) -->"
END = "<!-- aidp:end -->"

SNIPPET = """\
## Work tracking with aidp

This project keeps its backlog and your TODO list with `aidp` (`.aidp/tasklist.jsonl`).
Hooks installed by `aidp setup {agent}` give you the TODO list and the open backlog at
session start, mirror your own TODO tool into aidp, and remind you of open items
before you stop.

- Plan with your TODO tool and mark items completed as you finish them.
- Blocked and need the user? Run `aidp todo pause "REASON"`.
- Found work you will not do now? `aidp tasks add "DESCRIPTION" -p high`.
- See the backlog: `aidp tasks list`; finish a task: `aidp tasks done ID`.
"""


def _block(spec: AgentSettings) -> str:
    return f"{BEGIN}\n{SNIPPET.format(agent=spec.name)}{END}\n"


def _split_block(text: str, path: Path) -> tuple[str, str, str] | None:
    """(before, block, after) when the markers are there; None when they are not."""
    start = text.find(BEGIN)
    if start < 0:
        if END in text:
            raise SettingsError(f"Cannot edit {path}: it has {END} without {BEGIN}; "
                                "fix the markers by hand")
        return None
    stop = text.find(END, start)
    if stop < 0:
        raise SettingsError(f"Cannot edit {path}: it has aidp's begin marker without "
                            f"{END}; fix the markers by hand")
    stop += len(END)
    if text[stop : stop + 1] == "\n":
        stop += 1
    return text[:start], text[start:stop], text[stop:]


def instructions(root: Path, spec: AgentSettings, *, remove: bool, check: bool
                 ) -> tuple[Path, bool, bool]:
    """Add (take out, or only look at) the snippet in the agent's instructions file:
    (path, changed, present afterwards)."""
    path = root / spec.instructions
    try:
        text = (read_settings(root, path) or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(f"Cannot read {path}: {exc}") from exc
    parts = _split_block(text, path)
    if check:
        return path, False, parts is not None and parts[1] == _block(spec)
    if remove:
        if parts is None:
            return path, False, False
        before, _, after = parts
        if before.endswith("\n\n"):
            before = before[:-1]  # the blank line setup put before the block
        rest = before + after
        if rest.strip():
            write_settings(root, path, rest.encode("utf-8"))
        else:
            remove_settings(root, path)
        return path, True, False
    block = _block(spec)
    if parts is not None:
        if parts[1] == block:
            return path, False, True
        new = parts[0] + block + parts[2]
    else:
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        new = text + sep + block
    write_settings(root, path, new.encode("utf-8"))
    return path, True, True
