"""The agent hosts' hook front end: each host's JSON in, a handoff, an attributed drift or a
reminder out, and the relay that runs hooks warm."""
