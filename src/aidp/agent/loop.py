"""The loop of `aidp run`: turns, signals, the agent's plan, and the continuation policy.

A *turn* starts with a user prompt (or a resume) and is one or more agent
invocations. After each invocation the loop looks at what happened:

- the agent failed or ran out of time → the turn ends with its exit code (or 124);
- the TODO list is paused → the turn ends (a pause is not progress);
- the turn made progress (a tool call was seen, the TODO list, the backlog or the
  work tree changed) → the turn ends;
- otherwise, while TODO items are open, it sends a continuation prompt whose first
  line is `You have an active task: <content>`, at most `max_continuations` times.

Nothing here prints: everything shown goes through the `emit` callback as a Message,
and the agent's text stays data — signals are parsed from it, nothing is run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aidp import todos
from aidp.agent import agents as agent_adapters
from aidp.agent import continuation, events, mcp_handover, process, progress, signals
from aidp.agent import prompt as prompts
from aidp.agent.pending import ready_first
from aidp.agent.presets import AgentError, AgentSpec, check_startable, child_env
from aidp.agent.transcript import Transcript
from aidp.app.changing import transition
from aidp.app.filing import file_task
from aidp.app.plans import update_plan
from aidp.app.project import Project
from aidp.backlog import tasks as backlog
from aidp.backlog.filing import same_text
from aidp.backlog.queue import Keeper
from aidp.core.errors import AidpError, AmbiguousId, ExitCode, InvalidInput, TaskNotFound
from aidp.core.model import OPEN_STATUSES, now_micros
from aidp.tasklist.log import TaskLog
from aidp.views.render import todo_text

# The grammar's own placeholders, as the prompt shows them: an agent quoting its
# instructions files nothing.
PLACEHOLDER_DESCRIPTION, PLACEHOLDER_ID, PLACEHOLDER_REASON = "DESCRIPTION", "ID", "REASON"


@dataclass
class Message:
    """One thing to show. kind: agent (the agent's text), agent_err (its stderr), tool
    (a tool-call note), filed (a signal applied), info, notice (from the agent's CLI
    about itself), continuation, warning."""

    kind: str
    text: str


Emit = Callable[[Message], None]


@dataclass
class TurnResult:
    exit_code: int
    invocations: int = 0
    ended: str = ""  # why the turn ended, for people and tests


@dataclass
class Tally:
    """What a run did to the backlog and how often it pushed the agent on (for the
    summary `run --json` prints at the end)."""

    filed: list[str] = field(default_factory=list)  # ids of tasks filed by signals
    not_filed: list[str] = field(default_factory=list)  # ids of open tasks already there
    updated: list[str] = field(default_factory=list)  # ids changed by Update task
    continuations: int = 0
    invocations: int = 0
    ended: str = ""  # why the last turn ended (TurnResult.ended)


@dataclass
class Invocation:
    finished: process.Finished
    changes: list[str]
    after: progress.Snapshot


@dataclass
class Loop:
    project: Project
    session: str
    agent: AgentSpec
    emit: Emit
    limits: continuation.Limits = field(default_factory=continuation.Limits)
    iteration: int = 0
    filed: dict[str, str] = field(default_factory=dict)  # normalised description → id
    tally: Tally = field(default_factory=Tally)
    transcript: Transcript | None = None
    env: dict[str, str] = field(default_factory=dict)
    mcp_tools: bool = False  # the agent was given `aidp mcp` (its todo_write, …)
    # Renews the leases of the agent's claims while it runs (docs/guide.md, "Leases"):
    # set by the run (`aidp run`: the actor's claims; `--backlog`: its task's).
    keeper: Keeper | None = None
    # `run --parallel`'s start (µs): a description any of its agents filed since, open or
    # closed, is not filed again (each agent's loop is a process of its own).
    filed_since: int | None = None
    _last_plan: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.env = child_env(self.root, self.session, defaults=dict(self.agent.env))
        check_startable(self.agent, cwd=self.root, env=self.env)

    @property
    def log(self) -> TaskLog:
        return self.project.log

    @property
    def root(self) -> Path:
        return self.project.root

    def _with_server(self) -> tuple[AgentSpec, dict[str, str]]:
        """The command line and environment of the next invocation: a preset whose CLI
        takes MCP servers for one run gets `aidp mcp` (docs/mcp.md), on the session and
        actor the run has now (`run --backlog` moves to a session per task)."""
        handover = mcp_handover.hand_over(self.agent, self.env)
        self.mcp_tools = handover is not None
        return (handover.agent, handover.env) if handover is not None else (self.agent, self.env)

    # --- the public surface ---------------------------------------------------------

    def user_turn(self, user_prompt: str) -> TurnResult:
        """A user prompt: counter to 0, pause lifted, a completed list cleared."""
        update_plan(self.project, self.session, continuation.on_user_prompt)
        fold = self.log.read()
        todo = todos.current(fold, self.session)
        by_priority = backlog.Query(statuses=OPEN_STATUSES, sort="priority")
        open_tasks = backlog.query(fold.select(OPEN_STATUSES), by_priority)
        open_tasks, ready = ready_first(fold, open_tasks)
        self._with_server()  # whether the agent gets aidp's tools (mcp_tools), for the prompt
        text = prompts.build(
            user_prompt, todo_text=todo_text(todo), backlog=open_tasks, now=now_micros(),
            ready=ready, mcp_tools=self.mcp_tools,
        )
        return self._turn(text, attempts=0)

    def follow_up(self, text: str) -> TurnResult:
        """A prompt of aidp's own (run --backlog's follow-ups), sent as it is, with the
        continuation rules of any turn."""
        return self._turn(text, attempts=0)

    def resume(self) -> TurnResult:
        """Without a prompt: continue the open TODO list, or say why there is nothing to."""
        todo = todos.current(self.log.read(), self.session)
        why = continuation.nothing_to_resume(todo, max_continuations=self.limits.max_continuations)
        if why is not None:
            self.emit(Message("info", why))
            self.tally.ended = "nothing to resume"
            return TurnResult(ExitCode.OK, ended="nothing to resume")
        text, content = self._continuation(todo)
        self.tally.continuations += 1
        self.emit(Message("continuation", f"↻ Resuming (1/{self.limits.max_continuations}): "
                                          f"You have an active task: {content}"))
        return self._turn(text, attempts=1)

    def close(self) -> None:
        if self.transcript is not None:
            self.transcript.close()

    # --- turns ----------------------------------------------------------------------

    def _turn(self, text: str, *, attempts: int) -> TurnResult:
        result = self._turn_until_done(text, attempts=attempts)
        self.tally.ended = result.ended
        return result

    def _turn_until_done(self, text: str, *, attempts: int) -> TurnResult:
        timeout = self.limits.timeout
        deadline = time.monotonic() + timeout if timeout is not None else None
        invocations = 0
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                finished = process.Finished(exit_code=None, timed_out=True)  # not started
            else:
                outcome = self._invoke(text, deadline)  # counts itself in the tally
                invocations += 1
                finished = outcome.finished
            if finished.timed_out:
                self.emit(Message("warning", f"The agent did not finish within --timeout "
                                             f"{timeout:g}s; it was stopped"))
                return TurnResult(ExitCode.TIMEOUT, invocations, "timeout")
            if finished.exit_code:
                self.emit(Message("warning", f"The agent exited with code {finished.exit_code}"))
                return TurnResult(finished.exit_code, invocations, "agent failed")
            if finished.failure:
                self.emit(Message("warning", f"The agent exited with code 0 after an error it "
                                             f"did not recover from ({finished.failure}); "
                                             "counted as a failure"))
                return TurnResult(ExitCode.FAILURE, invocations, "agent failed")
            todo = outcome.after.todo
            if todo.paused:
                reason = f": {todo.pause_reason}" if todo.pause_reason else ""
                self.emit(Message("info", f"⏸ The TODO list is paused{reason}. "
                                          "The next prompt lifts the pause."))
                return TurnResult(ExitCode.OK, invocations, "paused")
            if outcome.changes:
                return TurnResult(ExitCode.OK, invocations, "progress")
            if not continuation.should_continue(todo, progressed=False, attempts=attempts,
                                         max_attempts=self.limits.max_continuations):
                if todos.has_open_items(todo):
                    self.emit(Message("info", self._budget_spent(attempts)))
                    return TurnResult(ExitCode.OK, invocations, "continuations used up")
                return TurnResult(ExitCode.OK, invocations, "done")
            attempts += 1
            self.tally.continuations += 1
            text, content = self._continuation(todo)
            self.emit(Message(
                "continuation",
                f"↻ Continuation {attempts}/{self.limits.max_continuations}: "
                f"You have an active task: {content}",
            ))

    def _budget_spent(self, attempts: int) -> str:
        tries = "continuation" if attempts == 1 else "continuations"
        return (
            f"The agent stopped with TODO items still open after {attempts} {tries}; "
            "the list stays active. Run 'aidp run' to resume it or give a new prompt."
        )

    def _continuation(self, todo: todos.TodoList) -> tuple[str, str]:
        item = continuation.continuation_item(todo)
        content = " ".join(str(item["content"] if item else "").split())
        return prompts.continuation(content, todo_text=todo_text(todo)), content

    # --- one invocation -------------------------------------------------------------

    def _invoke(self, text: str, deadline: float | None) -> Invocation:
        self.iteration += 1
        iteration = self.iteration
        self._last_plan = None  # a plan repeated within one invocation is applied once
        if self.transcript is None:
            self.transcript = Transcript(self.log, self.session)
            if self.transcript.error:
                self.emit(Message("warning", self.transcript.error))
        transcript = self.transcript
        agent, env = self._with_server()
        argv, stdin_text = agent.command(text)
        adapter = agent_adapters.for_command(self.agent.preset, self.agent.argv[0])
        own_files = adapter.own_files if adapter is not None else ()
        before = progress.take(self.log, self.session, self.root, ignore=own_files)
        transcript.write("prompt", iteration=iteration, argv=argv, text=text)
        reader = agent_adapters.output_reader(adapter)
        echoed = signals.signal_lines(text)
        said = signals.Reader()  # a File task waits for the body block that may follow
        tool_calls: list[str] = []

        def handle(item: events.Item) -> None:
            if isinstance(item, events.Text):
                self.emit(Message("agent", item.text))
                for line in item.text.split("\n"):
                    for signal in said.feed(line, echoed=line.strip() in echoed):
                        self._apply(signal, iteration)
            elif isinstance(item, events.Tool):
                tool_calls.append(item.name)
                self.emit(Message("tool", item.note))
            elif isinstance(item, events.Plan):
                self._follow_plan(item)
            else:
                self.emit(Message("notice", item.text))

        def on_line(stream: str, line: str) -> None:
            transcript.write(stream, iteration=iteration, text=line)
            if stream == "stderr":
                self.emit(Message("agent_err", line))
                return
            for item in reader.feed(line):
                handle(item)

        # Counted as it starts, so a run stopped by Ctrl-C still reports the agent it ran.
        self.tally.invocations += 1
        try:
            finished = process.run(
                argv, cwd=self.root, env=env, stdin_text=stdin_text, on_line=on_line,
                deadline=deadline, tick=self._keep_leases if self.keeper else None,
            )
        except process.StartError as exc:
            self.tally.invocations -= 1  # it never ran
            raise AgentError(f"Agent command cannot be started: {argv[0]!r}: {exc}") from None
        finally:
            for item in reader.finish():
                handle(item)
            for signal in said.finish():
                self._apply(signal, iteration)
        if finished.exit_code == 0 and reader.failure:
            # It reported an API error and exited 0 anyway (aider does): a failure.
            finished = process.Finished(exit_code=0, failure=reader.failure)
        after = progress.take(self.log, self.session, self.root, ignore=own_files)
        changes = progress.changes(before, after)
        if tool_calls:
            changes.insert(0, "tool calls")
        transcript.write("exit", iteration=iteration, exit_code=finished.exit_code,
                         timed_out=finished.timed_out, progress=changes)
        return Invocation(finished, changes, after)

    def _keep_leases(self) -> None:
        """While the agent lives: its leases renewed (at most once per half lease, read
        only when one may be due), and a task it lost told once."""
        assert self.keeper is not None
        try:
            lost = self.keeper.tick()
        except AidpError as exc:  # a lock held too long, a full disk: the run goes on
            self.emit(Message("warning", f"Could not renew the lease: {exc}"))
            return
        for line in lost:
            self.emit(Message("warning", line))

    # --- signals and plans ----------------------------------------------------------

    def _record(self, kind: str, **fields: object) -> None:
        if self.transcript is not None:
            self.transcript.write(kind, **fields)

    def _apply(self, signal: signals.Signal, iteration: int) -> None:
        if isinstance(signal, signals.FileTask):
            self._file(signal, iteration)
        elif isinstance(signal, signals.UpdateTask):
            self._update(signal)
        elif isinstance(signal, signals.Unreadable):
            self.emit(Message("warning", f"Ignored {signal.kind} signal: {signal.problem}"))
        else:
            self._pause(signal)

    def _file(self, signal: signals.FileTask, iteration: int) -> None:
        description = signal.description
        if description == PLACEHOLDER_DESCRIPTION:
            return
        key = same_text(description)
        if key in self.filed:  # the same description twice in one run is filed once
            tid = self.filed[key]
            self.tally.not_filed.append(tid)
            self.emit(Message("info", f"📋 Not filed again: {description[:60]!r} was filed "
                                      f"earlier in this run ({self._short(tid)})"))
            return
        try:
            outcome = file_task(
                self.project,
                description,
                priority=signal.priority,
                tags=signal.tags,
                session=self.session,
                discovered_during=f"{self.session} iteration {iteration}",
                unless_open=True,
                body=signal.body,
                filed_since=self.filed_since,
            )
        except InvalidInput as exc:
            self.emit(Message("warning", f"Ignored File task signal: {exc}"))
            return
        task = outcome.task
        if not outcome.filed:  # an earlier run (or another agent) filed it: still open
            self.tally.not_filed.append(task["id"])
            status = task.get("status")
            which = (f"open task {outcome.short_id}" if status in OPEN_STATUSES else
                     f"task {outcome.short_id}, filed earlier in this run ({status}),")
            self.emit(Message("info", f"📋 Not filed again: {which} has the same "
                                      f"description: {task['description'][:80]}"))
            return
        self.filed[key] = task["id"]  # filed by this run (an open one is looked up anew)
        self.tally.filed.append(task["id"])
        self._record("signal", signal="file_task", task=task)
        shown = outcome.short_id
        self.emit(Message("filed", f"📋 Filed task: {task['description']} ({shown})"))
        for problem in signal.problems:
            self.emit(Message("warning", f"File task {description[:60]!r}: left out {problem}; "
                                         f"filed with {signals.filed_as(signal)}"))

    def _short(self, tid: str) -> str:
        """The id as people see it: its shortest unique prefix."""
        return backlog.short_ids(self.log.read(), [tid])[tid]

    def _update(self, signal: signals.UpdateTask) -> None:
        if signal.ref == PLACEHOLDER_ID:
            return
        for problem in signal.problems:
            self.emit(Message("warning", f"Update task {signal.ref}: left out {problem}"))
        try:
            done = transition(self.project, [signal.ref], signal.status, reason=signal.reason)
        except (InvalidInput, TaskNotFound, AmbiguousId) as exc:
            self.emit(Message("warning", f"Ignored Update task signal: {exc}"))
            return
        change = done.changes[0]
        task = change.task
        label = f"{task.get('description', '')} ({done.short_ids[task['id']]})"
        if change.changed:
            self.tally.updated.append(task["id"])
            self._record("signal", signal="update_task", task=task)
            self.emit(Message("filed", f"📋 Updated task: {label} → {signal.status}"))
        else:
            self.emit(Message("info", f"📋 Task already {signal.status}: {label}"))

    def _pause(self, signal: signals.TodoPause) -> None:
        if signal.reason == PLACEHOLDER_REASON:
            return
        try:
            update_plan(self.project, self.session, lambda todo: todos.pause(todo, signal.reason))
        except InvalidInput as exc:
            self.emit(Message("warning", f"Ignored Todo pause signal: {exc}"))
            return
        self._record("signal", signal="todo_pause", reason=signal.reason)
        self.emit(Message("filed", f"⏸ Todo paused: {signal.reason}"))

    def _follow_plan(self, plan: events.Plan) -> None:
        """The agent reported its own plan: the session's TODO list follows it, entry by
        entry (a bad entry is skipped with a warning, the rest still applies)."""
        for why in plan.skipped:
            self.emit(Message("warning", f"Left out of the agent's plan: {why}"))
        entries = plan.entries
        if entries == self._last_plan:
            return

        def follow(todo: todos.TodoList) -> todos.TodoList:
            wanted = (entries if plan.knows_in_progress
                      else continuation.keep_in_progress(todo, entries))
            return todos.set_plan(todo, wanted)

        try:
            edit = update_plan(self.project, self.session, follow)
        except InvalidInput as exc:
            self.emit(Message("warning", f"Ignored the agent's plan: {exc}"))
            return
        self._last_plan = entries
        if edit.written:
            items = edit.after.visible
            done = sum(1 for i in items if todos.derived_status(i) == "completed")
            self._record("plan", entries=entries)
            self.emit(Message("info", f"📝 TODO list follows the agent's plan: "
                                      f"{done}/{len(items)} completed"))
