from pathlib import Path


def test_workspace_present():
    assert Path('pyproject.toml').is_file()
