"""A contained command's output, collected without letting it fill the engine's memory or disk.

The local backend used to spool a command's output to a host temporary file without limit (a
command that printed 3 GB put 3 GB in the host's /tmp); now the engine reads the pipe as it comes
and keeps the head and tail only, as `cap_output` shows them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import BinaryIO


class _Sink:
    """The head and tail of a stream, `keep` bytes each: a command's output never fills the
    engine's memory or disk, however much it prints."""

    def __init__(self, keep: int | None) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0

    def feed(self, chunk: bytes) -> None:
        if self.keep is None:
            self.head += chunk
            return
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.keep:
                drop = len(self.tail) - self.keep
                self.cut += drop
                del self.tail[:drop]

    def value(self) -> bytes:
        middle = f"\n[... {self.cut} bytes cut ...]\n".encode() if self.cut else b""
        return bytes(self.head) + middle + bytes(self.tail)


def _drain(stream: BinaryIO, sink: _Sink) -> None:
    for chunk in iter(lambda: stream.read1(1 << 16), b""):
        sink.feed(chunk)


def _feed(stream: BinaryIO, data: bytes) -> None:
    try:
        stream.write(data)
    except BrokenPipeError:
        pass
    finally:
        stream.close()


def collect(process: subprocess.Popen[bytes], timeout: float, stdin: bytes | None,
            limit: int | None) -> tuple[int, bytes, bytes, bool]:
    """Wait for a contained command: its exit code (128 + N when a signal killed it, as a
    shell reports it), stdout, stderr and whether it timed out (its process group is killed,
    and with bwrap its whole PID namespace). Output beyond 2 x `limit` bytes keeps its head and
    tail only; `limit` None keeps all of it (the engine's own file reads)."""
    sinks = [_Sink(None if limit is None else 2 * limit), _Sink(None)]
    threads = [threading.Thread(target=_drain, args=(stream, sink), daemon=True)
               for stream, sink in zip((process.stdout, process.stderr), sinks, strict=True)
               if stream is not None]
    if stdin is not None and process.stdin is not None:
        threads.append(threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True))
    for thread in threads:
        thread.start()
    timed_out = False
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(process.pid, signal.SIGKILL)
        code = process.wait()
    for thread in threads:
        thread.join()
    if code < 0:
        code = 128 - code
    return code, sinks[0].value(), sinks[1].value(), timed_out
