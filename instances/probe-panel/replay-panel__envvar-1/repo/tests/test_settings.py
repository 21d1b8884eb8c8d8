from app.settings import cache_url


def test_cache_url(monkeypatch):
    monkeypatch.setenv("CACHE_URL", "redis://x/1")
    assert cache_url() == "redis://x/1"
