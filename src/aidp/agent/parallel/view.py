"""What `aidp run --parallel` shows: each agent's events prefixed by its task
(`[1a2b3c4d] …`, the 8 hex characters of its branch), and one line per running agent
(its task and its state).

On a terminal the agents' lines are a rich Live block under the scrolling events;
otherwise (a pipe, a file, `--json`'s stderr) each change of state is a plain line of
its own. Everything an agent or a task says is shown inert (aidp.core.terminal.inert): no
markup read, control characters escaped.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

from aidp.core.terminal import inert
from aidp.views import render

if TYPE_CHECKING:
    from rich.text import Text

STATE_WIDTH = 60  # how much of a task's description its live line shows


class PlainView:
    """Lines only: events and state changes, each prefixed by the task."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.paint = render.Painter(render.color_enabled(out))
        self.paint_err = render.Painter(render.color_enabled(sys.stderr))

    def __enter__(self) -> PlainView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        pass

    def event(self, key: str, kind: str, text: str) -> None:
        """One message of an agent's loop (aidp.agent.loop.Message kinds)."""
        prefix = f"[{key}] "
        shown = inert(text)
        if kind in ("agent_err", "warning", "notice"):
            label = {"warning": "Warning: ", "notice": "Agent: "}.get(kind, "")
            style = "yellow" if kind != "agent_err" else ""
            line = f"{label}{shown}"
            self._err(prefix + (self.paint_err(line, style) if style else line))
            return
        style = {"tool": "dim", "filed": "green", "continuation": "yellow"}.get(kind, "")
        if kind == "tool":
            shown = f"🔧 {shown}"
        self._out(prefix + (self.paint(shown, style) if style else shown))

    def state(self, key: str, description: str, state: str) -> None:
        """An agent's live line: none on plain output (its start and end are lines of
        their own there, shown by `info`)."""

    def info(self, text: str) -> None:
        self._out(inert(text))

    def warning(self, text: str) -> None:
        self._err(self.paint_err(f"Warning: {inert(text)}", "yellow"))

    def _out(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _err(self, text: str) -> None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


class LiveView(PlainView):
    """On a terminal: the same events scroll above a block of one line per agent."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        from rich.console import Console
        from rich.live import Live

        # The live block moves the cursor, which aidp's guarded terminal stream shows
        # escaped (aidp.cli.streams): the console writes to the terminal's descriptor
        # itself. Everything it is given is inert already (terminal.inert), so its own
        # cursor moves and colours are the only controls that reach the terminal.
        out.flush()
        self.raw: TextIO = open(  # noqa: SIM115 - closed in close()
            os.dup(out.fileno()), "w", encoding=getattr(out, "encoding", None) or "utf-8",
            errors="replace", closefd=True)
        self.console = Console(file=self.raw, highlight=False, markup=False, emoji=False)
        self.lines: dict[str, str] = {}
        self.live = Live(self._render(), console=self.console, refresh_per_second=4,
                         transient=True, redirect_stdout=False, redirect_stderr=False)
        self.live.start()

    def close(self) -> None:
        if self.live.is_started:
            self.live.stop()
        self.raw.close()

    def _render(self) -> Text:
        from rich.text import Text

        if not self.lines:
            return Text("")
        return Text("\n".join(f"[{k}] {v}" for k, v in self.lines.items()), style="bold",
                    no_wrap=True, overflow="ellipsis")

    def state(self, key: str, description: str, state: str) -> None:
        if state in ("ended", "kept"):
            self.lines.pop(key, None)
        else:
            self.lines[key] = f"{inert(state)}: {inert(_cut(description))}"
        self.live.update(self._render(), refresh=True)

    def event(self, key: str, kind: str, text: str) -> None:
        if key in self.lines and kind in ("tool", "agent", "filed", "continuation"):
            what = {"tool": "🔧 "}.get(kind, "")
            head = self.lines[key].split(" · ", 1)[0]
            self.lines[key] = f"{head} · {what}{_cut(inert(text), 40)}"
        super().event(key, kind, text)
        self.live.update(self._render(), refresh=False)

    def _out(self, text: str) -> None:
        from rich.text import Text

        self.console.print(Text.from_ansi(text), soft_wrap=True)

    def _err(self, text: str) -> None:
        from rich.text import Text

        if sys.stderr is self.out or sys.stderr.isatty():  # the same terminal: above the block
            self.console.print(Text.from_ansi(text), soft_wrap=True)
        else:
            super()._err(text)


def _cut(text: str, width: int = STATE_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def view_for(out: TextIO) -> PlainView:
    """Live lines on a terminal, plain lines otherwise."""
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        return LiveView(out)
    return PlainView(out)
