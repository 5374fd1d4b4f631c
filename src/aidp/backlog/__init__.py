"""The backlog: the persistent tasks and the work queue on top of them.

    tasks.py     add, set_status, the list's query (`find`), stats
    ids.py       which task an id names, and the shortest part that names it
    history.py   a task's recorded states, oldest first; `undo`
    insights.py  stats and report series from a fold
    details.py   what a task holds beyond its record: body, type, close reason
    draft.py     a task as a text to edit in $EDITOR, and that text read back as an edit
    queue/       the work queue: dependencies, epics, claims, notes (one public API,
                 `aidp.backlog.queue`)
"""
