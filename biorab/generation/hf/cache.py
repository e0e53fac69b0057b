"""A KV cache for `generate` that writes into buffers reserved for the whole call.

transformers' `DynamicCache` grows each layer by ``torch.cat`` at every decode step, which copies the
whole cache (batch x heads x length x head size, per layer, keys and values) once per new token: 11% of
the decode CPU of the smoke job's triple batch (docs/pipeline.md). `ReservedCache` allocates prompt
width + ``max_new_tokens`` positions per layer at the prefill and copies only the new token after that.
Attention sees the same values in the same shapes (views of the buffers), so outputs are unchanged (the
backend tests compare them bit for bit). Where more tokens arrive than were reserved it grows by ``cat``.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers.cache_utils import Cache, DynamicCache, DynamicLayer


class ReservedLayer(DynamicLayer):
    """A `DynamicLayer` whose keys and values are views of buffers with `reserve` spare positions."""

    def __init__(self, reserve: int) -> None:
        super().__init__()
        self.reserve = reserve
        self._key_buffer: torch.Tensor | None = None
        self._value_buffer: torch.Tensor | None = None

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        start = self.get_seq_length()
        end = start + key_states.shape[-2]
        keys, values = self.keys, self.values
        assert keys is not None and values is not None  # set by lazy_initialization
        if not self._fits(keys, end):  # first call (the prefill), or more tokens than reserved
            self._key_buffer = _buffer(keys, key_states, end + self.reserve)
            self._value_buffer = _buffer(values, value_states, end + self.reserve)
        assert self._key_buffer is not None and self._value_buffer is not None
        self._key_buffer[..., start:end, :].copy_(key_states)
        self._value_buffer[..., start:end, :].copy_(value_states)
        self.keys = self._key_buffer[..., :end, :]
        self.values = self._value_buffer[..., :end, :]
        return self.keys, self.values

    def _fits(self, keys: torch.Tensor, end: int) -> bool:
        """The buffers hold `end` positions and still back `keys` (nothing replaced them)."""
        buffer = self._key_buffer
        if buffer is None or end > buffer.shape[-2]:
            return False
        return keys.numel() == 0 or keys.data_ptr() == buffer.data_ptr()

    def adopt(self, key_buffer: torch.Tensor, value_buffer: torch.Tensor, length: int) -> None:
        """Take buffers whose first `length` positions are already filled (a prefill made elsewhere)."""
        self.lazy_initialization(key_buffer, value_buffer)
        self._key_buffer, self._value_buffer = key_buffer, value_buffer
        self.keys, self.values = key_buffer[..., :length, :], value_buffer[..., :length, :]


def _buffer(current: torch.Tensor, new: torch.Tensor, size: int) -> torch.Tensor:
    """An empty buffer of `size` positions shaped like `new`, holding `current` at its start."""
    buffer = new.new_empty((*new.shape[:-2], size, new.shape[-1]))
    if current.numel():
        buffer[..., : current.shape[-2], :].copy_(current)
    return buffer


class ReservedCache(DynamicCache):
    """A `DynamicCache` of `ReservedLayer`s, `reserve` positions beyond the prefill in each."""

    def __init__(self, num_layers: int, reserve: int) -> None:
        Cache.__init__(self, layers=[ReservedLayer(reserve) for _ in range(num_layers)])

    @classmethod
    def filled(cls, buffers: list[tuple[torch.Tensor, torch.Tensor]], length: int) -> ReservedCache:
        """A cache over per-layer (keys, values) buffers whose first `length` positions hold a prefill."""
        cache = cls(len(buffers), reserve=0)
        for layer, (keys, values) in zip(cache.layers, buffers, strict=True):
            assert isinstance(layer, ReservedLayer)
            layer.adopt(keys, values, length)
        return cache


def cache_kwarg(model: Any) -> str:
    """The keyword `model.forward` and `generate` take a cache by: ``cache`` from transformers 5.2x on,
    ``past_key_values`` before (deprecated since, to be removed)."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
