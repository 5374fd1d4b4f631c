"""One agent of `aidp run --parallel`: a process of its own (`python -m
aidp.agent.parallel.worker`), started by aidp.agent.parallel.run in the task's worktree.

It reads its job (one JSON object) on stdin, works on that one claimed task exactly as
`run --backlog` does (aidp.agent.backlog: the task's own session, the completion gate,
follow-ups, releasing the task when the agent fails or is interrupted), and writes
each message the loop emits as one JSON line `{"kind", "text"}` on stdout. Its exit
code is the task's: 0, the agent's own code, 124 on timeout, 130 when interrupted
(SIGINT or SIGTERM stops the agent's process group first). A process of its own per
agent keeps each loop's state, the store's caches and the agent's process group
apart, and lets the run stop every agent with one signal each. Its first line, `{"kind":
"ready"}`, says its handlers are in place: the run sends SIGINT only after it, as one
that came during Python's start would kill the worker half started (exit 1, a
traceback, the task not released by it).
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import orjson

from aidp.core.errors import AidpError, ExitCode

READY = "ready"  # the first line: the worker stops cleanly on SIGINT from now on


def job_for(*, root: Path, home: Path, tid: str, actor: str, agent: Any,
            max_continuations: int, timeout: float | None, guidance: str | None,
            since: int | None = None) -> bytes:
    """The job line the run writes to a worker's stdin (`agent`: an AgentSpec; `home`:
    the starting worktree's project, where the transcript goes, as it outlives the
    task's worktree; `since`: when the run started, µs: what its agents filed since is
    not filed again)."""
    return orjson.dumps({
        "root": str(root), "home": str(home), "task": tid, "actor": actor, "guidance": guidance,
        "since": since,
        "max_continuations": max_continuations, "timeout": timeout,
        "agent": {"label": agent.label, "argv": list(agent.argv), "source": agent.source,
                  "preset": agent.preset, "env": [list(pair) for pair in agent.env]},
    }) + b"\n"


def _say(kind: str, text: str) -> None:
    sys.stdout.buffer.write(orjson.dumps({"kind": kind, "text": text}) + b"\n")
    sys.stdout.buffer.flush()


def main() -> int:
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    _say(READY, "")
    try:
        return _work(orjson.loads(sys.stdin.buffer.readline()))
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except AidpError as exc:
        _say("warning", str(exc))
        return int(exc.exit_code)


def _work(job: dict[str, Any]) -> int:
    from aidp.agent.backlog import Drain, session_for
    from aidp.agent.continuation import Limits
    from aidp.agent.loop import Loop, Message
    from aidp.agent.presets import AgentSpec
    from aidp.agent.transcript import Transcript
    from aidp.app.project import Project
    from aidp.tasklist.log import TaskLog

    root, tid = Path(job["root"]), str(job["task"])
    spec = job["agent"]
    agent = AgentSpec(label=spec["label"], argv=tuple(spec["argv"]), source=spec["source"],
                      preset=spec["preset"], env=tuple((k, v) for k, v in spec["env"]))

    def emit(message: Message) -> None:
        _say(message.kind, message.text)

    loop = Loop(project=Project(root, create_root=True), session=session_for(tid), agent=agent,
                emit=emit,
                limits=Limits(max_continuations=job["max_continuations"],
                              timeout=job["timeout"]))
    loop.env["AIDP_TASK"] = tid
    loop.filed_since = job.get("since")
    loop.transcript = Transcript(TaskLog(Path(job["home"])), session_for(tid))
    if loop.transcript.error:
        _say("warning", loop.transcript.error)
    try:
        return Drain(loop, actor=job["actor"], guidance=job["guidance"]).work_on(tid)
    finally:
        loop.close()


if __name__ == "__main__":
    sys.exit(main())
