"""What a repository may make aidp run (docs/security.md).

    gate.py     the only reader of .aidp/config.toml and config.local.toml: default-deny,
                a command line there runs only after `aidp trust`
    scope.py    what a trusted command may load without asking, so trusting it means
                trusting all of that
    granted.py  what the user trusted, outside every repository
    person.py   who asks: only a person at a terminal grants trust, never a process
                aidp started for an agent (its mark, in its environment or an
                ancestor's)

It knows no agent: the callers pass the preset names (aidp.agent.presets).
"""
