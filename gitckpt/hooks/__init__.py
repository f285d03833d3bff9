"""The agent hosts' hook front end: each host's JSON in, a handoff, an attributed drift or a
reminder out (served warm by the user's service, service/client.py)."""

#: The hook commands and the hosts (hooks/hosts.py has one entry per name), known here so a
#: hook is parsed, and the CLI's `hook` group built, before anything else loads.
EVENTS = ("session-start", "prompt", "post-tool", "pre-compact", "stop")
HOST_NAMES = ("claude", "codex", "copilot", "cursor", "devin", "gemini", "opencode", "windsurf")
