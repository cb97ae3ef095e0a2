"""Small helpers shared by the charts."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from cdk8s import ApiObject, Chart, JsonPatch
from constructs import Construct

MANAGED_BY = {"app.kubernetes.io/managed-by": "hyperpod-gov"}


def api_object(
    scope: Construct,
    id: str,
    *,
    api_version: str,
    kind: str,
    name: str,
    namespace: Optional[str] = None,
    labels: Optional[Mapping[str, str]] = None,
    annotations: Optional[Mapping[str, str]] = None,
    body: Optional[Mapping[str, Any]] = None,
) -> ApiObject:
    """An ApiObject with top-level fields (``spec``, ``rules``, ``subjects``...) set by JSON patches."""
    metadata: dict[str, Any] = {"name": name, "labels": {**MANAGED_BY, **(labels or {})}}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = dict(annotations)
    obj = ApiObject(scope, id, api_version=api_version, kind=kind, metadata=metadata)
    for key, value in (body or {}).items():
        obj.add_json_patch(JsonPatch.add(f"/{key}", value))
    return obj


def cluster_chart(scope: Construct, id: str) -> Chart:
    """A chart without a namespace, for cluster-scoped objects (cdk8s stamps a chart namespace on all)."""
    return Chart(scope, id, disable_resource_name_hashes=True)
