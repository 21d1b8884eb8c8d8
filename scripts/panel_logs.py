"""Primary probe-panel tasks whose evidence is a log: a noisy build log with one error line, a
server log with one error, and an incident spread over three services' logs."""

from __future__ import annotations

import random

from panel_fixtures import (
    GITIGNORE,
    Task,
    bash,
    field_spec,
    hex_id,
    in_context,
    pyproject,
    read,
    turn,
)

CODECS = ["adler", "bitpack", "block", "bloom", "crc", "delta", "dict", "entropy", "fse", "huff",
          "lz4", "lzma", "match", "mtf", "ppm", "range", "rle", "sort", "tans", "zig"]
SYMBOLS = ["qz_compress", "qz_compress_bound", "qz_decompress", "qz_dict_load", "qz_dict_train",
           "qz_error_name", "qz_frame_begin", "qz_frame_end", "qz_frame_header", "qz_level_max",
           "qz_stream_free", "qz_stream_new", "qz_version"]
NEEDLE_SYMBOL = "qz_frame_guard_v2"


def _exports(symbols: list[str]) -> str:
    rows = "".join(f'    "{symbol}",\n' for symbol in symbols)
    return f'"""Symbols libquill exports, sorted."""\n\nEXPORTED_SYMBOLS = [\n{rows}]\n'


def _build_log() -> tuple[str, int]:
    """The log of a failed build, and the line that names the unresolved symbol."""
    rng = random.Random(1301)
    lines = ["-- The C compiler identification is Clang 17.0.6", "-- Configuring done (0.4s)",
             "-- Generating done (0.1s)", "-- Build files have been written to: /src/quill/out"]
    warned = set(rng.sample(range(2 * len(CODECS)), 23))
    for index in range(2 * len(CODECS)):
        codec = CODECS[index // 2]
        part = "enc" if index % 2 == 0 else "dec"
        percent = 2 + index * 94 // (2 * len(CODECS))
        lines.append(f"[{percent:3d}%] Building C object src/CMakeFiles/quill.dir/codec/"
                     f"{codec}_{part}.c.o")
        if index in warned:
            lines.append(f"src/codec/{codec}_{part}.c:{rng.randint(20, 400)}:"
                         f"{rng.randint(5, 30)}: warning: unused variable 'tmp{index}' "
                         "[-Wunused-variable]")
    lines += ["[ 97%] Building C object src/CMakeFiles/quill.dir/frame.c.o",
              "[ 98%] Linking C shared library libquill.so"]
    needle = len(lines) + 1
    lines += [f"ld.lld: error: undefined symbol: {NEEDLE_SYMBOL}",
              ">>> referenced by frame.c:211 (src/codec/frame.c:211)",
              "clang: error: linker command failed with exit code 1 (use -v to see invocation)",
              "23 warnings and 1 error generated.",
              "make[2]: *** [src/CMakeFiles/quill.dir/build.make:412: libquill.so] Error 1",
              "make[1]: *** [CMakeFiles/Makefile2:97: src/CMakeFiles/quill.dir/all] Error 2",
              "make: *** [Makefile:136: all] Error 2"]
    return "\n".join(lines) + "\n", needle


@in_context("quill", "A small compression library with a C core and Python bindings.",
            1401, "tests/test_exports.py")
def buildlog() -> Task:
    log, needle = _build_log()
    test = ('from quill.exports import EXPORTED_SYMBOLS\n\n\n'
            'def test_exports_are_sorted_and_unique():\n'
            '    assert EXPORTED_SYMBOLS == sorted(set(EXPORTED_SYMBOLS))\n')
    new_test = test + ('\n\ndef test_frame_guard_is_exported():\n'
                       f'    assert "{NEEDLE_SYMBOL}" in EXPORTED_SYMBOLS\n')
    return Task(
        name="buildlog", cohort="primary",
        problem=("The nightly build fails at the link step since the frame guard rework was "
                 "merged. The log of the failed build is ci/nightly-build.log. Find the symbol "
                 "the linker cannot resolve and export it: quill/exports.py lists the exported "
                 "symbols (keep the list sorted)."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("quill", "A codec library"),
               "ci/nightly-build.log": log, "quill/__init__.py": "",
               "quill/exports.py": _exports(SYMBOLS), "tests/test_exports.py": test},
        fixed={"quill/exports.py": _exports(sorted([*SYMBOLS, NEEDLE_SYMBOL]))},
        tests={"tests/test_exports.py": new_test},
        fail_to_pass=["tests/test_exports.py::test_frame_guard_is_exported"],
        pass_to_pass=["tests/test_exports.py::test_exports_are_sorted_and_unique"],
        steps=[turn("Let me see what the repository holds.",
                    bash("find . -path ./.git -prune -o -type f -print | sort")),
               turn("Let me read the build log.", bash("cat -n ci/nightly-build.log")),
               turn("Now the export list.", read("quill/exports.py"))],
        reason="log and export list read, no edit yet; the one error line sits deep in a "
               "numbered log of compile lines and warnings",
        probes=[{"id": "link-error", "question": "What did the failed link step report?",
                 "fields": {
                     "symbol": field_spec("string", "the symbol the linker could not resolve"),
                     "log_line": field_spec("integer", "the number cat -n gave the log line "
                                            "naming that symbol"),
                     "referenced_from": field_spec("string", "where the reference comes from, "
                                                   "as the log writes it: path:line"),
                     "warnings": field_spec("integer", "how many warnings the compiler "
                                            "reported in total, per the log's summary line"),
                     "library": field_spec("string", "the file name of the library being "
                                           "linked")},
                 "expected": {"symbol": NEEDLE_SYMBOL, "log_line": needle,
                              "referenced_from": "src/codec/frame.c:211", "warnings": 23,
                              "library": "libquill.so"}}])


ROUTES = ["GET /api/v2/items/{n}", "GET /api/v2/items", "POST /api/v2/cart", "GET /healthz",
          "GET /api/v2/thumbnails/{n}", "PUT /api/v2/items/{n}", "GET /api/v2/search"]


def _server_log() -> str:
    rng = random.Random(1302)
    lines = []
    for index in range(96):
        second = index * 37
        millis = rng.randint(0, 999)
        stamp = f"2024-05-14T09:{second // 60 % 60:02d}:{second % 60:02d}.{millis:03d}Z"
        route = rng.choice(ROUTES).format(n=rng.randint(100, 9999))
        status = rng.choice([200, 200, 200, 200, 204, 304, 404])
        lines.append(f"{stamp} INFO  worker-{rng.randint(1, 6)} {route} {status} "
                     f"{rng.randint(2, 90)}ms req={hex_id(rng)}")
        if index == 61:
            lines.append("2024-05-14T09:41:07.332Z ERROR worker-7 POST /api/v2/thumbnails 500 "
                         "18ms req=9c41e07b ValueError: invalid literal for int() with base 10: "
                         "'640px'")
    return "\n".join(lines) + "\n"


PARAMS = '''"""Query parameters of thumbnail requests."""


def parse_size(text: str) -> int:
    """A thumbnail edge length in pixels."""
    return int(text)


def parse_format(text: str) -> str:
    """An output format: png, jpeg or webp."""
    name = text.strip().lower()
    if name not in ("png", "jpeg", "webp"):
        raise ValueError(f"unsupported format: {text!r}")
    return name
'''


@in_context("thumbs", "The thumbnail service behind the shop's product pages.",
            1402, "tests/test_params.py")
def serverlog() -> Task:
    test = ('from thumbs.params import parse_format, parse_size\n\n\n'
            'def test_plain_sizes_and_formats():\n'
            '    assert parse_size("320") == 320\n'
            '    assert parse_format(" PNG ") == "png"\n')
    new_test = test + ('\n\ndef test_size_with_a_pixel_suffix():\n'
                       '    assert parse_size("640px") == 640\n'
                       '    assert parse_size(" 320 ") == 320\n')
    fixed = PARAMS.replace('    return int(text)\n',
                           '    return int(text.strip().removesuffix("px"))\n')
    return Task(
        name="serverlog", cohort="primary",
        problem=("Some thumbnail requests fail with HTTP 500 in production. This morning's API "
                 "log is logs/api-2024-05-14.log. Find the failing request and fix its cause in "
                 "the thumbs package."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("thumbs", "Thumbnails"),
               "logs/api-2024-05-14.log": _server_log(), "thumbs/__init__.py": "",
               "thumbs/params.py": PARAMS, "tests/test_params.py": test},
        fixed={"thumbs/params.py": fixed}, tests={"tests/test_params.py": new_test},
        fail_to_pass=["tests/test_params.py::test_size_with_a_pixel_suffix"],
        pass_to_pass=["tests/test_params.py::test_plain_sizes_and_formats"],
        steps=[turn("Let me look at the layout first.", bash("ls logs thumbs tests")),
               turn("Let me read the API log.", bash("cat logs/api-2024-05-14.log")),
               turn("Now the parameter parsing.", read("thumbs/params.py"))],
        reason="log and parser read, no edit yet; one ERROR line among a hundred INFO lines",
        probes=[{"id": "failed-request", "question": "Which request failed, and how?",
                 "fields": {
                     "request_id": field_spec("string", "the req= id of the failed request"),
                     "worker": field_spec("string", "the worker that logged it"),
                     "route": field_spec("string", "the request's path"),
                     "status": field_spec("integer", "the HTTP status it got"),
                     "bad_value": field_spec("string", "the value int() could not parse"),
                     "timestamp": field_spec("string", "its timestamp, as logged")},
                 "expected": {"request_id": "9c41e07b", "worker": "worker-7",
                              "route": "/api/v2/thumbnails", "status": 500,
                              "bad_value": "640px", "timestamp": "2024-05-14T09:41:07.332Z"}}])


CONFIG = '''"""Where the orders service reads from."""

PRIMARY = "db-primary:5432"
REPLICAS = [
    "db-replica-1:5432",
    "db-replica-2:5432",
    "db-replica-3:5432",
]
'''


FIRST_504, FIRST_REQUEST = "03:12:04.118", "chk-e41b7"


def _incident_logs() -> dict[str, str]:
    rng = random.Random(1303)
    gateway, orders, db, failed = [], [], [], []
    for index in range(40):
        second = 11 * 60 + 20 + index * 13
        stamp = f"03:{second // 60:02d}:{second % 60:02d}.{rng.randint(0, 999):03d}"
        failing = 4 <= index <= 36
        status = 504 if failing and index % 3 != 2 else 200
        request = f"chk-{hex_id(rng, 5)}"
        if index == 4:
            stamp, request = FIRST_504, FIRST_REQUEST
        code = " E_UPSTREAM_TIMEOUT" if status == 504 else ""
        gateway.append(f"{stamp} gateway POST /checkout {status} {request}{code}")
        replica = 2 if status == 504 else rng.choice([1, 3])
        outcome = "ECONNREFUSED" if status == 504 else "ok"
        orders.append(f"{stamp} orders {request} read db-replica-{replica}:5432 {outcome}")
        if status == 504:
            failed.append(stamp)
    gateway.append(f"03:19:55.000 gateway summary: {len(failed)} checkouts answered 504 "
                   f"between {failed[0][:8]} and {failed[-1][:8]}")
    for index in range(36):
        second = 10 * 60 + index * 19
        db.append(f"03:{second // 60:02d}:{second % 60:02d} db-replica-{index % 3 + 1} "
                  f"checkpoint complete: wrote {rng.randint(40, 900)} buffers")
        if index == 10:
            db.append("03:11:58 db-replica-2 removed from service for maintenance by ops "
                      "(ticket OPS-4471); connections refused until further notice")
    return {"incident/gateway.log": "\n".join(gateway) + "\n",
            "incident/orders.log": "\n".join(orders) + "\n",
            "incident/db.log": "\n".join(db) + "\n"}


@in_context("orders", "The orders service: checkout, order history and refunds.",
            1403, "tests/test_config.py")
def incident() -> Task:
    test = ('from orders.config import PRIMARY, REPLICAS\n\n\n'
            'def test_hosts_have_ports():\n'
            '    assert all(":" in host for host in [PRIMARY, *REPLICAS])\n')
    new_test = test + ('\n\ndef test_the_retired_replica_is_gone():\n'
                       '    assert "db-replica-2:5432" not in REPLICAS\n'
                       '    assert REPLICAS == ["db-replica-1:5432", "db-replica-3:5432"]\n')
    return Task(
        name="incident", cohort="primary",
        problem=("Checkout returned HTTP 504 for a while last night. The logs of the services "
                 "involved are in incident/. Find out what happened, and change the orders "
                 "service's configuration (orders/config.py) so that it stops using the host "
                 "that caused it."),
        files={".gitignore": GITIGNORE, "pyproject.toml": pyproject("orders", "Orders"),
               **_incident_logs(), "orders/__init__.py": "", "orders/config.py": CONFIG,
               "tests/test_config.py": test},
        fixed={"orders/config.py": CONFIG.replace('    "db-replica-2:5432",\n', "")},
        tests={"tests/test_config.py": new_test},
        fail_to_pass=["tests/test_config.py::test_the_retired_replica_is_gone"],
        pass_to_pass=["tests/test_config.py::test_hosts_have_ports"],
        steps=[turn("Let me see how long the logs are.", bash("wc -l incident/*.log")),
               turn("The gateway first.", bash("cat incident/gateway.log")),
               turn("Then the orders service.", bash("cat incident/orders.log")),
               turn("And the database hosts.", bash("cat incident/db.log")),
               turn("Now the configuration.", read("orders/config.py"))],
        reason="three logs and the configuration read, no edit yet; the cause is one line of "
               "the database log, its effects scattered over the other two",
        probes=[{"id": "incident", "question": "What did the incident logs establish?",
                 "fields": {
                     "host": field_spec("string", "the database host:port the orders service "
                                        "could not reach"),
                     "ticket": field_spec("string", "the ops ticket that took it out"),
                     "first_failed_request": field_spec("string", "the gateway's first "
                                                        "request answered 504"),
                     "first_504_at": field_spec("string", "when that was, as the gateway "
                                                "logged it (HH:MM:SS.mmm)"),
                     "failed_checkouts": field_spec("integer", "how many checkouts the "
                                                    "gateway's summary counts as 504"),
                     "error_codes": field_spec("array", "the error codes the gateway and the "
                                               "orders service logged", order_free=True)},
                 "expected": {"host": "db-replica-2:5432", "ticket": "OPS-4471",
                              "first_failed_request": FIRST_REQUEST,
                              "first_504_at": FIRST_504, "failed_checkouts": 22,
                              "error_codes": ["E_UPSTREAM_TIMEOUT", "ECONNREFUSED"]}}])
