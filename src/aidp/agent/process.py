"""The agent process: its own process group, output line by line as it arrives, the
prompt fed without blocking, a deadline, and Ctrl-C stopping the whole group.

One thread, one selector: stdout and stderr are read and stdin is written as each is
ready, so a chatty agent never blocks on a full pipe and a large prompt never blocks
aidp. A process that leaves a child holding its pipes does not hold the run: once
the agent itself has exited, whatever is already in the pipes is read and the rest
is left behind.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# How often the loop looks at the agent while its pipes are quiet, and how long the
# group gets to exit on SIGINT/SIGTERM before SIGKILL.
POLL_SECONDS = 0.2
GRACE_SECONDS = 2.0
CHUNK = 65536

OnLine = Callable[[str, str], None]  # (stream "stdout" | "stderr", line without newline)


@dataclass
class Finished:
    exit_code: int | None  # None after a timeout
    timed_out: bool = False
    # Set when the agent exited 0 but its output says it failed (aidp.agent.events).
    failure: str | None = None


class StartError(Exception):
    """The program could not be started (not found, not executable)."""


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    stdin_text: str | None,
    on_line: OnLine,
    deadline: float | None = None,
    tick: Callable[[], None] | None = None,
) -> Finished:
    """Run the agent to completion. `deadline` is a time.monotonic() value; `tick` is
    called while the agent lives, at least every POLL_SECONDS (aidp renews its lease:
    aidp.backlog.queue.Keeper). Raises KeyboardInterrupt after stopping the group when
    interrupted."""
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: Ctrl-C and timeouts stop all of it
        )
    except OSError as exc:
        raise StartError(exc.strerror or str(exc)) from exc
    try:
        timed_out = _pump(proc, stdin_text, on_line, deadline, tick)
        if timed_out:
            _stop_group(proc, signal.SIGTERM)
            return Finished(exit_code=None, timed_out=True)
        return Finished(exit_code=_returncode(proc))
    except BaseException:
        _stop_group(proc, signal.SIGINT)
        raise
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.monotonic()


def _pump(proc: subprocess.Popen[bytes], stdin_text: str | None, on_line: OnLine,
          deadline: float | None, tick: Callable[[], None] | None = None) -> bool:
    """Move data until the agent is done; True when the deadline passed first."""
    pipes = _Pipes(proc, stdin_text, on_line)
    exited = False
    try:
        while pipes.reading:
            remaining = _remaining(deadline)
            if remaining is not None and remaining <= 0:
                return True
            wait = POLL_SECONDS if remaining is None else min(POLL_SECONDS, remaining)
            ready = pipes.select(0 if exited else wait)
            if tick is not None and not exited:
                tick()
            if not ready:
                if exited:
                    break  # the agent is gone and its pipes are drained
                exited = proc.poll() is not None
                continue
            for fd in ready:
                pipes.move(fd)
        pipes.close_stdin()
    finally:
        pipes.close()
    remaining = _remaining(deadline)
    try:
        proc.wait(timeout=None if remaining is None else max(remaining, 0))
    except subprocess.TimeoutExpired:
        return True
    return False


class _Pipes:
    """The agent's pipes on one selector: the prompt written to its stdin as the agent
    takes it, its stdout and stderr read as they come and cut into lines for
    `on_line`. `reading`: how many of its outputs are still open."""

    def __init__(self, proc: subprocess.Popen[bytes], stdin_text: str | None,
                 on_line: OnLine) -> None:
        self.proc, self.on_line = proc, on_line
        self.selector = selectors.DefaultSelector()
        self.buffers: dict[int, bytearray] = {}
        self.names: dict[int, str] = {}
        for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            assert stream is not None
            fd = stream.fileno()
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)
            self.buffers[fd], self.names[fd] = bytearray(), name
        self.reading = len(self.buffers)
        self.pending = memoryview((stdin_text or "").encode("utf-8"))
        self.stdin_fd: int | None = None
        if proc.stdin is not None:
            if self.pending:
                self.stdin_fd = proc.stdin.fileno()
                os.set_blocking(self.stdin_fd, False)
                self.selector.register(self.stdin_fd, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()

    def select(self, timeout: float) -> list[int]:
        """The descriptors ready within `timeout` seconds."""
        return [key.fd for key, _events in self.selector.select(timeout)]

    def move(self, fd: int) -> None:
        """Write the next chunk of the prompt, or read what an output has, as `fd` is."""
        if fd == self.stdin_fd:
            try:
                written = os.write(fd, self.pending[:CHUNK])
                self.pending = self.pending[written:]
            except BlockingIOError:
                return
            except BrokenPipeError:
                self.pending = self.pending[:0]  # the agent does not read its stdin
            if not self.pending:
                self.close_stdin()
            return
        try:
            data = os.read(fd, CHUNK)
        except BlockingIOError:
            return
        if not data:
            self.selector.unregister(fd)
            self.reading -= 1
            _flush(self.buffers[fd], self.names[fd], self.on_line, final=True)
            return
        self.buffers[fd] += data
        _flush(self.buffers[fd], self.names[fd], self.on_line, final=False)

    def close_stdin(self) -> None:
        if self.stdin_fd is not None:
            self.selector.unregister(self.stdin_fd)
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.stdin_fd = None

    def close(self) -> None:
        """Hand on any last line left without its newline; stop selecting."""
        for fd, buffer in self.buffers.items():
            if buffer:
                _flush(buffer, self.names[fd], self.on_line, final=True)
        self.selector.close()


def _flush(buffer: bytearray, name: str, on_line: OnLine, *, final: bool) -> None:
    while True:
        cut = buffer.find(b"\n")
        if cut < 0:
            break
        raw = bytes(buffer[:cut])
        del buffer[: cut + 1]
        on_line(name, _decode(raw))
    if final and buffer:
        raw = bytes(buffer)
        buffer.clear()
        on_line(name, _decode(raw))


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace").removesuffix("\r")


def _returncode(proc: subprocess.Popen[bytes]) -> int:
    code = proc.wait()
    # Killed by a signal: report it the way a shell would (128 + N).
    return 128 - code if code < 0 else code


def _stop_group(proc: subprocess.Popen[bytes], first: signal.Signals) -> None:
    """Stop the agent's whole process group: `first`, then SIGKILL after a grace."""
    pgid = proc.pid  # start_new_session: the group is led by the agent
    try:
        os.killpg(pgid, first)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    except KeyboardInterrupt:
        pass  # a second Ctrl-C: go straight to SIGKILL
    try:
        os.killpg(pgid, signal.SIGKILL)  # whatever is left of the group
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=GRACE_SECONDS)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        pass
