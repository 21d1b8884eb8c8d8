"""replay: measure what context compaction costs coding agents that resume a half-done repair."""

__version__ = "0.1.0"
