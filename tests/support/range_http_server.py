"""A local HTTP server over a folder with ``Range`` support and injectable faults, for `biorab data fetch`.

Faults by path (relative to the served folder): ``"corrupt"`` serves the file with its first byte
flipped, ``"missing"`` answers 404, ``"drop:N"`` sends N bytes of the body and closes the connection
(once; later requests are served normally, so a rerun resumes). Every request's path and Range header
are recorded in `requests`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote


class RangeServer:
    """``with RangeServer(root, faults) as server: server.url``"""

    def __init__(self, root: Path, faults: dict[str, str] | None = None) -> None:
        self.root, self.faults = root, dict(faults or {})
        self.requests: list[tuple[str, str | None]] = []
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> RangeServer:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def _fault(self, path: str) -> str | None:
        with self._lock:
            fault = self.faults.get(path)
            if fault and fault.startswith("drop:"):
                del self.faults[path]  # a dropped connection happens once
            return fault

    def _handler(self) -> Any:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                rel = unquote(self.path.lstrip("/"))
                server.requests.append((rel, self.headers.get("Range")))
                fault, file = server._fault(rel), server.root / rel
                if fault == "missing" or not file.is_file():
                    self.send_error(404)
                    return
                data = file.read_bytes()
                if fault == "corrupt":
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                wanted = self.headers.get("Range")  # only the "bytes=N-" form the fetcher sends
                start = int(wanted.split("=")[1].split("-")[0]) if wanted else 0
                if start >= len(data):
                    self.send_error(416)
                    return
                body = data[start:]
                self.send_response(206 if start else 200)
                self.send_header("Content-Length", str(len(body)))
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                self.end_headers()
                if fault and fault.startswith("drop:"):
                    self.wfile.write(body[: int(fault.split(":")[1])])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        return Handler
