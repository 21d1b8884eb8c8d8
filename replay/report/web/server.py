"""`replay view`'s web server: the pages of one run, rendered from the store on each request.

A standard-library threading HTTP server, bound to 127.0.0.1 unless told otherwise. Each request
opens the store read-only, so a sweep still running shows its new cells on reload. Only GET
and HEAD are answered; pages carry a Content-Security-Policy that forbids scripts. On a loopback
address, a request naming another host (a page elsewhere rebinding its name to 127.0.0.1) is
refused.
"""

from __future__ import annotations

import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from replay.report.web.data import grid_view, read_store
from replay.report.web.pages import (
    CSP,
    STYLESHEET,
    cell_pages,
    render_cell,
    render_grid,
    render_missing,
    stylesheet,
)

logger = logging.getLogger(__name__)

LOCALHOST = "127.0.0.1"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def page(store_path: Path, run: str, path: str) -> tuple[HTTPStatus, str, bytes]:
    """The status, content type and body for a request path of run `run`."""
    if path == f"/static/{STYLESHEET}":
        return HTTPStatus.OK, "text/css; charset=utf-8", stylesheet()
    with read_store(store_path, run) as (store, name):
        grid = grid_view(store, name)
        report = grid.report
        if path in ("/", "/index.html"):
            return HTTPStatus.OK, "text/html; charset=utf-8", render_grid(grid).encode()
        cell = cell_pages(report).get(path.lstrip("/"))
        if cell is not None:
            return (HTTPStatus.OK, "text/html; charset=utf-8",
                    render_cell(store, report, *cell).encode())
    return HTTPStatus.NOT_FOUND, "text/html; charset=utf-8", render_missing(path).encode()


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "replay-view"

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        self._answer(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(send_body=False)

    def _answer(self, send_body: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        try:
            if not self.server.allows(self.headers.get("Host", "")):
                status, kind, body = (HTTPStatus.FORBIDDEN, "text/plain; charset=utf-8",
                                      b"this view answers requests for this machine only")
            else:
                status, kind, body = page(self.server.store_path, self.server.run, path)
        except Exception:  # one broken page is a 500 and a log line, not a dead server
            logger.exception("view: %s failed", path)
            status, kind, body = (HTTPStatus.INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
                                  b"this page failed; see the log of `replay view -v`")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        logger.debug("view: " + format, *args)


class ViewServer(ThreadingHTTPServer):
    """The pages of run `run` of the store at `store_path`, on `host`:`port` (0: any free port).

    Use as a context manager; `serve_forever()` answers until interrupted.
    """

    daemon_threads = True

    def __init__(self, store_path: Path, run: str, host: str = LOCALHOST, port: int = 0) -> None:
        super().__init__((host, port), _Handler)
        self.store_path = store_path
        self.run = run
        self._thread: threading.Thread | None = None

    @property
    def loopback(self) -> bool:
        """Whether only this machine can reach the server."""
        return str(self.server_address[0]).startswith("127.")

    def allows(self, host_header: str) -> bool:
        """Whether a request's Host names this machine (any host when not on loopback)."""
        if not self.loopback:
            return True
        name = host_header if host_header.endswith("]") else host_header.rsplit(":", 1)[0]
        return name in LOOPBACK_NAMES

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/"

    def serve_in_background(self) -> None:
        """Answer requests on a daemon thread until the server is closed (tests, embedding)."""
        self._thread = threading.Thread(target=self.serve_forever, name="replay-view",
                                        daemon=True)
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self.shutdown()
            self._thread.join()
        super().__exit__(*exc)
