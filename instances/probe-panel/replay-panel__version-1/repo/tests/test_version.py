import vers


def test_version_is_text():
    assert isinstance(vers.__version__, str)
