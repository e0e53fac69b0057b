"""Test support code: process-boundary stubs (a fault-injecting OpenAI-compatible server) and builders of
tiny local models, so tests never need a model hub."""
