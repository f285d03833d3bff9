"""The one API every front end calls: each function opens the workspace, acts, and returns a
typed result."""
