"""Text that may reach a terminal, whoever wrote it: `inert` for one value shown in
aidp's output, `terminal_text` for all of it on its way out (pager, streams).

Everything aidp shows comes from data that anyone (or any agent) may have written, so
no control character or escape sequence it holds is ever sent to a terminal. Pure; the
views (render, charts, the pager), git's diff driver and the TODO list text use it.
"""

from __future__ import annotations

import re
from functools import cache

from aidp.core.model import CONTROL_CHARS, INVISIBLE_CHARS


# Control characters (escape sequences: colours, cursor moves, OSC 8 links, titles) and
# the invisible ones that change what a reader sees (model.INVISIBLE_CHARS: every
# Unicode format character, Zl, Zp and the other default-ignorable code points).
# tests/reliability/test_model_output.py checks the set against unicodedata.
# The patterns are compiled on first use (~0.3 ms each at start-up, which most commands
# never need: printable ASCII passes as it is).
@cache
def _control_re() -> re.Pattern[str]:
    return re.compile(f"[{CONTROL_CHARS}{INVISIBLE_CHARS}]")


def inert(text: object) -> str:
    """Text safe to print: control characters (escape sequences included) are shown as
    \\xNN, invisible format characters (bidi overrides, zero-width, …) as \\uNNNN,
    instead of being sent to the terminal."""
    value = text if isinstance(text, str) else str(text)
    if value.isascii() and value.isprintable():  # no control character, nothing invisible
        return value
    return _control_re().sub(_escaped, value)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# The last guard, under every inert(): what reaches a terminal (stderr always,
# stdout when it is one) passes through terminal_text. aidp's own text holds no control
# character but newlines, tabs and its colours (SGR: ESC [ digits m), so everything else
# that could move the cursor, reset the screen, open a link, set a title or reorder and
# hide text (C0, C1, ESC, DEL, bidi and the other invisible characters, a C1 byte of a
# Latin-1 stream) is shown escaped, whoever wrote it and whichever path printed it.
@cache
def _terminal_re() -> re.Pattern[str]:
    return re.compile(
        f"\x1b\\[[0-9;]*m|[\x00-\x08\x0b-\x1f\x7f-\x9f\udc80-\udc9f{INVISIBLE_CHARS}]")


def terminal_text(text: str) -> str:
    """`text` as it may reach a terminal: SGR colours, newlines and tabs kept, every
    other control, escape or invisible character shown as \\uNNNN (a C1 byte that is
    not UTF-8 as \\xNN). JSON stays valid and means the same: such a character can only
    be inside one of its strings, where \\uNNNN is its escape."""
    return _terminal_re().sub(_terminal_escaped, text)


def _terminal_escaped(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) > 1:
        return found  # aidp's own colour
    code = ord(found)
    if 0xDC80 <= code <= 0xDC9F:  # a C1 byte of a stream that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code > 0xFFFF:  # as a JSON surrogate pair, which text readers take as well
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"
