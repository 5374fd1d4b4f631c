"""Filing a task: the one way every surface files one (`tasks add`, MCP `tasks_file`, a
File task signal in `aidp run` or a hook)."""

from __future__ import annotations

from collections.abc import Sequence

from aidp.app.project import Project
from aidp.backlog import tasks
from aidp.backlog.filing import Filed
from aidp.core.model import Record


def file_task(
    project: Project,
    description: str,
    *,
    priority: str = "medium",
    tags: Sequence[str] = (),
    session: str | None = None,
    discovered_during: str | None = None,
    blocked_by: Sequence[str] = (),
    parent: str | None = None,
    unless_open: bool = False,
    body: str | None = None,
    task_type: str | None = None,
    filed_since: int | None = None,
) -> Filed:
    """File a task in the project's backlog. `session`: the one it records (default:
    the project's, named without reading: Project.filing_session). With nothing to
    check (no links, not `unless_open`) it is one append and nothing is read: the
    result's `short_id` is then the id's hex part (the shortest prefix needs the ids
    already there). With `blocked_by`/`parent` its links are written with it, a cycle
    refused (queue.file); with `unless_open`, an open task with the same description
    is returned instead (`filed` False), nothing written, and so is one filed since
    `filed_since` (µs, any status: a run's own filings). `body`, `task_type`: its
    details (aidp.backlog.details), written with it."""
    if session is None:
        session = project.filing_session()
    if not blocked_by and parent is None and not unless_open:
        task = tasks.add(project.log, description, priority=priority, tags=tags,
                         session=session, discovered_during=discovered_during, body=body,
                         task_type=task_type)
        return Filed(task, True, task["id"].rpartition("_")[2])  # task_<seconds>_<hex>
    from aidp.backlog import queue

    return queue.file(project.log, description, priority=priority, tags=tags,
                      session=session, discovered_during=discovered_during,
                      blocked_by=blocked_by, parent=parent, unless_open=unless_open,
                      body=body, task_type=task_type, filed_since=filed_since)


def filed_shown(project: Project, filed: Filed, *, linked: bool, body: str | None = None,
                task_type: str | None = None) -> Record:
    """The task just filed as `tasks show --json` shows it: with links (`linked`), as
    the state now has them (one read); else its record with the body and type it was
    filed with, nothing read."""
    if linked:
        from aidp.app.shown import shown_now

        return shown_now(project, [filed.task], bodies=True)[0]
    from aidp.backlog import details

    return {**filed.task, **details.filed_with(filed.task, body=body, task_type=task_type)}

