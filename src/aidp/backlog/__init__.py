"""The backlog: the persistent tasks and the work queue on top of them.

    tasks.py     add, set_status, the list's query (`find`), stats
    ids.py       which task an id names, and the shortest part that names it
    history.py   a task's recorded states, oldest first; `undo`
    insights.py  stats and report series from a fold
    queue/       the work queue: dependencies, epics, claims, notes (one public API,
                 `aidp.backlog.queue`)
"""
