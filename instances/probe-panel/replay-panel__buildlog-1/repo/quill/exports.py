"""Symbols libquill exports, sorted."""

EXPORTED_SYMBOLS = [
    "qz_compress",
    "qz_compress_bound",
    "qz_decompress",
    "qz_dict_load",
    "qz_dict_train",
    "qz_error_name",
    "qz_frame_begin",
    "qz_frame_end",
    "qz_frame_header",
    "qz_level_max",
    "qz_stream_free",
    "qz_stream_new",
    "qz_version",
]
