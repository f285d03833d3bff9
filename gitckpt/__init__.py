"""gitckpt: git-plumbing-native checkpoints for long AI-agent tasks."""

__version__ = "0.1.0"
