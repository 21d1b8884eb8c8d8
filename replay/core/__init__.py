"""The floor every stage stands on: content identities (`digest`) and atomic file writes
(`files`). It imports nothing of replay, so any module may import it."""
