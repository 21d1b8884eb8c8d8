"""Stage 5, judge: run an instance's tests, grade them, and validate instances (protocol step 2)."""
