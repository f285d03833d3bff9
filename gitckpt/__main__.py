"""Entry point for `python -m gitckpt`."""

from gitckpt.cli import main

main()
