"""The command-line front end (click): commands, rendering, paging, completion and the demo."""
