"""Command implementations behind the `replay` command line."""
