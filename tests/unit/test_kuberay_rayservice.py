"""The KubeRay `RayService` beside kuberay/rayjob.yaml: its ``serveConfigV2`` is what
`serve.app.ray_serve_config` generates from the serve config it names (regenerated here), Ray's own
schema (`ray.serve.schema.ServeDeploySchema`) accepts it, and the app it names builds from its args.
Not applied to a cluster (no Kubernetes here)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # imports Ray Serve
def test_rayservice_serve_config_is_generated_and_valid_for_ray(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    from ray.serve.schema import ServeDeploySchema

    from serve.app import build_app, ray_serve_config
    from serve.config import load_serve_config

    manifest = yaml.safe_load((REPO / "kuberay" / "rayservice.yaml").read_text(encoding="utf-8"))
    assert (manifest["apiVersion"], manifest["kind"]) == ("ray.io/v1", "RayService")
    served = yaml.safe_load(manifest["spec"]["serveConfigV2"])
    schema = ServeDeploySchema.model_validate(served)
    (app,) = schema.applications
    args = app.args
    assert app.import_path == "serve.app:build_app" and args["config"] == "serve/smoke.yaml"
    on_pods = {**args["overrides"], "http": {"host": "0.0.0.0"}}
    cfg = load_serve_config(REPO / args["config"], overrides=on_pods)
    regenerated = ray_serve_config(cfg, args["config"], overrides=args["overrides"],
                                   proxy_location="EveryNode",
                                   runtime_env=served["applications"][0]["runtime_env"])
    assert served == regenerated  # committed == generated: edit the serve config, then regenerate
    by_name = {d.name: d for d in app.deployments}
    assert sorted(by_name) == ["generator", "ingress", "retriever"]
    scaling = by_name["generator"].autoscaling_config
    assert (scaling["min_replicas"], scaling["max_replicas"], scaling["target_ongoing_requests"]) == (1, 4, 8)
    # The ingress admits as many generator calls as the 4 replicas hold (8 ongoing each) + 4 queued.
    assert by_name["generator"].max_queued_requests == 4 * 8 + 4
    assert schema.http_options.host == "0.0.0.0" and schema.proxy_location == "EveryNode"
    cluster = manifest["spec"]["rayClusterConfig"]
    assert cluster["rayVersion"] == "2.60.0" and cluster["enableInTreeAutoscaling"] is True
    assert cluster["authOptions"] == {"mode": "token"}  # Ray's token auth (docs/serve.md "Security")
    # The API keys reach the pods as a mounted file, never as an environment variable that every Ray
    # process of the pod would inherit (issue 40): only the digests reach the replicas.
    for group in (cluster["headGroupSpec"], *cluster["workerGroupSpecs"]):
        pod = group["template"]["spec"]
        (container,) = pod["containers"]
        assert all(e["name"] != "BIORAB_API_KEYS" for e in container.get("env", []))
        assert {"name": "api-keys", "mountPath": "/etc/biorab/api-keys", "readOnly": True} \
            in container["volumeMounts"]
        assert {"name": "api-keys", "secret": {"secretName": "biorab-api-keys", "defaultMode": 0o400}} \
            in pod["volumes"]
    assert cfg.auth.api_keys_file == "/etc/biorab/api-keys/keys"
    keys = tmp_path / "keys"  # the mounted Secret's file, here
    keys.write_text("k\n", encoding="utf-8")
    args = {**args, "overrides": {**args["overrides"], "auth": {"api_keys_file": str(keys)}}}
    monkeypatch.delenv("BIORAB_API_KEYS", raising=False)
    monkeypatch.chdir(REPO)
    ingress = build_app(args)._bound_deployment  # what the cluster's `build_app` builds from these args
    (ral,) = ingress.init_args[1].values()
    assert ral["generator"]._bound_deployment._deployment_config.max_queued_requests == 36


def test_autoscaling_is_checked_when_the_config_loads(tmp_path: Path) -> None:
    from biorab.common.errors import ConfigError
    from serve.config import load_serve_config

    bad = {"deployments": {"generator": {"autoscaling": {"min_replicas": 3, "max_replicas": 2}}}}
    with pytest.raises(ConfigError, match=r"max_replicas \(2\) must be greater than or equal to min_rep"):
        load_serve_config(overrides=bad)
    with pytest.raises(ConfigError, match="max_replica"):
        load_serve_config(overrides={"deployments": {"generator": {"autoscaling": {"max_replica": 2}}}})
