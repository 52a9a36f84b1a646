"""Front-door services: the memory API behind HTTP and MCP, introspection (why, identity
text), import, export, transcripts, the Claude Code hook and API tokens.
"""
