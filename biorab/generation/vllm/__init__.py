"""The vLLM engine: the offline backend (`engine`), the async serving engine (`async_engine`), label
scoring and the thinking block. Absolute imports of ``vllm`` inside it name the vLLM library."""
