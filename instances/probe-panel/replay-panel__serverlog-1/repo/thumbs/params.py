"""Query parameters of thumbnail requests."""


def parse_size(text: str) -> int:
    """A thumbnail edge length in pixels."""
    return int(text)


def parse_format(text: str) -> str:
    """An output format: png, jpeg or webp."""
    name = text.strip().lower()
    if name not in ("png", "jpeg", "webp"):
        raise ValueError(f"unsupported format: {text!r}")
    return name
