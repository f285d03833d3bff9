"""Where checkpoints live: the Store interface, GitStore, the plain-folder store, the package
store, scanners, packs, state files and the watcher's journal."""
