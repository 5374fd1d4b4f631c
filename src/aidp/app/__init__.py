"""The use cases every surface calls: the CLI, the MCP server (aidp.toolserver), the
hooks and `aidp run` (aidp.agent), the board. Plain values in, plain values out: a use
case parses no command line and prints nothing; the surface parses, calls, renders.

    project.py    open a project once (`Project`: root, tasklist, the store reader it
                  reads through, the session it works on); `StoreReader` imports the
                  store on the first read only
    filing.py     file a task: the one way (links, or not again while an open task has
                  its text, as options)
    changing.py   a move to another status (start, done, abandon, reopen), edit (its
                  body and type too), note, block/unblock; each returns what it did
                  with the short ids to show
    shown.py      show a task with everything linked to it, its body, type and close
                  reason (`show_task`: a detail panel's whole); tasks as shown now (the
                  join of a task and its queue keys is aidp.backlog.queue.shown)
    listing.py    list: the read plan for the shape the caller shows (streamed, the
                  store's bytes, or one query), and what that shape shows beside it
    queue_view.py ready and blocked, only the shown tasks decoded
    claiming.py   claim and release (what `aidp run`'s agent left claimed too), who acts
    leases.py     the lease a claim gets; a working holder's leases kept
    plans.py      a session's plan (TODO list): read, replace, change; every session's
                  list and the earlier ones, load one into a session
    report.py     `tasks stats`; `aidp report`: the stats, every task with the keys it
                  shows, the queue and every TODO list, as the page shows them
    timeline.py   a task's recorded states and queue records (`tasks history`), as one
                  timeline (the board's)
    overview.py   the whole backlog as the board shows it
    exchange.py   export to and import from other tools' formats
    prime.py      `aidp prime` and a session-start hook: the session-start context
    init.py       `aidp init`: set a project up for aidp and for git
"""
