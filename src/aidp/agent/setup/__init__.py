"""`aidp setup`: aidp's hooks, MCP server and instructions in an agent's project settings."""
