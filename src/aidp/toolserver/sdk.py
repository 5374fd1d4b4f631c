"""The parts of the MCP SDK that `aidp mcp` serves with, imported without the rest.

`import mcp.server.stdio` runs `mcp/__init__.py` and `mcp/server/__init__.py` first,
and those import the whole SDK: the client (`mcp.client`, httpx), the high-level
`MCPServer` and its resources. A stdio server needs none of it. Here the two packages
are set up as they are, with their `__init__` run later, only if something asks either
package for a name its submodules did not bind (then it runs once, on the same module
object, and the SDK is whole as usual). The server's own modules are the SDK's, loaded
by Python's import system; nothing of the protocol is written here.

Measured (bench/RESULTS.md, "aidp mcp start"): the SDK's client and MCPServer were
about a fifth of the time to the first answer. What stays is the SDK's types
(`mcp_types`, ~500 pydantic models: the larger part) and the low-level server.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any


def _deferred_package(name: str) -> None:
    """Put package `name` in sys.modules with its `__init__` not yet run; it runs at
    the first lookup of a name the package does not have yet."""
    if name in sys.modules:
        return  # already imported (whole): nothing to save
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not a package on disk: let the import below report it
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader

    def complete(attribute: str) -> Any:
        del module.__dict__["__getattr__"]
        loader.exec_module(module)
        return module.__dict__[attribute] if attribute in module.__dict__ \
            else ModuleType.__getattribute__(module, attribute)

    module.__dict__["__getattr__"] = complete
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


_deferred_package("mcp")
_deferred_package("mcp.server")

import mcp_types as types  # noqa: E402  (the two packages above must be set up first)
from mcp.server.lowlevel.server import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402
from mcp.shared.message import SessionMessage  # noqa: E402

__all__ = ["Server", "SessionMessage", "stdio_server", "types"]
