"""`aidp run --backlog`: drain the ready queue, one claimed task at a time.

For each task: claim the first ready one (atomically, so several runs can drain one
queue side by side), work in the task's own session (`backlog:<task id>`: its TODO list
is the plan for that task, picked up again if an earlier run left it open; the
person's own list is never touched), prompt the agent with the task and how to close
it, and keep it going until the task is closed:

- done → the next task; but a task is not done while the session's TODO list still
  has open items (the completion gate): the done is taken back (in_progress again,
  history keeps both) and the agent is told to finish the list first;
- abandoned, or released / reopened / taken by someone else → the next task;
- still open when the agent stops → a follow-up prompt, at most `max_continuations`
  times; then the claim is released and the run goes on with the next ready task
  (never the same task twice in one run);
- the agent fails or times out → the claim is released and the run stops with the
  agent's exit code (124 on timeout);
- the TODO list is paused (the agent needs the user) → the run stops, the claim kept;
- Ctrl-C → the claim is released and the interrupt goes on (exit 130).

The run stops when nothing is ready or after `max_tasks` tasks. Nothing here prints:
everything goes through the loop's `emit`.
"""

from __future__ import annotations

from aidp import todos
from aidp.agent import prompt as prompts
from aidp.agent.loop import Loop, Message
from aidp.app.changing import transition
from aidp.app.claiming import claim_task, release_tasks
from aidp.app.leases import lease_keeper
from aidp.backlog import queue
from aidp.backlog.queue.seen import ChangedSince
from aidp.core.errors import ExitCode, InvalidInput, TaskNotFound
from aidp.core.model import Record
from aidp.tasklist.log import Fold
from aidp.views.render import counted, todo_text


def session_for(tid: str) -> str:
    """The session a backlog run works on a task in: one per task, of its own."""
    return f"backlog:{tid}"


class Drain:
    def __init__(self, loop: Loop, *, actor: str, max_tasks: int | None = None,
                 guidance: str | None = None) -> None:
        if max_tasks is not None and max_tasks < 1:
            raise InvalidInput(f"Invalid --max-tasks {max_tasks}: use a whole number ≥ 1")
        self.loop = loop
        self.log = loop.log
        self.actor = queue.validate_actor(actor)
        self.max_tasks = max_tasks
        self.guidance = guidance.strip() if guidance and guidance.strip() else None
        self.tried: list[str] = []
        self.current: str | None = None
        self.closed = 0
        self.home = loop.session  # the run's own session; each task gets one of its own
        loop.env["AIDP_ACTOR"] = self.actor  # the agent's own aidp commands act as us
        # While the agent works on a task, its lease is renewed (docs/guide.md, "Leases"):
        # that task's only (under --parallel every agent claims as the one actor).
        self.keeping: set[str] = set()
        loop.keeper = lease_keeper(loop.project, lambda: self.actor, tasks=self.keeping)

    def emit(self, kind: str, text: str) -> None:
        self.loop.emit(Message(kind, text))

    # --- the queue ---------------------------------------------------------------------

    def run(self) -> int:
        while self.max_tasks is None or len(self.tried) < self.max_tasks:
            try:
                claimed = claim_task(self.loop.project, None, actor=self.actor,
                                     exclude=self.tried)
            except queue.NothingReady as exc:
                self.emit("info", f"📋 {str(exc).split(';')[0]}: the backlog run stops")
                break
            task = claimed.task
            self.tried.append(task["id"])
            self.current = task["id"]
            self.emit("info", f"▶ Task {len(self.tried)}: {task.get('description', '')} "
                              f"({self._short(task['id'])}), claimed as {self.actor}")
            code, stop = self._settle(task)
            if stop:
                return code
        else:
            self.emit("info", f"📋 --max-tasks {self.max_tasks} reached: the backlog run stops")
        done = "task" if self.closed == 1 else "tasks"
        self.emit("info", f"📋 Backlog run: {len(self.tried)} claimed, {self.closed} {done} "
                          "closed")
        return ExitCode.OK

    # --- one task ----------------------------------------------------------------------

    def work_on(self, tid: str) -> int:
        """Work on one task this run's actor has claimed already (`run --parallel`'s
        worker: one task per process) exactly as `run` does each task: its exit code
        once it is settled. The claim is released when the agent fails or times out, and
        on Ctrl-C (the interrupt goes on); it is kept when the agent paused for the user.
        TaskNotFound when the task is not in this queue."""
        task = self.log.read().tasks.get(tid)
        if task is None:
            raise TaskNotFound(tid, "not in this worktree's queue")
        self.tried.append(tid)
        self.current = tid
        return self._settle(task)[0]

    def _settle(self, task: Record) -> tuple[int, bool]:
        """`_work_on` for the current task, its claim released on Ctrl-C (which goes
        on), back in the run's own session afterwards. The agent has the task's full id
        as AIDP_TASK meanwhile (its `Update task: $AIDP_TASK status: done` names it)."""
        before = self.loop.env.get("AIDP_TASK")
        self.loop.env["AIDP_TASK"] = task["id"]
        self.keeping.add(task["id"])
        try:
            code, stop = self._work_on(task)
        except KeyboardInterrupt:
            self._release("interrupted")
            raise
        finally:
            self.keeping.discard(task["id"])
            self._enter(self.home)
            if before is None:
                self.loop.env.pop("AIDP_TASK", None)
            else:
                self.loop.env["AIDP_TASK"] = before
        self.current = None
        return code, stop

    def _work_on(self, task: Record) -> tuple[int, bool]:
        """(exit code, whether the run stops) once the task is settled."""
        tid = task["id"]
        self._enter(session_for(tid))
        fold = self.log.read()
        result = self.loop.user_turn(self._task_prompt(fold, tid))
        follow_ups = 0
        while True:
            if result.exit_code:
                self._release("the agent failed" if result.exit_code != ExitCode.TIMEOUT
                              else "the agent timed out")
                return result.exit_code, True
            if result.ended == "paused":
                self.emit("info", f"⏸ Task {self._short(tid)} stays claimed by {self.actor}; "
                                  f"'aidp tasks release {self._short(tid)}' puts it back")
                return ExitCode.OK, True
            fold = self.log.read()
            task = fold.tasks[tid]
            status = task.get("status")
            todo = todos.current(fold, self.loop.session)
            gate = False
            if status == "done":
                if not todos.has_open_items(todo):
                    self.closed += 1
                    self.emit("filed", f"✓ Task done: {task.get('description', '')} "
                                       f"({self._short(tid)})")
                    return ExitCode.OK, False
                gate = self._take_back_done(tid)
            elif status == "abandoned":
                self.closed += 1
                self.emit("info", f"✗ Task abandoned: {task.get('description', '')} "
                                  f"({self._short(tid)})")
                return ExitCode.OK, False
            elif status != "in_progress" or not self._mine(fold, task):
                self.emit("info", f"↩ Task {self._short(tid)} was released or taken over; "
                                  "on to the next")
                return ExitCode.OK, False
            if follow_ups >= self.loop.limits.max_continuations:
                self._release(f"the agent stopped {counted(follow_ups + 1, 'time')} "
                              "without closing it")
                return ExitCode.OK, False
            follow_ups += 1
            todo = todos.current(self.log.read(), self.loop.session)
            text = prompts.backlog_continuation(task, todo_text=todo_text(todo),
                                                gate=gate)
            first = text.splitlines()[0]
            self.emit("continuation",
                      f"↻ Follow-up {follow_ups}/{self.loop.limits.max_continuations}: {first}")
            result = self.loop.follow_up(text)

    def _enter(self, session: str) -> None:
        """Work in `session` from now on: the loop's lists and the agent's AIDP_SESSION."""
        self.loop.session = session
        self.loop.env["AIDP_SESSION"] = session

    def _mine(self, fold: Fold, task: Record) -> bool:
        holder = queue.state(fold).holder(task)
        return holder is None or holder["assignee"] == self.actor

    def _task_prompt(self, fold: Fold, tid: str) -> str:
        qs = queue.state(fold, about=tid, bodies=True)  # this task's links and body
        task = fold.tasks[tid]

        def described(other: str) -> str:
            found = fold.tasks.get(other)
            return f"{other} {found.get('description', '')}" if found else other

        return prompts.backlog_task(
            task, actor=self.actor, guidance=self.guidance,
            parent=described(qs.parent[tid]) if tid in qs.parent else None,
            blockers=[described(b) for b in qs.blockers.get(tid, ())],
            notes=[queue.note_out(n) for n in qs.notes.get(tid, ())],
            body=queue.extras(qs, task).get("body"),
        )

    def _short(self, tid: str) -> str:
        """The task as people see it in every view: its short id."""
        return queue.short(tid, self.log.read())

    def _take_back_done(self, tid: str) -> bool:
        """The completion gate: done with open TODO items is not done (in progress
        again, unless it moved on from done meanwhile)."""
        try:
            transition(self.loop.project, [tid], "in_progress", expect={"status": "done"})
        except ChangedSince:
            pass
        self.emit("warning", f"Task {self._short(tid)} was marked done with TODO items still "
                             "open: it stays in progress until they are finished")
        return True

    def _release(self, why: str) -> None:
        """Put the current task back, if we still hold it and it is still open."""
        tid = self.current
        if tid is None:
            return
        self.current = None
        fold = self.log.read()
        task = fold.tasks.get(tid)
        if task is None or task.get("status") != "in_progress" or not self._mine(fold, task):
            return
        release_tasks(self.loop.project, [tid])
        self.emit("info", f"↩ Released task {self._short(tid)} ({why}): it is ready for "
                          "the next run")
