"""Stage 6, histories: Phase A histories, boundaries, recorded trajectories, collect and import."""
