"""`aidp tasks edit ID` with no field option: the task in `$VISUAL`/`$EDITOR`, as `git
commit` opens its message (the text and how it is read back: aidp.backlog.draft)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from aidp.app.changing import Changed, edit_task
from aidp.app.shown import show_task
from aidp.backlog import draft
from aidp.cli.common import Env
from aidp.core.errors import AidpError, ExitCode, InvalidInput
from aidp.core.terminal import inert


class EditorFailed(AidpError):
    """The editor could not be run or did not end well: nothing was written (exit 1)."""

    exit_code = ExitCode.FAILURE


def editor_command() -> str | None:
    """$VISUAL, else $EDITOR, else `vi` when there is a terminal to run it on; None: no
    editor to run (then --body is the way)."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return "vi" if sys.stdin.isatty() and sys.stdout.isatty() else None


def edit_in_editor(e: Env, ref: str) -> tuple[Changed | None, str]:
    """Open the task in the editor and apply what was changed there: (the change, or
    None when nothing was written, and the line to say)."""
    from aidp.trust.person import refuse_for_agent

    refuse_for_agent("'aidp tasks edit' without a field option, which starts $VISUAL or "
                     "$EDITOR,", "Give the change as options (--body TEXT, --body-file -, "
                     "--description, --type, …)")
    command = editor_command()
    if command is None:
        raise InvalidInput("No editor to open: $VISUAL and $EDITOR are unset and there is "
                           "no terminal; pass the change as options (--body TEXT, "
                           "--body-file F, --description, --type, …)")
    detail = show_task(e.project, ref)  # the task as shown: its type and body too
    task, held, tid = detail.task, detail.shown, detail.task["id"]
    short = detail.short_ids.get(tid) or tid
    before = draft.values(task, held)
    # In the temporary folder, whatever the id: a cloned tasklist's id may hold `/..`.
    fd, name = tempfile.mkstemp(prefix=f"aidp-task-{_file_part(short)}-", suffix=".md")
    path = Path(name)
    keep = False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(draft.compose(task, held, short))
        _run(command, path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise EditorFailed(f"Cannot read the edited file {inert(name)} ({exc}); "
                               "nothing was written") from None
        try:
            edit = draft.read(text, before)
            if edit is None:
                return None, "Nothing changed: the file was emptied"
            if edit.empty():
                return None, f"Nothing changed: [{inert(short)}] was saved as it was"
            change = edit_task(e.project, tid, description=edit.description,
                               priority=edit.priority, add_tags=edit.add_tags,
                               remove_tags=edit.remove_tags, body=edit.body,
                               task_type=edit.task_type)
        except InvalidInput as exc:
            keep = True  # what was typed is not lost
            raise InvalidInput(f"{exc}; nothing was written (your text is kept in "
                               f"{inert(name)})") from None
        return change, ""
    finally:
        if not keep:
            path.unlink(missing_ok=True)


def _file_part(short: str) -> str:
    """`short` as part of a file name: its letters, digits and `_` (at most 32)."""
    return "".join(c for c in short if c.isascii() and (c.isalnum() or c == "_"))[:32]


def _run(command: str, path: Path) -> None:
    """The editor on `path`: the command's words as a shell splits them (quotes
    honoured, so `code --wait` and `"/opt/My Editor/edit" -w` work), run without a
    shell (aidp runs no shell: docs/security.md)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise EditorFailed(f"Cannot read the editor command {inert(command)!r} ({exc}); "
                           "nothing was written") from None
    try:
        done = subprocess.run([*words, str(path)], check=False)
    except OSError as exc:
        raise EditorFailed(f"Cannot run the editor {inert(command)!r} ({exc.strerror}); "
                           "nothing was written") from None
    if done.returncode != 0:
        raise EditorFailed(f"The editor {inert(command)!r} exited with status "
                           f"{done.returncode}; nothing was written")
