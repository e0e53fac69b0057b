"""Probes of a Ray's listening ports as a client without the token would make them: which TCP ports the
processes of a Ray listen on, and what each answers to an HTTP job submission or a gRPC call of Ray's
control services, with and without the token (tests/integration/test_cli_serve_security.py, and the table
in docs/serve.md "Security")."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass

import psutil

#: One method of each Ray gRPC service that listens on its own port: GCS, raylet (node manager and object
#: manager), core worker (drivers and workers), dashboard agent (reporter), and a Serve replica's
#: inter-deployment server (Ray 2.60). A server answers UNIMPLEMENTED for a service it does not run.
GRPC_METHODS = ("/ray.rpc.NodeInfoGcsService/GetAllNodeInfo", "/ray.rpc.NodeManagerService/GetNodeStats",
                "/ray.rpc.ObjectManagerService/Pull", "/ray.rpc.CoreWorkerService/NumPendingTasks",
                "/ray.rpc.ReporterService/GetTraceback", "/ray.serve.ASGIService/HandleRequest")
#: The dashboard agent's job API (and the dashboard's, whose POST /api/jobs/ takes the same body).
JOB_PATHS = ("/api/job_agent/jobs/", "/api/jobs/")


@dataclass(frozen=True)
class Listener:
    host: str
    port: int
    process: str


def listeners(pids: set[int]) -> list[Listener]:
    """The TCP sockets `pids` listen on (what ``ss -ltnp`` shows for them)."""
    found = set()
    for conn in psutil.net_connections("tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.pid in pids:
            try:
                name = psutil.Process(conn.pid).name()
            except psutil.NoSuchProcess:
                continue
            found.add(Listener(conn.laddr.ip, conn.laddr.port, name))
    return sorted(found, key=lambda lst: (lst.port, lst.host))


def tree(pid: int) -> set[int]:
    """`pid` and all its descendants (a local Ray's GCS, raylet, agents and workers descend from the
    driver that started it)."""
    proc = psutil.Process(pid)
    return {pid, *(child.pid for child in proc.children(recursive=True))}


def reach(listener: Listener) -> str:
    """The address a client on this machine reaches `listener` at (loopback for a wildcard bind)."""
    return "127.0.0.1" if listener.host in ("0.0.0.0", "::") else listener.host


def http_job_submission(host: str, port: int, headers: dict[str, str]) -> int | None:
    """The HTTP status of a job submission (a harmless entrypoint) to each job path of `host`:`port`, the
    first that is not 404; None when the port does not speak HTTP."""
    status = None
    for path in JOB_PATHS:
        conn = http.client.HTTPConnection(host, port, timeout=5)
        try:
            conn.request("POST", path, body=json.dumps({"entrypoint": "true"}),
                         headers={"Content-Type": "application/json", **headers})
            status = conn.getresponse().status
        except (http.client.HTTPException, OSError):
            return None
        finally:
            conn.close()
        if status != 404:
            return status
    return status


def grpc_codes(host: str, port: int, token: str | None) -> dict[str, str]:
    """The gRPC status name of each `GRPC_METHODS` call (empty request) to `host`:`port`, with the token
    in ``authorization`` metadata or without it."""
    import grpc

    metadata = [("authorization", f"Bearer {token}")] if token else None
    codes = {}
    with grpc.insecure_channel(f"{host}:{port}") as channel:
        for method in GRPC_METHODS:
            call = channel.unary_unary(method, request_serializer=bytes, response_deserializer=bytes)
            try:
                call(b"", timeout=5, metadata=metadata)
                codes[method] = "OK"
            except grpc.RpcError as e:
                codes[method] = e.code().name
    return codes


def serves_metrics(host: str, port: int) -> bool:
    """Whether `host`:`port` answers ``GET /metrics`` without a token with Prometheus text."""
    conn = http.client.HTTPConnection(host, port, timeout=5)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        return response.status == 200 and response.read(200).startswith(b"# ")
    except (http.client.HTTPException, OSError):
        return False
    finally:
        conn.close()
