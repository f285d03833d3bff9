"""GitStore: checkpoints in the user's own repository through libgit2, and its snapshot scanner."""
