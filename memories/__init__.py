# What /api/openapi.json and the MCP server's serverInfo say this is.
__version__ = "1.0"
