"""A Kubernetes API server on 127.0.0.1 (stdlib http.server) that answers GET with the API's own JSON.

It serves list (across namespaces and in one namespace, with ``limit``/``continue`` pages) and get, 404 as a
``Status`` object, and 403 for the resources a test forbids. Objects are added as manifests, with the metadata and
defaults an API server adds, so drift's comparison meets what a real server returns.
"""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlparse

from hyperpod_gov.live.k8s import KINDS

PLURAL_TO_KIND = {plural: kind for kind, (plural, _) in KINDS.items()}


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


def with_server_fields(manifest: dict[str, Any], n: int) -> dict[str, Any]:
    """The manifest as the API server stores it: uid, resourceVersion, creationTimestamp, and some defaults."""
    obj = copy.deepcopy(manifest)
    meta = obj.setdefault("metadata", {})
    meta.update(uid=f"00000000-0000-0000-0000-{n:012d}", resourceVersion=str(1000 + n),
                creationTimestamp="2026-11-01T12:00:00Z")
    if obj["kind"] == "ValidatingAdmissionPolicy":
        obj["spec"].setdefault("failurePolicy", "Fail")
        obj["spec"].setdefault("matchConstraints", {}).setdefault("matchPolicy", "Equivalent")
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if obj["kind"] == "ValidatingAdmissionPolicyBinding":
        match = spec.setdefault("matchResources", {})
        match.setdefault("matchPolicy", "Equivalent")
        match.setdefault("namespaceSelector", {})
        match.setdefault("objectSelector", {})
    if obj["kind"] == "NetworkPolicy":
        for rule in (spec.get("ingress") or []) + (spec.get("egress") or []):
            for port in rule.get("ports") or []:
                port.setdefault("protocol", "TCP")
    if obj["kind"] in ("ClusterQueue", "LocalQueue"):
        spec.setdefault("stopPolicy", "None")
    if obj["kind"] == "ClusterQueue":
        spec.setdefault("flavorFungibility", {"whenCanBorrow": "Borrow", "whenCanPreempt": "TryNextFlavor"})
    if obj["kind"] in ("PersistentVolume", "PersistentVolumeClaim"):
        spec.setdefault("volumeMode", "Filesystem")
        obj["status"] = {"phase": "Bound"}
    if obj["kind"] == "Namespace":
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    return obj


class FakeKubernetes:
    """Objects keyed by (kind, namespace, name); ``start()`` serves them until ``stop()``."""

    def __init__(self, manifests: list[dict[str, Any]] = (), page_size: int = 3):
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.page_size = page_size
        self.forbidden: set[str] = set()  # plurals answered with 403
        self.raw: dict[str, dict[str, Any]] = {}  # path -> object, for kinds drift does not read (Deployments)
        self.requests: list[tuple[str, str, Optional[str]]] = []  # (method, path with query, Authorization)
        for m in manifests:
            self.add(m)

    def add(self, manifest: dict[str, Any]) -> dict[str, Any]:
        meta = manifest["metadata"]
        namespaced = KINDS[manifest["kind"]][1]
        obj = with_server_fields(manifest, len(self.objects) + 1)
        self.objects[(manifest["kind"], meta.get("namespace", "") if namespaced else "", meta["name"])] = obj
        return obj

    def find(self, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
        return self.objects[(kind, namespace, name)]

    def remove(self, kind: str, name: str, namespace: str = "") -> None:
        del self.objects[(kind, namespace, name)]

    # --- HTTP ------------------------------------------------------------------------------

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        if path in self.raw:
            return 200, self.raw[path]
        parts = [p for p in path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group_version, rest = "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
        else:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or rest[0] not in PLURAL_TO_KIND:
            return 404, status(404, "NotFound", "the server could not find the requested resource")
        plural, kind = rest[0], PLURAL_TO_KIND[rest[0]]
        if plural in self.forbidden:
            return 403, status(403, "Forbidden", f'{plural} is forbidden: User "test" cannot list resource '
                                                 f'"{plural}" at the cluster scope')
        objs = [o for (k, ns, _), o in sorted(self.objects.items())
                if k == kind and o["apiVersion"] == group_version and (not namespace or ns == namespace)]
        if len(rest) == 2:
            name = rest[1]
            found = next((o for o in objs if o["metadata"]["name"] == name), None)
            if found is None:
                return 404, status(404, "NotFound", f'{plural} "{name}" not found')
            return 200, found
        start = int(query.get("continue", ["0"])[0])
        limit = min(int(query.get("limit", [str(len(objs) or 1)])[0]), self.page_size)
        page = objs[start:start + limit]
        items = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]  # as lists omit them
        meta: dict[str, Any] = {"resourceVersion": "5000"}
        if start + limit < len(objs):
            meta["continue"] = str(start + limit)
        return 200, {"kind": f"{kind}List", "apiVersion": group_version, "metadata": meta, "items": items}

    def start(self) -> str:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urlparse(self.path)
                fake.requests.append(("GET", self.path, self.headers.get("Authorization")))
                code, body = fake.answer(url.path, parse_qs(url.query))
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _refuse(self) -> None:
                fake.requests.append((self.command, self.path, self.headers.get("Authorization")))
                self.send_response(405)
                self.end_headers()

            do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # shutdown() waits for serve_forever to look at its flag again: every 0.5 s by default, in every test's
        # teardown
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def kubeconfig(server: str, *, token: str = "test-token", name: str = "test") -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    })
