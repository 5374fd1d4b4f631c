"""The lease a claim gets when none is asked for (docs/guide.md, "Leases"): `lease` in
`.aidp/config.local.toml` or `.aidp/config.toml` (a duration such as "45m"; inert: it
needs no `aidp trust`), else aidp's default. Every surface that claims asks here: `tasks
claim`, `run --backlog` (and `--parallel`), the MCP server's `tasks_claim`."""

from __future__ import annotations

from pathlib import Path

from aidp.backlog.queue import DEFAULT_LEASE, parse_lease
from aidp.tasklist.paths import DATA_DIR


def default_lease(root: Path) -> int:
    """The configured lease (µs), else DEFAULT_LEASE. A config value that is no duration
    is an InvalidInput naming the file (exit 2, nothing written). Reads no file when the
    project has no config."""
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
