"""The MCP front end: the server, its tools, its fast handshake and the texts agents read."""
