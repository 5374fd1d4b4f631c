"""Opening the board in the browser without putting its token on a command line.

A browser is started with the address to open as an argument, and every user of the
machine can read a process's arguments (`ps`, /proc/PID/cmdline): the board's URL
there would give its token — and the board's API — to any of them. So the browser is
given a file instead, readable by this user alone (0600 in a 0700 folder of its own),
that sends it on to the URL (as Jupyter opens its server); the file goes when the
board stops. The URL itself is printed on stdout only.
"""

from __future__ import annotations

import html
import os
import shutil
import tempfile
from pathlib import Path

_NAME = "open.html"


def page_file(url: str) -> Path:
    """A private file whose page sends a browser on to `url` (the caller removes it:
    `remove`)."""
    folder = Path(tempfile.mkdtemp(prefix="aidp-board-"))  # 0700, a new name
    path = folder / _NAME
    shown = html.escape(url, quote=True)
    text = ('<!doctype html>\n<meta charset="utf-8">\n'
            '<meta name="referrer" content="no-referrer">\n'
            f'<meta http-equiv="refresh" content="0;url={shown}">\n'
            f'<title>aidp board</title>\n<p><a href="{shown}">Open the board</a></p>\n')
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def remove(path: Path) -> None:
    """The file `page_file` made, and its folder."""
    if path.name == _NAME and path.parent.name.startswith("aidp-board-"):
        shutil.rmtree(path.parent, ignore_errors=True)
