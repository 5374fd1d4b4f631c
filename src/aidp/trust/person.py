"""Who asks for trust: a person at a terminal, or an agent that aidp started.

Trust lets a repository's command line run with the user's rights, so only a person
may grant it (docs/security.md, "Trust is a person's decision"). aidp knows it runs
under an agent by two marks, and the terminal is the third check:

- `AGENT_MARK` in the environment: `aidp run` sets it for the agent it starts (so for
  everything the agent runs), and `aidp hook` and `aidp mcp` set it for themselves.
- The same mark in the environment an ancestor process was started with (Linux:
  `/proc/PID/environ`). An agent can unset the variable in its own shell, but not
  change what its own process, or `aidp run`'s agent above it, was started with: the
  walk up the process tree still finds it.
- stdin must be a terminal, to confirm on (the CLI asks). An agent runs commands with
  pipes, with no terminal of its own (`aidp run` starts it in a session of its own).

Revoking only takes power away and showing changes nothing: neither is asked.
"""

from __future__ import annotations

import os

from aidp.core.errors import InvalidInput

AGENT_MARK = "AIDP_AGENT_PROCESS"
_MARK_BYTES = AGENT_MARK.encode() + b"="
_MAX_ANCESTORS = 256  # a process tree is never this deep; a loop in a stale read ends here


class NotAPerson(InvalidInput):
    """`aidp trust` asked by an agent, or with no terminal to confirm on (exit 2)."""


def mark(role: str, environ: dict[str, str] | None = None) -> None:
    """Mark this process (or the environment a child gets) as an agent's, or as serving
    one: `role` names what aidp started it as (`aidp run`, `aidp hook`, `aidp mcp`)."""
    (os.environ if environ is None else environ)[AGENT_MARK] = role


def agent_role() -> str | None:
    """What this process runs under, when aidp started it for an agent or to serve one
    (its own environment, else the environment any ancestor was started with); None
    for a process of the person's own."""
    role = os.environ.get(AGENT_MARK)
    if role:
        return role
    return _ancestor_role()


def _ancestor_role() -> str | None:
    if not os.path.isdir("/proc/self"):
        return None  # no /proc (macOS): the environment and the terminal decide
    pid, seen = os.getppid(), set[int]()
    while pid > 1 and pid not in seen and len(seen) < _MAX_ANCESTORS:
        seen.add(pid)
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                started_with = handle.read()
        except OSError:
            started_with = b""  # another user's process (sudo, init): not an agent's
        for entry in started_with.split(b"\0"):
            if entry.startswith(_MARK_BYTES) and len(entry) > len(_MARK_BYTES):
                return entry[len(_MARK_BYTES):].decode("utf-8", "replace")
        pid = _parent(pid)
    return None


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rindex(b")") + 2:].split()[1])  # after `pid (comm)`
    except (OSError, ValueError, IndexError):
        return 0


def refuse_agent() -> None:
    """NotAPerson when an agent aidp started (or a process serving one) asks."""
    role = agent_role()
    if role:
        raise NotAPerson(
            f"Refused: trusting a repository's commands is a person's decision, and this "
            f"process runs under an agent ({_shown(role)}); nothing was trusted. Run "
            "'aidp trust' yourself, in a terminal")


def refuse_for_agent(action: str, instead: str = "Run it yourself, in a terminal") -> None:
    """NotAPerson when a process under an agent asks aidp to start a program or to
    write a file of its choosing (`action`: what that would be). Where an agent CLI
    approves commands by program name alone (Copilot's `shell(aidp)`), `aidp run
    --agent 'sh -c …'` or `tasks export -o ~/.bashrc` would run anything; the agent
    commands need neither (docs/security.md)."""
    role = agent_role()
    if role:
        raise NotAPerson(f"Refused: {action} is a person's to ask, and this process runs "
                         f"under an agent ({_shown(role)}); nothing was done. {instead}")


def refuse_without_terminal(stdin_is_terminal: bool) -> None:
    """NotAPerson when there is no terminal to confirm on."""
    if not stdin_is_terminal:
        raise NotAPerson(
            "Refused: 'aidp trust' asks a person to confirm on a terminal, and stdin is "
            "not one; nothing was trusted. Run 'aidp trust' yourself, in a terminal")


def _shown(role: str) -> str:
    text = "".join(c for c in role if c.isprintable())[:40]
    return f"started by {text}" if text.startswith("aidp") else "started by aidp"
