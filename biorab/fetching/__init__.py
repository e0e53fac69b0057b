"""`biorab data fetch`: download the public datasets from their pinned sources (or a mirror), verify every
file against the packaged manifest and rebuild the derived files with the project's own code.

Only the standard library is used (urllib, hashlib), so fetching works in a bare install.
"""

from __future__ import annotations

from biorab.fetching.fetch import FetchReport, fetch_files
from biorab.fetching.manifest import Manifest, ManifestFile, load_manifest

__all__ = ["FetchReport", "Manifest", "ManifestFile", "fetch_files", "load_manifest"]
