"""The MCP server: the tools and resources an agent uses (server.py), each a thin call into
the services made as the caller (caller.py) and answered in its output models (outputs.py),
served over Streamable HTTP at /mcp by the Django process (http.py) and over stdio by
`manage.py mcp`."""
