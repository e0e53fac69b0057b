"""Ray Serve layer of BioRAB: `serve.app.build_app(args)` serves one RAL (see docs/serve.md).

Importing this package imports neither Ray nor the backends; `serve.app` does.
"""
