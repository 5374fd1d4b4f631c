"""The use cases every surface calls."""
