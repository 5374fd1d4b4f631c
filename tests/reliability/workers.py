"""Child processes for the crash and stress tests: `python workers.py MODE SEED [ARG]`.

Each runs aidp's real CLI entry point (`aidp.cli.run`) in a loop, in its own process,
on the project named by AIDP_DIR, and acknowledges every command that returned 0 with
one line on stdout, written with a single os.write *after* the command returned:

    add <id>            tasks add succeeded and printed <id>
    done <id>           tasks done succeeded
    abandon <id>        tasks abandon succeeded
    status <id> <status> <updated_at>   (stress) the record the command wrote
    todo <content>      (stress) todo add succeeded
    tick <position>     (stress) todo tick of that position succeeded
    compact / repair    the maintenance command finished

A test may SIGKILL the process at any moment: what was acknowledged must survive.
"""

from __future__ import annotations

import io
import os
import random
import sys
import time

import orjson


def call(*args: str) -> tuple[int, str, str]:
    """Run `aidp ARGS` in this process; (exit code, stdout, stderr)."""
    from aidp.cli import run

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = run(list(args))
    finally:
        sys.stdout, sys.stderr = saved
    return int(code), out.getvalue(), err.getvalue()


class _Out(io.StringIO):
    """A StringIO with the bytes buffer render.write_bytes needs."""

    def __init__(self) -> None:
        super().__init__()
        self.buffer = io.BytesIO()

    def getvalue(self) -> str:  # type: ignore[override]
        return super().getvalue() + self.buffer.getvalue().decode()


def call_json(*args: str) -> tuple[int, object]:
    from aidp.cli import run

    out, err = _Out(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = run(list(args))
    finally:
        sys.stdout, sys.stderr = saved
    text = out.getvalue()
    return int(code), (orjson.loads(text) if code == 0 and text.strip() else None)


def ack(*words: str) -> None:
    os.write(1, (" ".join(words) + "\n").encode())


def writer(rnd: random.Random) -> None:
    """tasks add / tasks done in a loop, forever."""
    mine: list[str] = []
    n = 0
    while True:
        n += 1
        if mine and rnd.random() < 0.4:
            tid = mine.pop(rnd.randrange(len(mine)))
            code, _out, _err = call("tasks", "done", tid)
            if code == 0:
                ack("done", tid)
        else:
            code, out, _err = call_quiet_add(f"write {os.getpid()}-{n} " + "x" * rnd.randrange(400))
            if code == 0:
                ack("add", out.strip())
                mine.append(out.strip())


def call_quiet_add(description: str) -> tuple[int, str, str]:
    return call("tasks", "add", "-q", description)


def maintainer(rnd: random.Random) -> None:
    """tasks compact / tasks repair in a loop, forever."""
    while True:
        command = rnd.choice(["compact", "repair"])
        code, _out, _err = call("tasks", command)
        if code == 0:
            ack(command)


MIN_STATUS_WRITES = 3


def stress(rnd: random.Random, seconds: float, with_todo: bool) -> None:
    """A mix of backlog and TODO writes on shared tasks for `seconds` after start-up,
    and on until this worker has had MIN_STATUS_WRITES backlog writes acknowledged (so
    a busy machine still gets contention, not 16 idle workers), for at most a minute."""
    until = time.time() + seconds
    hard_stop = until + 60
    status_writes = 0
    from aidp.tasklist.log import TaskLog
    from aidp.tasklist.paths import find_root

    log = TaskLog(find_root())
    session = "stress"
    while time.time() < until or (status_writes < MIN_STATUS_WRITES and time.time() < hard_stop):
        roll = rnd.random()
        if with_todo and roll < 0.25:
            content = f"todo {os.getpid()} {rnd.randrange(10**9)}"
            code, _o, _e = call("todo", "add", "--session", session, content)
            if code == 0:
                ack("todo", content)
            continue
        if with_todo and roll < 0.40:
            code, shown = call_json("todo", "show", "--session", session, "--json")
            items = shown.get("items", []) if isinstance(shown, dict) else []
            if not items:
                continue
            position = rnd.randrange(len(items)) + 1
            code, _o, _e = call("todo", "tick", "--session", session, str(position))
            if code == 0:
                ack("tick", str(position))
            continue
        # A few hot tasks that everybody changes at once, and new ones now and then.
        hot = sorted(log.read().tasks)[:6]
        if len(hot) < 6 or roll > 0.9:
            code, task = call_json("tasks", "add", "--json", f"stress {os.getpid()}")
        elif roll > 0.75:
            code, task = call_json("tasks", "start", "--json", rnd.choice(hot))
        elif roll > 0.6:
            code, task = call_json("tasks", "abandon", "--json", rnd.choice(hot),
                                   f"stress {os.getpid()}")
        elif roll > 0.5:
            code, task = call_json("tasks", "reopen", "--json", rnd.choice(hot))
        else:
            code, task = call_json("tasks", "done", "--json", rnd.choice(hot))
        if code == 0 and isinstance(task, dict):
            ack("status", task["id"], task["status"], task["updated_at"])
            status_writes += 1


def main() -> None:
    mode, seed = sys.argv[1], int(sys.argv[2])
    rnd = random.Random(seed)
    if mode == "writer":
        writer(rnd)
    elif mode == "maintainer":
        maintainer(rnd)
    elif mode == "stress":
        stress(rnd, float(sys.argv[3]), with_todo=sys.argv[4] == "1")
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
