"""Leases (docs/guide.md, "Leases"). The lease a claim gets when none is asked for:
`lease` in `.aidp/config.local.toml` or `.aidp/config.toml` (a duration such as "45m";
inert: it needs no `aidp trust`), else aidp's default; every surface that claims asks
here: `tasks claim`, `run --backlog` (and `--parallel`), the MCP server's `tasks_claim`.
And a working holder's leases kept: by `aidp run`, `aidp mcp` and the hooks."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING

from aidp.app.project import Project
from aidp.tasklist.paths import DATA_DIR

if TYPE_CHECKING:
    from aidp.backlog.queue import Keeper


def default_lease(root: Path) -> int:
    """The configured lease (µs), else DEFAULT_LEASE. A config value that is no duration
    is an InvalidInput naming the file (exit 2, nothing written). Reads no file when the
    project has no config."""
    from aidp.backlog.queue import DEFAULT_LEASE, parse_lease
    from aidp.trust import gate

    if not any(path.exists() for path in gate.config_files(root)):
        return DEFAULT_LEASE
    config = gate.load(root, presets=())  # (the presets only matter to `agent`)
    value = config.get("lease")
    if value is None:
        return DEFAULT_LEASE
    source = config.source("lease") or f"{DATA_DIR}/config.toml"
    return parse_lease(value if isinstance(value, str) else repr(value),
                       what=f"lease in {source}")


def lease_keeper(project: Project, actor: Callable[[], str] | None = None, *,
                 tasks: Collection[str] | None = None) -> Keeper:
    """What keeps a working holder's leases while it works (`aidp run` while its agent
    lives, `aidp mcp` while its client calls): its `tick()` renews those of `actor`'s
    claims that are due (on `tasks` only, when given; default actor: the project's,
    asked once) and gives a line for each task the actor lost, once."""
    from aidp.backlog.queue import Keeper, actor_lookup

    who = actor if actor is not None else actor_lookup(project.root)
    return Keeper(project.log, who, tasks=tasks)


def renew_leases(project: Project) -> list[str]:
    """Renew now the leases of the project's actor that are due (each at most once per
    half lease); a line for each task it held and lost: a hook, at each event. Without
    an in-progress claim in the project, the work queue is not even loaded (a hook's
    start-up: docs/architecture.md, "Start-up")."""
    if not project.log.read().claims(("in_progress",)):
        return []
    from aidp.backlog.queue import default_actor, renew

    return renew(project.log, lambda: default_actor(project.root)).lost
