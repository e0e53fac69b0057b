"""Turn an operating-system error (read-only folder, full disk, a file where a folder should be) into the
one-line ``<file>: <what happened>; <what to do>`` the CLI prints, instead of a traceback."""

from __future__ import annotations

import errno

_FIXES: dict[int, str] = {
    errno.ENOSPC: "the disk is full; free space there (or move output_dir / BIORAB_CACHE_DIR), then run "
                  "the same command again: finished rows are kept",
    errno.EDQUOT: "the disk quota is exhausted; free space, then run the same command again",
    errno.EROFS: "the filesystem is read-only; choose a writable output_dir (--output-dir) or "
                 "BIORAB_CACHE_DIR",
    errno.EACCES: "permission denied; make it writable or choose another output_dir (--output-dir) or "
                  "BIORAB_CACHE_DIR",
    errno.EPERM: "operation not permitted; make it writable or choose another location",
    errno.ENOTDIR: "a file is in the way of a folder; remove it or choose another output_dir",
    errno.EEXIST: "a file is in the way of a folder; remove it or choose another output_dir",
    errno.EISDIR: "a folder is in the way of a file; remove it or choose another location",
    errno.ENOENT: "no such file or folder",
}


def describe_os_error(e: OSError) -> str:
    """``"/r/out: No space left on device; the disk is full; ..."``.

    >>> describe_os_error(OSError(30, "Read-only file system", "/r/out"))[:45]
    '/r/out: Read-only file system; the filesystem'
    """
    where = e.filename if e.filename is not None else "(file not reported by the system)"
    what = e.strerror or str(e)
    fix = _FIXES.get(e.errno or -1)
    return f"{where}: {what}" + (f"; {fix}" if fix else "")
