"""Tasks that cross machines: handoff packages, migration from other tools, and push/fetch
through git remotes."""
