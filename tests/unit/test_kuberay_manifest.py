"""The KubeRay `RayJob` manifest beside cluster.yaml is valid YAML of the v1 CRD shape (not applied here)."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def test_rayjob_manifest_shape() -> None:
    job = yaml.safe_load((REPO / "kuberay" / "rayjob.yaml").read_text(encoding="utf-8"))
    assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
    spec = job["spec"]
    assert "biorab sweep jobs/paper.yaml" in spec["entrypoint"]
    assert spec["shutdownAfterJobFinishes"] is True
    cluster = spec["rayClusterSpec"]
    assert cluster["rayVersion"] == "2.60.0"  # the pinned Ray of pyproject.toml
    assert cluster["authOptions"] == {"mode": "token"}  # Ray's token auth (docs/serve.md "Security")
    head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
    (workers,) = cluster["workerGroupSpecs"]
    worker = workers["template"]["spec"]["containers"][0]
    assert head["image"] == worker["image"] == "rayproject/ray-ml:2.60.0-py311-gpu"
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == workers["rayStartParams"]["num-gpus"] == "8"
    env = yaml.safe_load(spec["runtimeEnvYAML"])
    assert env["env_vars"]["BIORAB_DATA_DIR"].startswith("/mnt/shared/")
    mounts = {m["mountPath"] for m in worker["volumeMounts"]}
    assert "/mnt/shared" in mounts and "/dev/shm" in mounts
