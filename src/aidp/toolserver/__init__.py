"""`aidp mcp`: aidp as a Model Context Protocol tool server (docs/mcp.md).

    tools.py  the tools: schemas, the check of a call's arguments, the domain calls
    serve.py  the wire: the MCP SDK's server over stdio (imported only by `aidp mcp`)
    front.py  the first answers (initialize, tools/list), given while the SDK loads
    sdk.py    the SDK's server parts, imported without its client and MCPServer
"""
