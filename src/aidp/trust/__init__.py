"""What a repository may make aidp run: the gate on .aidp/config.toml, what a trusted
command may load, and what the user trusted."""
