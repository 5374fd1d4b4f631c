"""The backlog: tasks, ids, history, insights, and the work queue (queue/)."""
