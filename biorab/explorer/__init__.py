"""`biorab explore`: a static page of every instance of a run or sweep, every cell side by side.

The page opens from disk (``file://``) with no server and no network: its data are JavaScript files that
register themselves (`build.write_explorer`), loaded by ``<script>`` tags on demand, since browsers refuse
``fetch()`` of local files."""

from __future__ import annotations

from biorab.explorer.build import ExplorerBuild, write_explorer

__all__ = ["ExplorerBuild", "write_explorer"]
