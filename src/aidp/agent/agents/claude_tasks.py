"""Claude Code's Tasks API (TaskCreate / TaskUpdate) → plan entries for `todos.set_plan`.

Claude Code 2.x plans with TaskCreate (`{subject, description, activeForm?}`, answered
with `{"task": {"id": "1", "subject": …}}`) and TaskUpdate (`{taskId, status?,
subject?, …}`, answered with `{success, taskId, updatedFields, statusChange?}`). An
update carries no text, so the id → item map must be remembered between calls: this
class is that map. It is shared by `aidp run` (stream-json reader) and `aidp hook
claude PostToolUse`, which persists it between hook processes with `to_json` /
`from_json`. Pure: no I/O, no imports beyond the standard library.

Claude numbers tasks "1", "2", … in creation order; when a creation is seen without its
answer (a stream that has not delivered the tool result yet) the next number is
assumed, and the answer, when it comes, can correct it (`created`).
"""

from __future__ import annotations

from typing import Any

_STATUSES = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}
DELETED = "deleted"


def _text(value: object) -> str | None:
    if isinstance(value, str):
        flat = " ".join(value.split())
        return flat or None
    return None


def _task_id(value: object) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (str, int)):
        text = str(value).strip()
        return text or None
    return None


def _order(task_id: str) -> tuple[int, int | str]:
    # Claude's ids are decimal numbers in creation order; anything else after them.
    return (0, int(task_id)) if task_id.isdigit() else (1, task_id)


class ClaudeTasks:
    """The tasks of one Claude session, by id, as the plan they amount to."""

    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, str]] = {}
        self.highest = 0  # the greatest numeric id seen, deleted ones included

    def __repr__(self) -> str:
        return f"ClaudeTasks({self.tasks!r})"

    # --- events -----------------------------------------------------------------

    def create(self, tool_input: object, tool_response: object = None) -> str | None:
        """A TaskCreate call; returns the task id (None when the input has no subject)."""
        if not isinstance(tool_input, dict):
            return None
        content = _text(tool_input.get("subject")) or _text(tool_input.get("description"))
        if content is None:
            return None
        task_id = _response_id(tool_response) or str(self.highest + 1)
        self.tasks[task_id] = {"content": content, "status": "pending"}
        self._saw(task_id)
        return task_id

    def created(self, assumed: str, actual: object) -> None:
        """The answer to a creation seen earlier under the `assumed` id names `actual`."""
        real = _task_id(actual)
        if real is None or real == assumed or assumed not in self.tasks:
            return
        self.tasks[real] = self.tasks.pop(assumed)
        self._saw(real)

    def update(self, tool_input: object, tool_response: object = None) -> bool:
        """A TaskUpdate call; True when it changed the plan. An update that Claude says
        failed, or that names a task never seen, changes nothing."""
        if not isinstance(tool_input, dict):
            return False
        if isinstance(tool_response, dict) and tool_response.get("success") is False:
            return False
        task_id = _task_id(tool_input.get("taskId"))
        if task_id is None or task_id not in self.tasks:
            return False
        task = self.tasks[task_id]
        before = dict(task)
        status = tool_input.get("status")
        if status == DELETED:
            del self.tasks[task_id]
            return True
        if isinstance(status, str) and status in _STATUSES:
            task["status"] = _STATUSES[status]
        subject = _text(tool_input.get("subject"))
        if subject is not None:
            task["content"] = subject
        return task != before

    def apply(self, tool_name: object, tool_input: object, tool_response: object = None) -> bool:
        """Feed one tool call by name; True when the plan changed."""
        if tool_name == "TaskCreate":
            return self.create(tool_input, tool_response) is not None
        if tool_name == "TaskUpdate":
            return self.update(tool_input, tool_response)
        return False

    # --- results ----------------------------------------------------------------

    def entries(self) -> list[dict[str, str]]:
        """[{"content", "status"}] in creation order, as `todos.set_plan` takes them."""
        return [dict(self.tasks[key]) for key in sorted(self.tasks, key=_order)]

    def to_json(self) -> dict[str, Any]:
        return {"tasks": {key: dict(value) for key, value in self.tasks.items()},
                "highest": self.highest}

    @classmethod
    def from_json(cls, data: object) -> ClaudeTasks:
        """Tolerant: anything unreadable is dropped, never raised."""
        found = cls()
        tasks = data.get("tasks") if isinstance(data, dict) else None
        if isinstance(tasks, dict):
            for key, value in tasks.items():
                if not isinstance(value, dict):
                    continue
                content = _text(value.get("content"))
                status = _STATUSES.get(str(value.get("status")))
                if isinstance(key, str) and content is not None and status is not None:
                    found.tasks[key] = {"content": content, "status": status}
                    found._saw(key)
        highest = data.get("highest") if isinstance(data, dict) else None
        if isinstance(highest, int) and not isinstance(highest, bool):
            found.highest = max(found.highest, highest)
        return found

    def _saw(self, task_id: str) -> None:
        if task_id.isdigit():
            self.highest = max(self.highest, int(task_id))


def _response_id(response: object) -> str | None:
    """The id in TaskCreate's answer: {"task": {"id": "1"}} (or a bare {"id"})."""
    if not isinstance(response, dict):
        return None
    task = response.get("task")
    if isinstance(task, dict):
        return _task_id(task.get("id"))
    return _task_id(response.get("id"))
