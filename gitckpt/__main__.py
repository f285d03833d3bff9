"""Entry point for `python -m gitckpt`."""

from gitckpt.entry import main

main()
