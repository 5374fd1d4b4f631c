"""`aidp run --backlog --parallel N`: agents at once, each in a worktree of its own.

    run.py       the schedule: claims each task in the starting worktree, starts a worker
                 per agent, settles each agent that ends (its task's records copied into
                 the starting tasklist, its worktree removed or kept, its branch merged)
    worktree.py  what it asks of git: the checks before anything starts, the task's
                 worktree (`.aidp/worktrees/<hex>`, branch `aidp/<hex>`), the tasklist
                 committed alone, merges, removal
    worker.py    one agent: `python -m aidp.agent.parallel.worker`, `run --backlog`'s
                 drain on that one task, its messages back as JSON lines
    view.py      what the terminal shows: plain lines, or a rich Live block

A process per agent keeps each loop's state, the store's caches and the agent's
process group apart, and Ctrl-C is one SIGINT per worker. Reader threads feed the
workers' lines to the one thread that shows them and settles each agent. A settling
step (and a claim with its worktree) runs whole: `worktree.held_interrupts` holds
Ctrl-C and SIGTERM back until it is done, and git runs in a session of its own
(`git_runner.own_session`), so the terminal's SIGINT reaches neither a merge nor a
`git worktree add` half-way.
"""
