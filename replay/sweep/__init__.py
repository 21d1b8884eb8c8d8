"""Stage 8, sweep: plans of cells, the cell pipeline, labels, execution and confirmation."""
