"""`aidp mcp`: serve aidp's tools to an agent over stdio (Model Context Protocol)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from collections.abc import Callable


def mcp(ctx: typer.Context) -> int:
    """Serve the backlog and the session's TODO list as MCP tools over stdio.

    Agents start it themselves: `aidp run` gives it to each agent CLI that takes MCP
    servers, and `aidp setup AGENT --mcp` registers it in the agent's project settings.
    The session is AIDP_SESSION, else the one aidp's hooks use for that agent.

    Examples:
    $ aidp mcp
    $ aidp --session fix-login mcp
    """
    from aidp.cli.common import env
    from aidp.toolserver import front
    from aidp.toolserver.tools import default_place
    from aidp.trust.person import mark

    mark("aidp mcp")  # serving an agent: never grants trust (aidp.trust.person)
    e = env(ctx)
    # A mistyped --dir or AIDP_DIR stops here (exit 2), not at every tool call.
    place = default_place(root=e.root, session=e.session)
    e.opened(place.project)
    with front.client_wire() as wire:
        # The client's first messages are answered while the SDK loads (front).
        return front.serve_after(wire, _load_server, place)


def _load_server() -> Callable[..., int]:
    try:
        from aidp.toolserver.serve import serve
    except ImportError as exc:  # an install without the SDK (an old virtualenv)
        from aidp.core.errors import AidpError

        raise AidpError(f"Cannot start the MCP server: the MCP SDK is missing ({exc}); "
                        "install aidp again, or pip install 'mcp>=2.3,<3'") from None
    return serve
