"""Small helpers shared by the charts.

A chart here holds plain-data Kubernetes objects: each is the dict cdk8s's ``ApiObject.toJson()`` would return
for it, built in Python (a jsii object and a JSON patch per field cost about 3 ms an object, 4,800 objects at 300
teams). The cdk8s charts stay: they give the objects their construct scopes (one chart per team, cluster-scoped
objects apart) and ids; the objects are listed per chart in the order they were added, as cdk8s lists objects
without dependencies. ``tests/charts/test_plain_objects.py`` checks the dicts against cdk8s's own.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional

from cdk8s import Chart
from constructs import Construct

MANAGED_BY = {"app.kubernetes.io/managed-by": "hyperpod-gov"}
_OBJECTS = "_hyperpod_gov_objects"  # attribute of a chart: its objects, by id, in the order added


def _chart_and_path(scope: Construct) -> tuple[Chart, str]:
    """The chart a scope belongs to and the scope's path below it ('' for the chart itself)."""
    parts: list[str] = []
    while not isinstance(scope, Chart):
        parts.append(scope.node.id)
        scope = scope.node.scope  # type: ignore[assignment]
        if scope is None:
            raise ValueError(f"a Kubernetes object needs a cdk8s Chart above its scope ({'/'.join(parts)})")
    return scope, "/".join(reversed(parts))


def _as_json(value: Any) -> Any:
    """The value as it comes back from JavaScript: tuples are lists, whole floats are integers, a mapping's
    ``None`` values left out (jsii sends them as ``undefined``)."""
    kind = type(value)  # the exact types first: ``isinstance`` against typing's ``Mapping`` is slow (6,000 objects)
    if kind is str or kind is int or kind is bool:
        return value
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        return {k: _as_json(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_as_json(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _sanitized(value: Any) -> Any:
    """cdk8s's metadata sanitizing: keys sorted, nulls, empty lists and empty mappings left out."""
    if value is None:
        return None
    kind = type(value)
    if kind is str or kind is int or kind is bool:
        return value
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        out = {k: s for k in sorted(value) if (s := _sanitized(value[k])) is not None}
        return out or None
    if isinstance(value, (list, tuple)):
        return [_sanitized(v) for v in value] or None
    return _as_json(value)


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
) -> dict[str, Any]:
    """Add a Kubernetes object to the scope's chart: ``apiVersion``, ``kind``, ``metadata``, then the top-level
    fields of ``body`` (``spec``, ``rules``, ``subjects``...) in their order. Returns the object."""
    chart, path = _chart_and_path(scope)
    objects: dict[str, dict[str, Any]] = chart.__dict__.setdefault(_OBJECTS, {})
    key = f"{path}/{id}" if path else id
    if key in objects:
        raise ValueError(f"there is already a Kubernetes object with id '{key}' in chart {chart.node.id}")
    obj = kubernetes_object(api_version, kind, name, namespace=namespace, labels=labels, annotations=annotations,
                            body=body)
    objects[key] = obj
    return obj


def kubernetes_object(api_version: str, kind: str, name: str, *, namespace: Optional[str] = None,
                      labels: Optional[Mapping[str, str]] = None, annotations: Optional[Mapping[str, str]] = None,
                      body: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The object ``api_object`` adds, outside a chart: metadata keys sorted, the managed-by label, then the
    top-level fields of ``body`` in their order."""
    metadata: dict[str, Any] = {"name": name, "labels": {**MANAGED_BY, **(labels or {})}}
    if namespace:
        metadata["namespace"] = namespace
    if annotations:
        metadata["annotations"] = dict(annotations)
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": _sanitized(metadata) or {}}
    for field, value in (body or {}).items():
        obj[field] = _as_json(value)
    return obj


def chart_objects(chart: Chart) -> list[dict[str, Any]]:
    """The chart's objects, in the order they were added (each a fresh copy)."""
    # Already JSON values (``_as_json``): a JSON round trip copies them exactly, in C.
    return json.loads(json.dumps(list(chart.__dict__.get(_OBJECTS, {}).values())))


def cluster_chart(scope: Construct, id: str) -> Chart:
    """A chart without a namespace, for cluster-scoped objects (cdk8s stamps a chart namespace on all)."""
    return Chart(scope, id, disable_resource_name_hashes=True)
