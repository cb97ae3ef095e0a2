"""Validate the Karpenter objects (HyperpodNodeClass, NodePool) as the API server would: the CRD's schema, its CEL
rules, and kubectl's strict field validation (an unknown field is refused, not pruned).

Schemas come from tests/karpenter-crds (README.md there: the NodePool CRD is upstream Karpenter v1.6.0's, unmodified;
the HyperpodNodeClass CRD is written from AWS's documentation, because AWS publishes none).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import celpy
import jsonschema
import yaml

from tests.kueue_schema import _cel_rules

CRDS = Path(__file__).resolve().parent / "karpenter-crds"


@lru_cache(maxsize=None)
def crd_for(kind: str) -> dict[str, Any]:
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"]["names"]["kind"] == kind:
            return crd
    raise KeyError(f"no CRD for {kind} in {CRDS}")


def schema_for(api_version: str, kind: str) -> dict[str, Any]:
    crd = crd_for(kind)
    group, _, version = api_version.rpartition("/")
    assert group == crd["spec"]["group"], (api_version, crd["spec"]["group"])
    served = next(v for v in crd["spec"]["versions"] if v["name"] == version and v["served"])
    return served["schema"]["openAPIV3Schema"]


def _find(text: Any, pattern: Any) -> celpy.celtypes.StringType:
    """Kubernetes' CEL regex library: ``s.find(re)``, the first match or ''."""
    m = re.search(str(pattern), str(text))
    return celpy.celtypes.StringType(m.group(0) if m else "")


def cel_errors(schema: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    env = celpy.Environment()
    errors = []
    for path, rule, value in _cel_rules(schema, obj, ""):
        if "oldSelf" in rule:  # transition rules only apply to updates
            continue
        program = env.program(env.compile(rule), functions={"find": _find})
        if not program.evaluate({"self": celpy.json_to_cel(value)}):
            errors.append(f"{path}: CEL rule failed: {rule}")
    return errors


def unknown_fields(schema: dict[str, Any], value: Any, path: str = "") -> Iterator[str]:
    """Fields the schema does not declare (kubectl's default ``--validate=strict`` has the server refuse them)."""
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, sub in value.items():
            if props is not None and key in props:
                yield from unknown_fields(props[key], sub, f"{path}.{key}")
            elif isinstance(extra, dict):
                yield from unknown_fields(extra, sub, f"{path}.{key}")
            elif props is not None:
                yield f"{path}.{key}: unknown field"
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            yield from unknown_fields(schema["items"], item, f"{path}[{i}]")


def karpenter_errors(obj: dict[str, Any]) -> list[str]:
    schema = schema_for(obj["apiVersion"], obj["kind"])
    validator = jsonschema.Draft7Validator(schema)  # x-kubernetes-* keys are ignored; int-or-string has anyOf
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]
    return errors + cel_errors(schema, obj) + list(unknown_fields(schema, obj))
