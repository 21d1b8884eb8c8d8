from pathlib import Path


def read(name):
    lines = Path("configs", name).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line)


def test_same_keys():
    assert read("staging.env").keys() == read("production.env").keys()
