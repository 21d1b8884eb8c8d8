"""`python -m replay` is the `replay` command."""

from replay.cli import main

main()
