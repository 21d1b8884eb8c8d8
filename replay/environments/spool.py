"""A contained command's output, collected without letting it fill the engine's memory or disk.

The local backend used to spool a command's output to a host temporary file without limit (a
command that printed 3 GB put 3 GB in the host's /tmp); now the engine reads the pipe as it comes
and keeps the head and tail only, as `cap_output` shows them.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
from typing import BinaryIO


class CappedOutput:
    """Bytes of a stream kept whole up to 4 x `limit`, else 2 x `limit` of head and of tail
    (`limit` None: all of it)."""

    def __init__(self, limit: int | None) -> None:
        self.keep = None if limit is None else 2 * limit
        self.head = bytearray()
        self.tail = bytearray()
        self.size = 0

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.keep is None or len(self.head) < 2 * self.keep:
            self.head += chunk
            return
        self.tail += chunk
        if len(self.tail) > 2 * self.keep:
            del self.tail[:-self.keep]

    def value(self) -> tuple[bytes, bool]:
        """The bytes kept, and whether some were cut."""
        if self.keep is None or self.size <= 2 * self.keep:
            return bytes(self.head), False
        tail = (self.head[self.keep:] + self.tail)[-self.keep:]
        return bytes(self.head[:self.keep]) + b"\n[...]\n" + bytes(tail), True


def _drain(stream: BinaryIO, sink: CappedOutput) -> None:
    for chunk in iter(lambda: stream.read1(1 << 16), b""):
        sink.add(chunk)


def _feed(stream: BinaryIO, data: bytes) -> None:
    try:
        stream.write(data)
    except BrokenPipeError:
        pass
    finally:
        stream.close()


def _exited(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Whether `process` ends within `timeout` seconds (it is not reaped).

    A pidfd becomes readable the moment the process exits. `Popen.wait(timeout)` instead polls
    with sleeps that grow to 50 ms, so a 20 ms command was seen ended after 31.5 ms and a 35 ms
    one after 63.5 ms: that wait was most of what a contained file read cost an agent step."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except OSError:  # a kernel without pidfds: poll as Popen does
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(timeout * 1000))
    finally:
        os.close(pidfd)


def collect(process: subprocess.Popen[bytes], timeout: float, stdin: bytes | None,
            limit: int | None) -> tuple[int, bytes, bytes, bool]:
    """Wait for a contained command: its exit code (128 + N when a signal killed it, as a
    shell reports it), stdout, stderr and whether it timed out (its process group is killed,
    and with bwrap its whole PID namespace). Output beyond 4 x `limit` bytes keeps 2 x `limit`
    of its head and of its tail; `limit` None keeps all of it (the engine's own file reads)."""
    sinks = [CappedOutput(limit), CappedOutput(None)]
    threads = [threading.Thread(target=_drain, args=(stream, sink), daemon=True)
               for stream, sink in zip((process.stdout, process.stderr), sinks, strict=True)
               if stream is not None]
    if stdin is not None and process.stdin is not None:
        threads.append(threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True))
    for thread in threads:
        thread.start()
    timed_out = not _exited(process, timeout)
    if timed_out:
        os.killpg(process.pid, signal.SIGKILL)
    code = process.wait()
    for thread in threads:
        thread.join()
    if code < 0:
        code = 128 - code
    return code, sinks[0].value()[0], sinks[1].value()[0], timed_out
