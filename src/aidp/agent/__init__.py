"""The agent layer: `aidp run`'s loop, `aidp hook`, `aidp setup`. Imported only by those
commands (and `aidp mcp`), never by the hot ones (start-up speed).

    presets.py    which agent, its command line, how the prompt reaches it
    process.py    the agent process: own process group, live lines, timeout, Ctrl-C
    agents/       one adapter per agent CLI behind agents/base.Adapter, and their registry
    events.py     reading its output: plain text, or JSON events (the adapters' dialects)
    progress.py   did a turn make progress: TODO list, backlog, git work tree
    prompt.py     the prompt and the continuation prompt
    transcript.py the run's record under .aidp/runs/
    loop.py       turns, signals, plans
    continuation.py the continuation policy: Limits, which item, resume, user prompts
    pending.py    the pending backlog at the start of a run, ready tasks first
    hooks.py      `aidp hook`: an agent's hook JSON in, its answer out; hook_state.py its state
    integrate*.py `aidp setup`: hooks, MCP registration, instructions in an agent's settings
"""
