"""`aidp hook AGENT EVENT`: what an agent's hook runs (written by `aidp setup`).

A hook must never break the agent: whatever goes wrong after the arguments were
accepted — unreadable JSON, a damaged tasklist, a bug — ends with exit 0 and one line
on stderr, never a traceback and never a block. Only an unknown AGENT or EVENT is a
usage error (exit 2): setup never writes one.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from aidp.agent import agents
from aidp.cli.common import either, env

if TYPE_CHECKING:
    from aidp.agent.hook.handler import Answer


_AGENTS = either(list(agents.HOOKED_NAMES)) + "."


def _events() -> str:
    """Each hooked agent's events, as the EVENT help names them ("codex as claude" when
    one agent's are another's): from the registry's table, like the AGENT help (no
    adapter is loaded for it)."""
    said: dict[tuple[str, ...], str] = {}
    parts = []
    for name, table in agents.HOOK_EVENTS.items():
        events = tuple(table)
        parts.append(f"{name} as {said[events]}" if events in said
                     else f"{name} {', '.join(events)}")
        said.setdefault(events, name)
    return "; ".join(parts) + "."


def hook(
    ctx: typer.Context,
    agent: str = typer.Argument(..., metavar="AGENT", help=_AGENTS),
    event: str = typer.Argument(..., metavar="EVENT", help="The agent's hook event: " + _events()),
    max_continuations: int = typer.Option(
        3, "--max-continuations", min=0, metavar="N",
        help="Refuse a stop at most N times in a row (reset by the next user prompt).",
    ),
) -> None:
    """Answer an agent's hook (JSON on stdin) as that agent expects; used by `aidp setup`.

    Examples:
    $ aidp hook claude SessionStart < event.json
    """
    from aidp.agent.hook import handler

    name, canonical = handler.resolve(agent, event)  # exit 2 with the accepted names
    try:
        answer = _answer(ctx, name, canonical, max_continuations)
    except Exception as exc:  # a hook must never break the agent: any failure is a note
        text = " ".join(str(exc).split()) or type(exc).__name__
        answer = handler.Answer(notes=[f"aidp hook {name} {canonical}: {text[:300]}"])
    _emit(answer)


def _answer(ctx: typer.Context, agent: str, event: str, max_continuations: int) -> Answer:
    import orjson

    from aidp.agent.hook import handler

    if sys.stdin is None or sys.stdin.isatty():
        return handler.Answer(notes=[f"aidp hook {agent} {event}: no hook JSON on stdin; "
                                   "this command is run by the agent's hooks"])
    stream = getattr(sys.stdin, "buffer", None)
    raw = stream.read() if stream is not None else sys.stdin.read().encode("utf-8")
    try:
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return handler.Answer(notes=[f"aidp hook {agent} {event}: ignored input that is not "
                                   f"JSON ({exc})"])
    if not isinstance(payload, dict):
        return handler.Answer(notes=[f"aidp hook {agent} {event}: ignored input that is not "
                                   "a JSON object"])
    e = env(ctx)
    e.quiet_reads = True  # a hook's reads tell the agent nothing on stderr
    root = e.root
    session, flagged = handler.session_for(payload, explicit=e.session, root=root)
    if session is None:  # missing fields: nothing to do
        return handler.Answer(notes=[f"aidp hook {agent} {event}: the hook JSON has no "
                                   "session_id; nothing done (AIDP_SESSION names one)"])
    context = handler.Context(agent=agent, event=event, project=e.project, session=session,
                            session_flag=flagged, max_continuations=max_continuations)
    answer = handler.handle(context, payload)
    return answer


def _emit(answer: Answer) -> None:
    import orjson

    from aidp.core.terminal import inert

    # A note quotes what the model wrote (a signal, a plan): one line, inert, so the
    # agent's UI or the terminal shows it as text (docs/security.md).
    for note in answer.notes:
        sys.stderr.write(inert(" ".join(note.split())) + "\n")
    if answer.output is not None:
        sys.stdout.buffer.write(orjson.dumps(answer.output) + b"\n")
        sys.stdout.buffer.flush()
