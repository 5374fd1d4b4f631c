"""Values and errors: records, statuses, stamps, what may reach a terminal, exit codes. Pure."""
