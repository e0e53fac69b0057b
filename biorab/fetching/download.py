"""Move the bytes of one file into a ``.part`` file, resuming where an earlier attempt stopped.

Sources are ``http(s)://`` URLs (an HTTP ``Range`` request continues a partial ``.part``) or local paths
(a mirror folder). Every failure becomes a `FetchFailure` whose message says why in words a user can act
on: an HTTP status, no network, a dropped connection (rerun to resume) or a full disk.
"""

from __future__ import annotations

import errno
import http.client
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

CHUNK = 1 << 16
TIMEOUT_S = 30.0

Advance = Callable[[int], None]


class FetchFailure(Exception):
    """One file could not be fetched; the message is the reason shown in the final summary."""


def download(source: str, part: Path, *, advance: Advance) -> None:
    """Append the missing tail of `source` to `part` (created if absent).

    Raises:
        FetchFailure: the reason; a partial `part` is kept so the next call resumes it.
    """
    part.parent.mkdir(parents=True, exist_ok=True)
    try:
        if source.startswith(("http://", "https://")):
            _from_http(source, part, advance)
        else:
            _from_file(Path(source), part, advance)
    except OSError as e:
        if e.errno == errno.ENOSPC:
            raise FetchFailure(f"disk full while writing {part}") from e
        raise


def _from_file(source: Path, part: Path, advance: Advance) -> None:
    if not source.is_file():
        raise FetchFailure(f"not found in the mirror: {source}")
    have = part.stat().st_size if part.exists() else 0
    with source.open("rb") as src, part.open("ab") as out:
        src.seek(have)
        _copy(src, out, advance)


def _from_http(url: str, part: Path, advance: Advance) -> None:
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            # A server that ignores Range answers 200 with the whole file: start the .part over.
            mode = "ab" if have and response.status == 206 else "wb"
            expected = int(response.headers.get("Content-Length") or -1)
            with part.open(mode) as out:
                got = _copy(response, out, advance)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # nothing left to send: the .part is complete (the hash decides)
            return
        raise FetchFailure(f"HTTP {e.code} {e.reason} from {url}") from e
    except urllib.error.URLError as e:
        raise FetchFailure(f"no network: cannot reach {url} ({e.reason})") from e
    except (TimeoutError, http.client.IncompleteRead, ConnectionError) as e:
        done = part.stat().st_size if part.exists() else 0
        raise FetchFailure(f"connection dropped after {done} bytes ({type(e).__name__}); "
                           "run again to resume") from e
    if 0 <= expected != got:
        done = part.stat().st_size
        raise FetchFailure(f"connection dropped after {done} bytes (got {got} of {expected} in this "
                           "attempt); run again to resume")


def _copy(src: IO[bytes] | http.client.HTTPResponse, out: IO[Any], advance: Advance) -> int:
    total = 0
    while chunk := src.read(CHUNK):
        out.write(chunk)
        total += len(chunk)
        advance(len(chunk))
    return total
