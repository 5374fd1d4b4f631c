"""`aidp hook AGENT EVENT`: aidp inside an interactive agent session, through its hooks.

The agent runs `aidp hook claude Stop` (say) with its hook JSON on stdin; `handle`
answers with the JSON that agent expects, or nothing. What differs between agents (their
event names, plan tools, how a stop is refused) is asked of the agent's adapter
(aidp.agent.agents, `Adapter.hooks` and `Adapter.hook_plan`):

- session start / resume / after compaction → the `prime` text as additional context;
- after the agent's plan tool (Claude TodoWrite, TaskCreate/TaskUpdate; Gemini
  write_todos; Codex update_plan) → the session's TODO list mirrors the plan, entry by
  entry;
- a user prompt → the continuation count goes back to 0, a pause is lifted and a list
  whose items are all completed is cleared (what a prompt does in `aidp run`);
- stop → while TODO items are open and the list is not paused, the stop is refused
  with the continuation prompt (`You have an active task: …`), at most
  `max_continuations` times in a row. Signals in the final reply (`File task:`,
  `Update task:`, `Todo pause:`) are applied first.

What a hook must remember between its processes (the count of blocks in a row, Claude's
task id → item map, what was filed) is local state in `.aidp/hooks/`, one JSON file per
agent and session, git-ignored by its own `.gitignore`; never in the tasklist. Pure
apart from that state and the log: `handle` returns an `Answer`, the CLI prints it.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from aidp import todos
from aidp.agent import agents
from aidp.agent.agents.base import Adapter, Hooks
from aidp.agent.hook.state import State, ancestors, process_key, state_path, sweep
from aidp.app.project import Project
from aidp.core.errors import InvalidInput
from aidp.core.plain import Plain
from aidp.core.terminal import inert
from aidp.tasklist.log import TaskLog
from aidp.views.render import todo_text

CONTINUATION_HEAD = "You have an active task: "
MAX_SESSION = 200
REASON_TODO_BUDGET = 3000



class UnknownHook(InvalidInput):
    pass


def hooked(name: str) -> tuple[Adapter, Hooks] | None:
    """The adapter of an agent whose hooks aidp answers, and its hooks; None for any
    other name."""
    adapter = agents.get(name)
    if adapter is None or adapter.hooks is None:
        return None
    return adapter, adapter.hooks


def resolve(agent: str, event: str) -> tuple[str, str]:
    """(agent, its canonical event name); case and `-`/`_` in the event do not matter."""
    found = hooked(agent)
    if found is None:
        names = ", ".join(agents.HOOKED_NAMES)
        raise UnknownHook(f"Unknown agent {agent!r}: use one of {names}")
    adapter, spec = found
    wanted = event.replace("-", "").replace("_", "").lower()
    for known in spec.events:
        if known.lower() == wanted:
            return adapter.name, known
    raise UnknownHook(
        f"Unknown {adapter.name} hook event {event!r}: use one of {', '.join(spec.events)}"
    )


class Answer(Plain):
    """What the hook prints: JSON for the agent on stdout (None: nothing), and notes for
    people on stderr. The exit code is always 0: a hook never breaks the agent."""

    __slots__ = _fields = ("output", "notes")

    def __init__(self, output: dict[str, Any] | None = None,
                 notes: list[str] | None = None) -> None:
        self.output = output
        self.notes = [] if notes is None else notes


# --- the session ------------------------------------------------------------------------


def session_for(payload: dict[str, Any], *, explicit: str | None, root: Path
                ) -> tuple[str | None, bool]:
    """(session, whether it differs from what a plain `aidp` command would use): the
    --session option or AIDP_SESSION, else the agent's session id; None without any."""
    from aidp.todos import resolve_session

    if explicit or os.environ.get("AIDP_SESSION"):
        return resolve_session(explicit, root, read=None), bool(explicit)
    raw = payload.get("session_id")
    if isinstance(raw, str):
        text = raw.strip()
        if text and len(text) <= MAX_SESSION and text.isprintable():
            return text, True
    return None, False


# --- the handler ------------------------------------------------------------------------


class Context(Plain):
    """One hook call: the agent, its event, the project and the session it works on
    (`session_flag`: the session must be named in the commands the agent is shown)."""

    __slots__ = _fields = ("agent", "event", "project", "session", "session_flag",
                           "max_continuations")

    def __init__(self, agent: str, event: str, project: Project, session: str,
                 session_flag: bool, max_continuations: int = 3) -> None:
        self.agent = agent
        self.event = event
        self.project = project
        self.session = session
        self.session_flag = session_flag
        self.max_continuations = max_continuations

    @property
    def log(self) -> TaskLog:
        return self.project.log

    @property
    def root(self) -> Path:
        return self.project.root

    @property
    def adapter(self) -> Adapter:
        return self._hooked()[0]

    @property
    def hooks(self) -> Hooks:
        return self._hooked()[1]

    def _hooked(self) -> tuple[Adapter, Hooks]:
        found = hooked(self.agent)
        if found is None:
            raise UnknownHook(f"Unknown agent {self.agent!r}: aidp has no hooks for it")
        return found


def handle(ctx: Context, payload: dict[str, Any]) -> Answer:
    from aidp.trust.person import mark

    mark("aidp hook")  # serving an agent: never grants trust (aidp.trust.person)
    kind = ctx.hooks.kind(ctx.event)
    with State(state_path(ctx.root, ctx.agent, ctx.session)) as state:
        if kind in ("start", "prompt"):
            # Which agent process these hooks serve: `aidp mcp`, started by that agent,
            # finds this session by it (hook.state.session_of_agent).
            state.data.pop("pids", None)  # an older aidp's bare pids: never read now
            state.data["agents"] = [process_key(pid) for pid in ancestors(os.getpid())]
        if kind == "start":
            answer = _start(ctx, payload, state)
        elif kind == "prompt":
            answer = _prompt(ctx, payload, state)
        elif kind == "plan":
            answer = _plan(ctx, payload, state)
        else:
            answer = _stop(ctx, payload, state)
        _keep_leases(ctx, kind, state, answer)
        state.data.setdefault("agent", ctx.agent)
        state.data.setdefault("session", ctx.session)
        state.save()
        if state.problem:
            answer.notes.append(state.problem)
    return answer


# --- leases -----------------------------------------------------------------------------


def _keep_leases(ctx: Context, kind: str, state: State, answer: Answer) -> None:
    """On every hook (the agent's plan-tool use, its prompts, its stops, a session
    start) the leases of the tasks it holds are renewed, each at most once per half lease
    (docs/guide.md, "Leases"); a task it lost is told once as context at the next session
    start or prompt (the hooks whose context every agent reads), on stderr till then."""
    from aidp.app.leases import renew_leases
    from aidp.core.errors import AidpError

    try:
        lost = renew_leases(ctx.project)
    except AidpError as exc:
        answer.notes.append(f"aidp: could not renew the lease: {' '.join(str(exc).split())}")
        return
    told = [t for t in state.data.get("told", []) if isinstance(t, str)] \
        if isinstance(state.data.get("told"), list) else []
    fresh = [line for line in lost if line not in told]
    if not fresh:
        return
    answer.notes += [f"aidp: {line}" for line in fresh]
    if kind not in ("start", "prompt"):
        return
    text = "\n".join(fresh)
    out = answer.output if answer.output is not None else {}
    specific = out.setdefault("hookSpecificOutput", {"hookEventName": ctx.event})
    context = specific.get("additionalContext")
    specific["additionalContext"] = f"{text}\n\n{context}" if context else text
    answer.output = out
    state.data["told"] = (told + fresh)[-50:]


def _start(ctx: Context, payload: dict[str, Any], state: State) -> Answer:
    from aidp.app import prime

    sweep(ctx.root)
    state.data["blocks"] = 0  # a new or resumed session: nobody has been pushed yet
    text = prime.prime_for(ctx.project, ctx.session, session_flag=ctx.session_flag,
                           hooked=True, task=os.environ.get("AIDP_TASK")).text()
    if ctx.session_flag:
        ctx.adapter.export_session(ctx.session)
    return Answer({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                          "additionalContext": text}})


def _is_own_continuation(prompt: object, state: State) -> bool:
    if not isinstance(prompt, str):
        return False
    last = state.data.get("last_continuation")
    text = prompt.strip()
    # An agent may wrap it (Codex: `<hook_prompt …>`), so look near the start.
    return CONTINUATION_HEAD in text[:300] or (isinstance(last, str) and text == last.strip())


def _prompt(ctx: Context, payload: dict[str, Any], state: State) -> Answer:
    if _is_own_continuation(payload.get("prompt"), state):
        return Answer()  # our own push re-entering as a prompt: not the user's
    state.data["blocks"] = 0
    state.data.pop("last_continuation", None)
    from aidp.agent.continuation import on_user_prompt
    from aidp.app.plans import update_plan

    update_plan(ctx.project, ctx.session, on_user_prompt)
    return Answer()


# --- plans ------------------------------------------------------------------------------


def _plan(ctx: Context, payload: dict[str, Any], state: State) -> Answer:
    from aidp.agent.events import read_plan
    from aidp.app.plans import write_plan

    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return Answer()
    is_plan, raw = ctx.adapter.hook_plan(tool, tool_input, payload.get("tool_response"),
                                         state.data)
    if not is_plan:
        return Answer()
    if not isinstance(raw, list):
        return Answer(notes=[f"aidp: ignored the {tool} plan: its todos are not a list"])
    try:  # the one bound on a plan (todos.MAX_ITEMS), before anything is read or locked
        todos.check_size(len(raw))
    except InvalidInput as exc:
        return Answer(notes=[f"aidp: ignored the {tool} plan: {exc}"])
    # The same reading as `aidp run`'s: a bad entry is skipped with its reason, a plan
    # of nothing but bad entries changes nothing, an empty plan clears the list.
    plan = read_plan(raw)
    if plan is None:
        return Answer(notes=[f"aidp: ignored the {tool} plan: no entry was usable"])
    notes = [f"aidp: left out plan {why}" for why in plan.skipped]
    try:
        write_plan(ctx.project, ctx.session, plan.entries)
    except InvalidInput as exc:
        notes.append(f"aidp: ignored the {tool} plan: {' '.join(str(exc).split())}")
    return Answer(notes=notes)


# --- stop -------------------------------------------------------------------------------


def continuation(todo: todos.TodoList, *, attempt: int, limit: int, aidp: str) -> str:
    """The stop refusal: its first line names the item to work on, as in `aidp run`."""
    from aidp.agent.continuation import continuation_item

    item = continuation_item(todo) or {"content": "?"}
    first = inert(" ".join(str(item["content"]).split()))  # the agent shows it to people
    shown = todo_text(todo)
    if len(shown) > REASON_TODO_BUDGET:
        shown = shown[: REASON_TODO_BUDGET - 40] + f"\n… (run `{aidp} todo show`)"
    return (
        f"{CONTINUATION_HEAD}{first}\n"
        "\n"
        f"You stopped while items on your TODO list are still open (reminder {attempt} "
        f"of {limit}). Make concrete progress on this task now, and mark each item "
        "completed in your TODO tool as you finish it (or run "
        f"`{aidp} todo tick N`). If you are blocked and need the user, run "
        f'`{aidp} todo pause "REASON"`.\n'
        "\n"
        f"## Your TODO list\n\n{shown}\n"
    )


def _stop(ctx: Context, payload: dict[str, Any], state: State) -> Answer:
    notes = _apply_signals(ctx, payload, state)
    blocks = state.blocks()
    if ctx.hooks.trusts_stop_hook_active and payload.get("stop_hook_active") is False:
        # Claude says this stop does not follow a block: whatever was counted belongs
        # to an earlier chain (a turn whose prompt hook did not run).
        blocks = 0
    todo = todos.current(ctx.log.read(), ctx.session)
    if not todos.has_open_items(todo) or todo.paused:
        state.data["blocks"] = 0
        return Answer(notes=notes)
    if blocks >= ctx.max_continuations:
        state.data["blocks"] = blocks
        if ctx.max_continuations:
            notes.append(f"aidp: {blocks} reminders in a row used up; the agent may stop "
                         "with TODO items open")
        return Answer(notes=notes)
    blocks += 1
    aidp = "aidp" if not ctx.session_flag else f"aidp --session {_quote(ctx.session)}"
    reason = continuation(todo, attempt=blocks, limit=ctx.max_continuations, aidp=aidp)
    state.data["blocks"] = blocks
    state.data["last_continuation"] = reason
    decision = ctx.hooks.block_decision
    return Answer({"decision": decision, "reason": reason}, notes)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _final_reply(ctx: Context, payload: dict[str, Any]) -> str | None:
    value = payload.get(ctx.hooks.final_reply)
    return value if isinstance(value, str) else None


_PLACEHOLDERS = {"DESCRIPTION", "ID", "REASON"}


def _apply_signals(ctx: Context, payload: dict[str, Any], state: State) -> list[str]:
    """`File task:`, `Update task:` and `Todo pause:` in the final reply of the turn,
    applied as `aidp run` applies them; a description filed once per session."""
    text = _final_reply(ctx, payload)
    if not text or ":" not in text:
        return []
    from aidp.agent import signals
    from aidp.app.changing import transition
    from aidp.app.filing import file_task
    from aidp.app.plans import update_plan
    from aidp.backlog.filing import same_text
    from aidp.core.errors import AmbiguousId, TaskNotFound

    notes: list[str] = []
    filed: list[str] = state.data["filed"] if isinstance(state.data.get("filed"), list) else []
    for signal in signals.parse_text(text):
        try:
            if isinstance(signal, signals.FileTask):
                key = same_text(signal.description)
                if signal.description in _PLACEHOLDERS or key in filed:
                    continue
                outcome = file_task(
                    ctx.project, signal.description, priority=signal.priority, tags=signal.tags,
                    session=ctx.session, discovered_during=f"{ctx.session} ({ctx.agent} hook)",
                    unless_open=True, body=signal.body)
                filed.append(key)
                task = outcome.task
                if not outcome.filed:  # the same as an open task (backlog.filing.same_text)
                    notes.append(f"aidp: not filed again: open task {outcome.short_id} has the "
                                 f"same description: {task['description']}")
                    continue
                notes.append(f"aidp: filed task {task['id']}: {task['description']}")
                notes += [f"aidp: left out {problem}; filed with {signals.filed_as(signal)}"
                          for problem in signal.problems]
            elif isinstance(signal, signals.Unreadable):
                notes.append(f"aidp: ignored the {signal.kind} signal: {signal.problem}")
            elif isinstance(signal, signals.UpdateTask):
                if signal.ref in _PLACEHOLDERS:
                    continue
                notes += [f"aidp: update task {signal.ref}: left out {problem}"
                          for problem in signal.problems]
                transition(ctx.project, [signal.ref], signal.status, reason=signal.reason)
            elif signal.reason not in _PLACEHOLDERS:
                update_plan(ctx.project, ctx.session, partial(todos.pause, reason=signal.reason))
        except (InvalidInput, TaskNotFound, AmbiguousId) as exc:
            notes.append(f"aidp: ignored a signal: {' '.join(str(exc).split())}")
    state.data["filed"] = filed[-200:]
    return notes
