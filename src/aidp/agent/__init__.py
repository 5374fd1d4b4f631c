"""The surfaces that work with an agent CLI: `aidp run`, `aidp hook`, `aidp setup`,
`aidp agents`. Imported only by those commands, never by the hot ones (start-up).

    presets.py       which agent, its command line, how the prompt reaches it
    process.py       the agent process: own process group, live lines, timeout, Ctrl-C
    agents/          one adapter per agent CLI behind agents/base.Adapter, and their
                     registry (docs/architecture.md, "Where the layers meet")
    events.py        reading its output: plain text, or JSON events (the adapters' dialects)
    signals.py       `File task:`, `Update task:`, `Todo pause:` in the agent's text
    progress.py      did a turn make progress: TODO list, backlog, git work tree
    prompt.py        the prompt and the continuation prompt
    transcript.py    the run's record under .aidp/runs/
    loop.py          turns, signals, plans
    continuation.py  the continuation policy (shared with hook/): which item, resume
    pending.py       the pending backlog at the start of a run, ready tasks first
    backlog.py       `run --backlog`: one claimed task at a time
    mcp_handover.py  `aidp mcp` handed to the presets that take MCP servers for one run
    inventory.py     `aidp agents`: installed versions, read from package files
    hook/            `aidp hook`: an agent's hook JSON in, its answer out; its local state
    setup/           `aidp setup`: hooks, MCP registration, instructions in an agent's
                     project settings
    parallel/        `run --backlog --parallel N`: agents at once, a worktree each
"""
