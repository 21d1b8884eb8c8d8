from quill.exports import EXPORTED_SYMBOLS


def test_exports_are_sorted_and_unique():
    assert EXPORTED_SYMBOLS == sorted(set(EXPORTED_SYMBOLS))
