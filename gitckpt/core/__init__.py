"""The bottom layer: typed errors and hints, ids, paths, git objects, values, limits and
progress; no I/O policy and nothing above it."""
