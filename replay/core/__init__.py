"""The floor every stage stands on: errors and the `Fault` record (`errors`), the closed
vocabularies (`vocab`), content identities (`digest`), atomic file writes (`files`), where files
live (`paths`) and the identifiers that name them (`names`). It imports nothing of replay above
it, so any module may import it."""
