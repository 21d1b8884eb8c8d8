"""One cell: summary -> continuation -> grade -> diagnostics -> CellResult (see `cell`)."""
