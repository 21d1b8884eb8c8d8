"""Stage 1, instances: SWE-bench records, their loaders and suites, and selection."""
