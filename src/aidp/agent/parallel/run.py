"""`aidp run --backlog --parallel N`: N agents at once, each on a ready task in a git
worktree of its own (docs/guide.md, "`aidp run --backlog --parallel N`").

The run claims each task in the starting worktree (so the claim is in its tasklist),
makes the task's worktree and branch (aidp.agent.parallel.worktree) and starts a worker
process there (aidp.agent.parallel.worker) that drives the agent on that one task with
`run --backlog`'s rules. The worker's messages come back as JSON lines and are shown
prefixed by the task (aidp.agent.parallel.view). A slot that frees takes the next
ready task, so a task that waited on a finished one gets its turn in the same run.

When an agent ends, the run copies the task's own records (the task, its claim, its
field changes and notes) from the worktree's tasklist into the starting worktree's, so
its final state stays there when the worktree goes; then it commits the worktree's
tasklist alone on the task's branch and removes the worktree (kept and named when it
holds other uncommitted changes, or the agent paused for the user). With `--merge` a
task that ended done has its branch merged into the starting branch at once (so later
worktrees start from it), and the merged branch deleted; one that does not merge cleanly
is left, named.

An agent that fails has its task released (by the worker, or by the run when the
worker could not) and the others go on; no new task starts after a failure, and the
run exits with the first failing agent's code. Ctrl-C (or SIGTERM) sends SIGINT to
every worker, which stops its agent's process group and releases its task; the
worktrees are kept and named; exit 130. A step under way when it comes (a claim and
its worktree, an ended agent settled: records, commit, merge, removal) is finished
first, its git out of the terminal's reach (worktree.held_interrupts), and its
task reported as it ended.
"""

from __future__ import annotations

import os
import queue as queues
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from aidp.agent.continuation import Limits
from aidp.agent.parallel.home import copy_home, mark
from aidp.agent.parallel.view import PlainView
from aidp.agent.parallel.worker import READY, job_for
from aidp.agent.parallel.worktree import Checkout, branch_of, held_interrupts, hex_of
from aidp.agent.presets import AgentSpec
from aidp.app.claiming import claim_task, release_tasks
from aidp.app.project import Project
from aidp.backlog import queue
from aidp.core.errors import AidpError, ExitCode, InvalidInput
from aidp.core.model import now_micros
from aidp.tasklist.log import TaskLog

if TYPE_CHECKING:
    from collections.abc import Iterator

MAX_PARALLEL = 16
STOP_GRACE_SECONDS = 20.0  # how long interrupted workers get to stop and release


def check_parallel(n: int) -> int:
    if not 1 <= n <= MAX_PARALLEL:
        raise InvalidInput(f"Invalid --parallel {n}: use a whole number from 1 to "
                           f"{MAX_PARALLEL}")
    return n


@dataclass
class Agent:
    tid: str
    description: str
    project: Path  # the project folder in the task's worktree
    proc: subprocess.Popen[bytes]
    open_streams: int = 2
    ready: bool = False  # the worker said it stops on SIGINT (its handler is in place)
    exit_code: int | None = None
    status: str = ""
    merged: bool = False
    kept: str | None = None  # why the worktree was kept
    start: tuple[int, int] = (0, 0)  # its worktree's tasklist as it began (home.mark)

    @property
    def key(self) -> str:
        return hex_of(self.tid)


@dataclass
class Outcome:
    """One task of the run, as `--json` reports it."""

    tid: str
    status: str
    exit_code: int
    merged: bool = False

    def as_json(self) -> dict[str, object]:
        return {"id": self.tid, "status": self.status, "branch": branch_of(self.tid),
                "merged": self.merged, "exit_code": self.exit_code}


@dataclass
class Parallel:
    project: Project
    checkout: Checkout
    agent: AgentSpec
    actor: str
    width: int
    view: PlainView
    limits: Limits = field(default_factory=Limits)
    max_tasks: int | None = None
    guidance: str | None = None
    merge: bool = False
    outcomes: list[Outcome] = field(default_factory=list)
    running: dict[str, Agent] = field(default_factory=dict)
    tried: list[str] = field(default_factory=list)
    first_failure: int | None = None
    interrupted: bool = False
    started: int = field(default_factory=now_micros)  # what agents file since: filed once
    _lines: queues.Queue[tuple[str, str, bytes | None]] = field(
        default_factory=queues.Queue)
    _nothing: str | None = None

    @property
    def log(self) -> TaskLog:
        return self.project.log

    # --- the run ----------------------------------------------------------------------

    def run(self) -> int:
        check_parallel(self.width)
        try:
            if self.merge:
                with self._whole():
                    committed = self.checkout.commit_tasklist()
                if committed:
                    self.view.info(f"✓ Committed the tasklist on {self.checkout.branch}: "
                                   f"{committed}")
            self._schedule()
        except KeyboardInterrupt:
            self._stop_all()
        if self.interrupted:
            return ExitCode.INTERRUPTED
        self._commit_home()
        self.view.info(f"📋 {self._why_stopped()}: the parallel run stops")
        done = sum(o.status == "done" for o in self.outcomes)
        merged = sum(o.merged for o in self.outcomes)
        tail = f", {merged} merged" if self.merge else ""
        self.view.info(f"📋 Parallel run: {len(self.outcomes)} claimed, {done} done{tail}")
        return self.first_failure or ExitCode.OK

    def _commit_home(self) -> None:
        """The starting worktree's tasklist committed alone on the starting branch, as
        `aidp sync` does: what the run wrote there (claims, the agents' records) is in
        that commit, so each `aidp/…` branch then merges with a plain `git merge` (the
        union merge joins the lines; the fold reads a record both sides hold once)."""
        if not self.outcomes or self.checkout.branch is None:
            return
        from aidp.tasklist.git_runner import GitError

        try:
            with self._whole():
                committed = self.checkout.commit_tasklist()
        except GitError as exc:
            self.view.warning(f"Not committed: the tasklist on {self.checkout.branch} "
                              f"({exc}); commit it before you merge the aidp/ branches")
            return
        except KeyboardInterrupt:
            self.interrupted = True
            return
        if committed:
            self.view.info(f"✓ Committed the tasklist on {self.checkout.branch}: "
                           f"{committed}")

    def _why_stopped(self) -> str:
        if self.first_failure is not None:
            return (f"An agent failed (exit code {self.first_failure}), so no new task "
                    "was started after it")
        if self.max_tasks is not None and len(self.tried) >= self.max_tasks:
            return f"--max-tasks {self.max_tasks} reached"
        return self._nothing or "Nothing ready to claim"

    @contextmanager
    def _whole(self) -> Iterator[None]:
        """A step that must not stop half-way: a Ctrl-C (or SIGTERM) that comes meanwhile
        stops the run once the step is done (git in it never sees the signal)."""
        with held_interrupts() as came:
            yield
        if came:
            raise KeyboardInterrupt

    def _schedule(self) -> None:
        while True:
            self._start_more()
            if not self.running:
                return
            self._pump(0.2)

    def _can_start(self) -> bool:
        if self.first_failure is not None or self.interrupted:
            return False
        return self.max_tasks is None or len(self.tried) < self.max_tasks

    def _start_more(self) -> None:
        while len(self.running) < self.width and self._can_start():
            with self._whole():  # claimed, its worktree made and its agent started, or not
                if not self._start_one():
                    return

    def _start_one(self) -> bool:
        """Claim the next ready task and start an agent on it; False when none was
        started (nothing ready, or the agent could not start)."""
        try:
            claimed = claim_task(self.project, None, actor=self.actor,
                                 exclude=[*self.tried, *self._waiting_on_running()])
        except queue.NothingReady as exc:
            self._nothing = str(exc).split(";")[0]
            return False
        self._nothing = None
        task = claimed.task
        tid = task["id"]
        self.tried.append(tid)
        description = str(task.get("description", ""))
        key = hex_of(tid)
        try:
            project = self.checkout.prepare(tid)
            start = mark(TaskLog(project))
            proc = self._spawn(project, tid)
        except (AidpError, OSError) as exc:
            self.view.warning(f"[{key}] Cannot start an agent on task "
                              f"{queue.short(tid, self.log.read())}: {exc}")
            release_tasks(self.project, [tid])
            self._failed(ExitCode.FAILURE)
            self.outcomes.append(Outcome(tid, self._status(tid), ExitCode.FAILURE))
            return False
        agent = Agent(tid, description, project, proc, start=start)
        self.running[key] = agent
        self.view.info(f"[{key}] ▶ Task {len(self.tried)}: {description} "
                       f"({queue.short(tid, self.log.read())}) on {branch_of(tid)}, "
                       f"claimed as {self.actor}")
        self.view.state(key, description, "working")
        return True

    def _waiting_on_running(self) -> list[str]:
        """Tasks that wait on a task an agent of this run still works on (its
        dependents, the epic it is a child of): its work is not in any branch a worktree
        starts from until that agent has ended (and, with --merge, its branch is
        merged), so they wait for that. Blocked ones too: the agent may close its task
        between this read and the claim's, making them ready there."""
        if not self.running:
            return []
        busy = {agent.tid for agent in self.running.values()}
        qs = queue.state(self.log.read(), about=busy)
        waiting: set[str] = set()
        for tid in busy:
            waiting.update(qs.dependents.get(tid, ()))
            if tid in qs.parent:
                waiting.add(qs.parent[tid])
        return sorted(waiting)

    def _spawn(self, project: Path, tid: str) -> subprocess.Popen[bytes]:
        env = {**os.environ, "AIDP_DIR": str(project), "AIDP_TASK": tid,
               "AIDP_ACTOR": self.actor}
        proc = subprocess.Popen(
            [sys.executable, "-m", "aidp.agent.parallel.worker"], cwd=project, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,  # only the run signals it: one SIGINT, not two
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        try:
            proc.stdin.write(job_for(
                root=project, home=self.log.root, tid=tid, actor=self.actor,
                agent=self.agent, max_continuations=self.limits.max_continuations,
                timeout=self.limits.timeout, guidance=self.guidance, since=self.started))
            proc.stdin.close()
        except OSError:
            pass  # it died at once: its exit code says so
        key = hex_of(tid)
        for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            threading.Thread(target=self._read, args=(key, name, stream), daemon=True).start()
        return proc

    def _read(self, key: str, name: str, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self._lines.put((key, name, raw))
        stream.close()
        self._lines.put((key, name, None))

    # --- what the workers say ---------------------------------------------------------

    def _pump(self, wait: float) -> None:
        """Show what arrived (waiting up to `wait` seconds for it); settle ended agents."""
        try:
            item = self._lines.get(timeout=wait)
        except queues.Empty:
            return
        with self._whole():  # an agent's end is settled whole: outcome, commit, merge
            while True:
                self._handle(*item)
                try:
                    item = self._lines.get_nowait()
                except queues.Empty:
                    return

    def _handle(self, key: str, stream: str, raw: bytes | None) -> None:
        agent = self.running.get(key)
        if agent is None:
            return
        if raw is None:
            agent.open_streams -= 1
            if agent.open_streams == 0:
                agent.exit_code = _exit_code(agent.proc)
                self._ended(agent)
            return
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        if stream == "stderr":
            self.view.event(key, "agent_err", text)
            return
        try:
            message: Any = orjson.loads(raw)
            kind, said = str(message["kind"]), str(message["text"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            kind, said = "agent", text
        if kind == READY and not agent.ready:
            agent.ready = True
            if self.interrupted:  # the stop it could not take before: now it can
                _signal(agent.proc, signal.SIGINT)
            return
        self.view.event(key, kind, said)

    # --- an agent ended ---------------------------------------------------------------

    def _ended(self, agent: Agent) -> None:
        del self.running[agent.key]
        code = agent.exit_code or 0
        if code:
            self._failed(code)
            self._release_if_held(agent.tid)
        self._copy_records(agent)
        agent.status = self._status(agent.tid)
        paused = code == 0 and agent.status == "in_progress" and self._held(agent.tid)
        if self.interrupted:
            agent.kept = "interrupted"
        elif paused:
            agent.kept = "the agent paused for you; the task stays claimed"
        else:
            agent.kept = self.checkout.finish(agent.tid)
        if self.merge and not self.interrupted and agent.status == "done" and not code:
            why = self.checkout.merge(agent.tid)
            agent.merged = why is None
            if why is None:
                gone = " (branch deleted)" if self.checkout.drop_branch(agent.tid) else ""
                self.view.info(f"[{agent.key}] ✓ Merged {branch_of(agent.tid)} into "
                               f"{self.checkout.branch}{gone}")
            else:
                self.view.warning(f"[{agent.key}] Not merged: {branch_of(agent.tid)} ({why}); "
                                  f"it is left for you: git merge {branch_of(agent.tid)}")
        ended = f"ended: {agent.status}, exit code {code}"
        if agent.kept is not None:
            path = self.checkout.worktree_path(agent.tid)
            self.view.info(f"[{agent.key}] Kept the worktree {path} ({agent.kept})")
            self.view.state(agent.key, agent.description, "kept")
        else:
            self.view.state(agent.key, agent.description, "ended")
        self.view.info(f"[{agent.key}] ■ {agent.description} {ended}")
        self.outcomes.append(Outcome(agent.tid, agent.status, code, agent.merged))

    def _failed(self, code: int) -> None:
        if self.first_failure is None:
            self.first_failure = code

    def _status(self, tid: str) -> str:
        task = self.log.read().tasks.get(tid)
        return str(task.get("status", "")) if task is not None else ""

    def _held(self, tid: str) -> bool:
        """Whether the task is in progress and held by this run's actor (or nobody)."""
        fold = self.log.read()
        task = fold.tasks.get(tid)
        if task is None or task.get("status") != "in_progress":
            return False
        holder = queue.state(fold).holder(task)
        return holder is None or holder["assignee"] == self.actor

    def _release_if_held(self, tid: str) -> None:
        """The worker releases its task when its agent fails; this covers a worker that
        could not (killed, crashed)."""
        if not self._held(tid):
            return
        try:
            release_tasks(self.project, [tid])
        except AidpError as exc:
            self.view.warning(f"Cannot release task {tid}: {exc}")
            return
        self.view.info(f"[{hex_of(tid)}] ↩ Released task {queue.short(tid, self.log.read())}")

    def _copy_records(self, agent: Agent) -> None:
        copy_home(self.log, TaskLog(agent.project), agent.start, self.view.warning)

    # --- Ctrl-C -----------------------------------------------------------------------

    def _stop_all(self) -> None:
        """SIGINT to every worker (each stops its agent's group and releases its task),
        then wait for them, SIGKILL after a grace (or a second Ctrl-C). The agents that
        ended before are settled already (a Ctrl-C waits for a step under way)."""
        self.interrupted = True
        stopping = len(self.running)
        for agent in self.running.values():
            if agent.ready:  # else when it says it is (a SIGINT before could kill it mid-start)
                _signal(agent.proc, signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        try:
            while self.running and time.monotonic() < deadline:
                self._pump(0.2)
        except KeyboardInterrupt:
            pass
        with held_interrupts():  # what is left is bookkeeping: no Ctrl-C cuts it short
            for agent in list(self.running.values()):
                _signal(agent.proc, signal.SIGKILL)
                agent.exit_code = _exit_code(agent.proc)
                agent.open_streams = 0
                self._ended(agent)
        if stopping:
            self.view.warning("Interrupted: every agent was stopped and its task released; "
                              "the worktrees are kept (listed above)")
        else:
            self.view.warning("Interrupted: no agent was running; nothing more is started")


def _signal(proc: subprocess.Popen[bytes], signum: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_code(proc: subprocess.Popen[bytes]) -> int:
    try:
        code = proc.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        _signal(proc, signal.SIGKILL)
        code = proc.wait()
    return 128 - code if code < 0 else code
