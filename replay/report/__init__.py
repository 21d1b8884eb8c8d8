"""Stage 9, report: tables of a run, exports and the heatmap."""
