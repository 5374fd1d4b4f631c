"""stdout and stderr as aidp writes them: never raising (a closed pipe, a full disk),
never failing on a character the locale cannot encode, and inert where a terminal
(or a person reading stderr) receives them (docs/security.md)."""

from __future__ import annotations

import codecs
import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


class Guarded(io.RawIOBase):
    """fd 1 or 2 that never raises: a write that fails (a full disk, a closed pipe, a
    closed descriptor) is remembered and the rest of the output dropped, so a command
    that already changed the tasklist finishes and says so by its exit code."""

    def __init__(self, fd: int, *, inert: bool = False) -> None:
        super().__init__()
        self.fd = fd
        self.error: OSError | None = None
        # inert: every byte passes through terminal.terminal_text first (a character
        # split between two writes waits for its end in the decoder).
        self._decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape") \
            if inert else None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        try:
            return os.isatty(self.fd)
        except OSError:
            return False

    def write(self, data: ReadableBuffer) -> int:
        view = memoryview(data).cast("B")
        size = len(view)
        if self.error is not None:
            return size
        if self._decoder is not None:
            from aidp.core.terminal import terminal_text

            view = memoryview(terminal_text(self._decoder.decode(bytes(view))).encode(
                "utf-8", "surrogateescape"))
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            self.error = exc
        return size


def _is_terminal(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


# aidp's own symbols, as plain text for a stdout that cannot encode them (an ASCII or
# Latin-1 locale); any other character that cannot be shown is written escaped (\uXXXX).
_PLAIN = {
    "✓": "+", "…": "...", "—": "-", "–": "-", "→": "->", "←": "<-", "≥": ">=", "≤": "<=",
    "·": "-", "↺": "<-", "↻": "~", "⏸": "||", "📋": "*", "📝": "*", "🔧": "*", "└": "`",
    "─": "-", "│": "|", "█": "#", "▏": "", "▎": "", "▍": "", "▌": "", "▋": "", "▊": "",
    "▉": "", "▲": "^", "●": "-", "▼": "v", "◇": "?", "×": "x", "−": "-",
}


def _plain_or_escaped(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start:exc.end]
    out = []
    for char in text:
        if char in _PLAIN:
            out.append(_PLAIN[char])
        else:
            code = ord(char)
            out.append(f"\\x{code:02x}" if code <= 0xFF else
                       f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out), exc.end


def guard_streams() -> tuple[Guarded, Guarded]:
    """Make stdout/stderr safe before any command runs: a closed descriptor is
    reopened on /dev/null (or a file opened later would take its number), and text that
    the locale's encoding cannot show is written escaped instead of failing."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            spare = os.open(os.devnull, os.O_RDWR)
            if spare != fd:
                os.dup2(spare, fd)
                os.close(spare)
    guards = []
    for fd, name in ((1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        encoding = getattr(old, "encoding", None) or "utf-8"
        errors = getattr(old, "errors", None) or "strict"
        # Python's C/POSIX locale streams are ASCII with surrogateescape, which fails
        # on any other character as surely as strict does.
        if (errors in ("strict", "surrogateescape", "backslashreplace")
                and codecs.lookup(encoding).name != "utf-8"):
            codecs.register_error("aidp-plain", _plain_or_escaped)
            errors = "aidp-plain"
        # What reaches a terminal is made inert (docs/security.md): stderr is always
        # for people (or an agent showing hook notes to them); stdout when it is a
        # terminal, else it is data (a pipe, a file) and carries its bytes exactly.
        guard = Guarded(fd, inert=name == "stderr" or _is_terminal(fd))
        line_buffering = guard.isatty() or name == "stderr"
        stream = io.TextIOWrapper(io.BufferedWriter(guard), encoding=encoding, errors=errors,
                                  line_buffering=line_buffering)
        setattr(sys, name, stream)
        guards.append(guard)
    return guards[0], guards[1]
