"""Values and errors, below everything. Pure: no I/O.

    model.py      records, statuses, priorities, ids, timestamps, validation
    plain.py      `Plain`, the base of value classes (no dataclass at start-up)
    terminal.py   what may reach a terminal: `inert`, `terminal_text`
    when.py       `--since`/`--older-than` and ages
    errors.py     the error types and the exit codes they map to (`ExitCode`)
    toml_text.py  the one reader of TOML a repository wrote

A record is `model.Record`, a `dict[str, Any]` checked by aidp.tasklist.line and
`model` when read; TODO items are typed (`aidp.todos.TodoItem`: TypedDicts, so stored
keys this version does not know are kept).
"""
