from thumbs.params import parse_format, parse_size


def test_plain_sizes_and_formats():
    assert parse_size("320") == 320
    assert parse_format(" PNG ") == "png"
