"""The Transformers engine: the backend (`backend.HFBackend`) and the pieces built on torch and
transformers that it loads (KV cache, guided decoding, label log-probabilities, prefill, stopping)."""
