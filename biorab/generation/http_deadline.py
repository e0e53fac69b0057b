"""A wall-clock bound on one HTTP request made with `urllib`.

A socket timeout bounds each read, not the request: a server that trickles one byte per second keeps a
request with ``timeout=2`` open for as long as it likes. Here a timer shuts the request's sockets down when
the deadline passes, which wakes any blocked read; the caller then reports a timeout. The sockets are
captured by urllib handlers that keep the rest of urllib's behaviour (proxies from the environment, TLS).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.request
from functools import partial
from typing import Any


class Deadline:
    """Shuts the sockets it tracks down `seconds` after `start()`; `expired` says whether it fired."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def start(self) -> Deadline:
        self._timer.start()
        return self

    def cancel(self) -> None:
        self._timer.cancel()

    def track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


class _DeadlineConnection:
    """Registers the connection's socket with the deadline as soon as it is connected (HTTP and HTTPS)."""

    sock: socket.socket

    def __init__(self, *args: Any, deadline: Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self._deadline.track(self.sock)


class _HTTPConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def http_open(self, req: Any) -> Any:
        factory: Any = partial(_HTTPConnection, deadline=self._deadline)
        return self.do_open(factory, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self._deadline = deadline

    def https_open(self, req: Any) -> Any:
        factory: Any = partial(_HTTPSConnection, deadline=self._deadline)
        return self.do_open(factory, req, context=getattr(self, "_context", None))


def open_with_deadline(request: urllib.request.Request, deadline: Deadline) -> Any:
    """`urllib.request.urlopen`, with every socket of the request under `deadline` (already started)."""
    opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline))
    return opener.open(request, timeout=deadline.seconds)
