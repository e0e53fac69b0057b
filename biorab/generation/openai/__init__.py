"""The OpenAI-compatible API engine: the client backend, its sampling params, label log-probabilities and
the client-side rate limits. Absolute imports of ``openai`` inside it name the OpenAI library."""
