"""`aidp run`: drive an agent CLI in a loop that keeps the backlog and the TODO list in
step with what it says and does (see aidp.agent and docs/agents.md).

Only the Typer signature lives at import time; the agent code is imported when `run`
executes, so other commands start as fast as before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from aidp.cli.common import Env, env
from aidp.cli.output import json_out
from aidp.core.errors import ExitCode, InvalidInput
from aidp.core.model import now_micros

if TYPE_CHECKING:
    from aidp.agent.continuation import Limits
    from aidp.agent.loop import Loop, Message
    from aidp.agent.presets import AgentSpec

SLASH_HELP = (
    "Type a prompt for the agent, or an aidp command after a slash: /todo show, "
    "/tasks list pending, /todo add \"Write tests\"; /exit or end of input leaves."
)


def run(
    ctx: typer.Context,
    prompt: str | None = typer.Argument(
        None, metavar="[PROMPT]",
        help="What the agent should do ('-' reads it from stdin). Without one, resume the "
        "session's open TODO list.",
    ),
    agent: str | None = typer.Option(
        None, "--agent", "-a", metavar="NAME|COMMAND",
        help="claude, codex, gemini, aider, cursor, copilot, opencode, or a command line "
        "({prompt} marks where the prompt goes, else it goes on stdin). Default: AIDP_AGENT, "
        "else agent in .aidp/config.toml.",
    ),
    max_continuations: int = typer.Option(
        3, "--max-continuations", metavar="N",
        help="How many times a turn re-prompts an agent that stops without progress while "
        "TODO items are open.",
    ),
    timeout: float | None = typer.Option(
        None, "--timeout", metavar="SEC",
        help="Stop the agent when a turn (prompt and continuations) takes longer; exit 124.",
    ),
    interactive: bool = typer.Option(
        False, "--interactive", "-i",
        help="A prompt loop: each line is a prompt; /CMD runs 'aidp CMD'; /exit leaves.",
    ),
    session: str | None = typer.Option(
        None, "--session", metavar="NAME",
        help="The session whose TODO list the run keeps (overrides the global --session).",
    ),
    backlog: bool = typer.Option(
        False, "--backlog",
        help="Drain the ready queue: claim each ready task in turn and keep the agent on it "
        "until it is closed (PROMPT, if given, is added to every task's prompt).",
    ),
    max_tasks: int | None = typer.Option(
        None, "--max-tasks", metavar="N", help="With --backlog: stop after N tasks."),
    claim_as: str | None = typer.Option(
        None, "--as", metavar="NAME",
        help="With --backlog: who claims the tasks. Default: AIDP_ACTOR, else git "
        "user.email, else the login name.",
    ),
    parallel: int | None = typer.Option(
        None, "--parallel", metavar="N",
        help="With --backlog: N agents at once (1–16), each on a ready task in a git "
        "worktree of its own (.aidp/worktrees/), on a branch aidp/<task hex>.",
    ),
    merge: bool = typer.Option(
        False, "--merge",
        help="With --parallel: commit the tasklist alone, then merge each task's branch "
        "into this branch when it is done (one that conflicts is left and named).",
    ),
    as_json: bool = typer.Option(
        False, "--json",
        help="Show the run's progress on stderr and print one JSON summary (tasks filed, "
        "updated, continuations, exit reason; with --parallel: each task's status, "
        "branch, merged, exit code) on stdout at the end.",
    ),
) -> None:
    """Run an agent CLI in a loop that keeps the backlog and TODO list in step.

    Shows its output live, applies its signals and re-prompts a lazy agent with open TODOs.

    See docs/agents.md for the presets, the signal grammar and the continuation rules.

    Examples:
    $ aidp run "Fix the failing tests" --agent claude
    $ aidp run --backlog --max-tasks 3 -a codex
    """
    from aidp.agent import presets
    from aidp.agent.continuation import Limits
    from aidp.app import claiming
    from aidp.trust.person import refuse_for_agent

    # Before anything is read: `--agent 'sh -c …'` would start anything at all.
    refuse_for_agent("'aidp run', which starts the agent command it is given,")
    e = env(ctx)
    if session:
        e.session = session
    prompt = _prompt(prompt, interactive=interactive)
    limits = Limits(max_continuations=max_continuations, timeout=timeout)  # exit 2 if bad
    _refuse_conflicts(backlog=backlog, interactive=interactive, as_json=as_json,
                      max_tasks=max_tasks, claim_as=claim_as, parallel=parallel, merge=merge)
    root = e.root
    name = e.session_name()
    # Who `run --backlog` claims as: --as, else AIDP_ACTOR, else git's user.email.
    who = claiming.actor(e.project, claim_as) if backlog else None
    spec = presets.choose(agent, root)
    if parallel is not None and who is not None:
        code = _parallel(e, spec, actor=who, width=parallel, limits=limits,
                         max_tasks=max_tasks, guidance=prompt, merge=merge, as_json=as_json)
    else:
        code = _drive(e, spec, session=name, actor=who, limits=limits, prompt=prompt,
                      interactive=interactive, max_tasks=max_tasks, as_json=as_json)
    if code:
        raise typer.Exit(int(code))


def _prompt(prompt: str | None, *, interactive: bool) -> str | None:
    """The PROMPT given, checked; '-': read from stdin."""
    if prompt is not None and not prompt.strip():
        raise InvalidInput("Invalid PROMPT: it is empty; give what the agent should do, "
                           "or leave it out to resume")
    if prompt == "-":
        if interactive:
            raise InvalidInput("Invalid PROMPT '-' with --interactive: stdin holds the prompts")
        prompt = sys.stdin.read()
        if not prompt.strip():
            raise InvalidInput("Invalid PROMPT: stdin was empty")
    return prompt


def _refuse_conflicts(*, backlog: bool, interactive: bool, as_json: bool,
                      max_tasks: int | None, claim_as: str | None, parallel: int | None,
                      merge: bool) -> None:
    """Options that cannot go together, or need another: refused before anything runs."""
    if backlog and interactive:
        raise InvalidInput("Conflicting --backlog and --interactive: give one of them")
    if as_json and interactive:
        raise InvalidInput("Conflicting --json and --interactive: give one of them")
    if not backlog and (max_tasks is not None or claim_as is not None):
        raise InvalidInput("--max-tasks and --as need --backlog")
    if max_tasks is not None and max_tasks < 1:
        raise InvalidInput(f"Invalid --max-tasks {max_tasks}: use a whole number ≥ 1")
    if parallel is not None and not backlog:
        raise InvalidInput("--parallel needs --backlog: the agents work on the ready tasks")
    if merge and parallel is None:
        raise InvalidInput("--merge needs --parallel (and --backlog)")
    if parallel is not None:
        from aidp.agent.parallel.run import check_parallel

        check_parallel(parallel)


def _drive(e: Env, spec: AgentSpec, *, session: str, actor: str | None, limits: Limits,
           prompt: str | None, interactive: bool, max_tasks: int | None,
           as_json: bool) -> int:
    """One agent in the loop (`actor`: draining the backlog as that name): its exit code,
    with the JSON summary printed at the end when asked for."""
    from aidp.agent.loop import Loop
    from aidp.agent.pending import pending_summary

    output = Output(progress_to_stderr=as_json)
    e.quiet_reads = True  # the loop's reads tell nothing (its own messages do)
    loop = Loop(project=e.project, session=session, agent=spec, emit=output, limits=limits)
    started = now_micros()
    if actor is None:  # the agent's own claims (as you: AIDP_ACTOR, else git's user.email)
        from aidp.app.leases import lease_keeper

        loop.keeper = lease_keeper(e.project)
    for line in pending_summary(e.read()):
        output.line(line)
    restore = _term_as_interrupt()
    try:
        if actor is not None:
            from aidp.agent.backlog import Drain

            code = Drain(loop, actor=actor, max_tasks=max_tasks, guidance=prompt).run()
        elif interactive:
            code = _interactive(loop, prompt, e, output)
        elif prompt is None:
            code = loop.resume().exit_code
        else:
            code = loop.user_turn(prompt).exit_code
    except KeyboardInterrupt:
        output.error_line("Interrupted: the agent was stopped; everything applied so far is saved")
        code = ExitCode.INTERRUPTED
        loop.tally.ended = "interrupted"
    finally:
        restore()
        if actor is None:
            _release_left(e, loop, since=started)
        loop.close()
    if as_json:
        ended = "backlog done" if actor is not None and not code else loop.tally.ended
        json_out(summary(loop, int(code), ended or "done"))
    return int(code)


def _release_left(e: Env, loop: Loop, *, since: int) -> None:
    """The tasks the agent claimed in this run and left in progress, released: it has
    exited, and nobody else renews its lease (docs/guide.md, "Leases")."""
    from aidp.agent.loop import Message
    from aidp.app.claiming import release_left
    from aidp.core.errors import AidpError

    try:
        released = release_left(e.project, loop.session, since)
    except AidpError as exc:
        loop.emit(Message("warning", f"Could not release the agent's claims: {exc}"))
        return
    ids = released.short_ids
    for change in released.changes:
        loop.emit(Message("info", f"↩ Released task {ids[change.task['id']]} "
                                  f"({change.task.get('description', '')}): the agent "
                                  "claimed it and exited without closing it"))


def _parallel(e: Env, spec: AgentSpec, *, actor: str, width: int, limits: Limits,
              max_tasks: int | None, guidance: str | None, merge: bool,
              as_json: bool) -> int:
    """`run --backlog --parallel N` (aidp.agent.parallel.run); every check is made before
    anything starts."""
    from aidp.agent.parallel.run import Parallel
    from aidp.agent.parallel.view import view_for
    from aidp.agent.parallel.worktree import Checkout
    from aidp.agent.pending import pending_summary
    from aidp.agent.presets import check_startable, child_env

    log = e.log
    checkout = Checkout(log, merge=merge)  # exit 2: no repository, or unmergeable
    check_startable(spec, cwd=e.root, env=child_env(e.root, "backlog",
                                                    defaults=dict(spec.env)))
    out = sys.stderr if as_json else sys.stdout
    restore = _term_as_interrupt()
    view = view_for(out)
    try:
        for line in pending_summary(e.read()):
            view.info(line)
        run = Parallel(project=e.project, checkout=checkout, agent=spec, actor=actor, width=width,
                       view=view, limits=limits, max_tasks=max_tasks,
                       guidance=guidance.strip() if guidance else None, merge=merge)
        code = run.run()
    finally:
        view.close()
        restore()
    if as_json:

        json_out({"tasks": [outcome.as_json() for outcome in run.outcomes]})
    return int(code)


def summary(loop: Loop, code: int, ended: str) -> dict[str, object]:
    """`run --json`'s object (docs/reference.md, "JSON output")."""
    tally = loop.tally
    return {
        "session": loop.session,
        "exit_code": code,
        "exit_reason": ended.replace(" ", "_"),
        "invocations": tally.invocations,
        "continuations": tally.continuations,
        "tasks_filed": list(tally.filed),
        "tasks_not_filed": list(dict.fromkeys(tally.not_filed)),
        "tasks_updated": list(dict.fromkeys(tally.updated)),
    }


def _term_as_interrupt() -> Callable[[], object]:
    """SIGTERM stops the run like Ctrl-C does, so the agent's group is stopped too
    instead of being left running."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        return lambda: None
    return lambda: signal.signal(signal.SIGTERM, previous)


def _interactive(loop: Loop, first: str | None, e: Env, output: Output) -> int:
    code = int(loop.user_turn(first).exit_code) if first is not None else 0
    ask = sys.stdin.isatty()
    if ask:
        output.error_line(SLASH_HELP)
    while True:
        if ask:
            sys.stderr.write("aidp> ")
            sys.stderr.flush()
        line = sys.stdin.readline()
        if not line:
            return code  # end of input
        text = line.strip()
        if not text:
            continue
        if text.startswith("/"):
            if text.split()[0] in ("/exit", "/quit"):
                return code
            _slash(text[1:], loop, e, output)
            continue
        code = int(loop.user_turn(text).exit_code)


def _slash(command: str, loop: Loop, e: Env, output: Output) -> None:
    """`/todo show` → `aidp todo show`, in this process, on this run's project and session."""
    import shlex

    try:
        args = shlex.split(command)
    except ValueError as exc:
        output.warning(f"Cannot read /{command}: {exc}")
        return
    if not args or args[0] in ("help", "?"):
        output.line(SLASH_HELP)
        return
    if args[0] == "run":
        output.warning("/run is not available inside 'aidp run -i': type the prompt itself")
        return
    sys.stdout.flush()
    e.run_command(["--dir", str(loop.root), "--session", loop.session, *args])
    sys.stdout.flush()


class Output:
    """Shows the run's messages: the agent's text as inert data (control characters and
    escapes shown as \\xNN, no markup read), aidp's own lines, warnings on stderr."""

    def __init__(self, *, progress_to_stderr: bool = False) -> None:
        from aidp.core.terminal import inert
        from aidp.views import render

        self._inert = inert
        # run --json: stdout holds only the summary object, so progress goes to stderr
        self._stdout = sys.stderr if progress_to_stderr else sys.stdout
        self._paint = render.Painter(render.color_enabled(self._stdout))
        self._paint_err = render.Painter(render.color_enabled(sys.stderr))

    def __call__(self, message: Message) -> None:
        text = self._inert(message.text)
        kind = message.kind
        if kind == "agent":
            self._out(text)
        elif kind == "agent_err":
            self._err(text)
        elif kind == "tool":
            self._out(self._paint(f"  🔧 {text}", "dim"))
        elif kind == "filed":
            self._out(self._paint(text, "green"))
        elif kind == "continuation":
            self._out(self._paint(text, "yellow"))
        elif kind == "notice":
            self._err(self._paint_err(f"Agent: {text}", "yellow"))
        elif kind == "warning":
            self.warning(message.text)
        else:
            self._out(text)

    def line(self, text: str) -> None:
        self._out(self._inert(text))

    def warning(self, text: str) -> None:
        self._err(self._paint_err(f"Warning: {self._inert(text)}", "yellow"))

    def error_line(self, text: str) -> None:
        self._err(self._inert(text))

    def _out(self, text: str) -> None:
        self._stdout.write(text + "\n")
        self._stdout.flush()

    def _err(self, text: str) -> None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
