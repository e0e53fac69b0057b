"""The rest of the door (issue 40 item 4): a chunked body is refused as soon as it passes the limit, FastAPI's
own 404/405 come in OpenAI's error shape, chat's ``stop`` is honoured and ``tools`` / ``response_format``
/ ``logprobs`` are refused, adapters are named without the server's paths. Over HTTP on the real app:
tests/ray/test_serve_app.py::test_unsupported_chat_parameters_and_unknown_routes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError

from serve.adapter import public_name
from serve.answering import check_sampling
from serve.config import load_serve_config
from serve.errors import ApiError, validation_error
from serve.http import install, read_capped
from serve.schemas import ChatRequest


class Streamed:
    """A request whose body arrives in `n` chunks of `size` bytes; counts the chunks read."""

    def __init__(self, n: int, size: int) -> None:
        self.n, self.size, self.read = n, size, 0

    async def stream(self) -> AsyncIterator[bytes]:
        for _ in range(self.n):
            self.read += 1
            yield b"x" * self.size


def test_a_chunked_body_is_refused_at_the_limit_without_reading_the_rest() -> None:
    request = Streamed(n=100, size=1000)
    with pytest.raises(ApiError) as caught:
        asyncio.run(read_capped(request, 4096))  # type: ignore[arg-type]
    assert (caught.value.status, caught.value.message) == (
        413, "request body exceeds the limit of 4096 bytes (stopped reading at 5000 bytes)")
    assert request.read == 5  # 5 of 100 chunks: the fifth passed the limit
    small = Streamed(n=4, size=1000)
    assert asyncio.run(read_capped(small, 4096)) == b"x" * 4000  # type: ignore[arg-type]


def test_fastapis_own_404_and_405_are_in_openai_error_shape() -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    api = FastAPI()
    install(api)

    @api.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"data": []}

    client = TestClient(api)
    missing = client.get("/v1/nope")
    assert missing.status_code == 404
    assert missing.json()["error"] == {"message": "Not Found", "type": "invalid_request_error", "param": None,
                                       "code": 404, "request_id": missing.headers["X-Request-ID"]}
    wrong = client.post("/v1/models")
    assert wrong.status_code == 405 and wrong.json()["error"]["message"] == "Method Not Allowed"
    assert wrong.headers["allow"] == "GET"


def body(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "rash"}], **extra}


@pytest.mark.parametrize(("extra", "field"), [
    ({"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ({"tool_choice": "auto"}, "tool_choice"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"logprobs": True}, "logprobs"),
    ({"functions": [{"name": "f"}]}, "functions"),
])
def test_parameters_that_change_the_answers_form_are_named(extra: dict[str, Any], field: str) -> None:
    assert ChatRequest.model_validate(body(**extra)).unsupported() == field


def test_harmless_forms_of_them_are_accepted() -> None:
    harmless: list[dict[str, Any]] = [{"response_format": {"type": "text"}}, {"logprobs": False},
                                      {"tools": []}, {}]
    for extra in harmless:
        assert ChatRequest.model_validate(body(**extra)).unsupported() is None


def test_stop_strings_are_honoured_after_the_rals_own_and_bounded() -> None:
    cfg = load_serve_config(overrides={"sampling": {"stop": ["\n\n"]}})
    (ral,) = cfg.rals
    one = ChatRequest.model_validate(body(stop="END")).sampling_update()
    assert one == {"stop": ("END",)}
    assert check_sampling(ral, cfg.limits, one) == ral.sampling.model_copy(update={"stop": ("\n\n", "END")})
    assert ChatRequest.model_validate(body(stop=["a", "b"])).sampling_update() == {"stop": ("a", "b")}
    with pytest.raises(ValidationError) as caught:
        ChatRequest.model_validate(body(stop=["a", "b", "c", "d", "e"]))
    error = validation_error(list(caught.value.errors()))
    assert (error.status, error.message) == (422, "field 'stop': Value error, at most 4 stop strings, not 5")


def test_adapters_are_named_without_the_servers_paths() -> None:
    assert public_name("/srv/models/adapters/lora-a") == "lora-a"
    assert public_name("models:/biorab-ral-adapter@best") == "models:/biorab-ral-adapter@best"
    assert public_name(None) is None
