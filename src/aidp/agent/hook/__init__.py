"""`aidp hook`: an agent's hook JSON in, its answer out, and the hooks' local state."""
