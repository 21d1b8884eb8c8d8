"""Model access: providers over httpx, one retry wrapper, a SQLite call cache, aliases, a fake.

Callers use `registry.resolve` for a `ModelSpec`, `cache.CallCache` for the store file, and
`client.ModelClient.complete` for each request; `scripted` holds the deterministic fakes.
"""
