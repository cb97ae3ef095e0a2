"""Validate Kueue objects as the API server would: CRD schema, CEL rules, and the webhook rules.

Schemas and CEL rules come from tests/kueue-crds (copies of shared/kueue-crds, Kueue v0.19.2, unmodified).
The webhook rules are those the CRDs' README lists (not visible in the schema).
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import celpy
import jsonschema
import yaml

CRDS = Path(__file__).resolve().parent / "kueue-crds"
SHARED_CRDS = Path(__file__).resolve().parents[2] / "shared" / "kueue-crds"  # beside the clone, when present

QUANTITY_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9, "": 1}


def quantity(value: Any) -> Decimal:
    text = str(value)
    for suffix in sorted(QUANTITY_SUFFIX, key=len, reverse=True):
        if suffix and text.endswith(suffix):
            return Decimal(text[: -len(suffix)]) * QUANTITY_SUFFIX[suffix]
    return Decimal(text)


@lru_cache(maxsize=None)
def schema_for(kind: str) -> dict[str, Any]:
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"]["names"]["kind"] == kind:
            version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta2")
            return version["schema"]["openAPIV3Schema"]
    raise KeyError(f"no v1beta2 CRD for {kind} in {CRDS}")


def _cel_rules(schema: dict[str, Any], value: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """(path, rule, value) for every x-kubernetes-validations rule that applies to ``value``."""
    for rule in schema.get("x-kubernetes-validations", []):
        yield path, rule["rule"], value
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                yield from _cel_rules(sub, value[key], f"{path}.{key}")
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            yield from _cel_rules(schema["items"], item, f"{path}[{i}]")


def cel_errors(schema: dict[str, Any], obj: dict[str, Any]) -> list[str]:
    env = celpy.Environment()
    errors = []
    for path, rule, value in _cel_rules(schema, obj, ""):
        if "oldSelf" in rule:  # transition rules only apply to updates
            continue
        program = env.program(env.compile(rule))
        if not program.evaluate({"self": celpy.json_to_cel(value)}):
            errors.append(f"{path}: CEL rule failed: {rule}")
    return errors


def webhook_errors(obj: dict[str, Any]) -> list[str]:
    if obj["kind"] != "ClusterQueue":
        return []
    spec = obj["spec"]
    errors = []
    seen_flavors: set[str] = set()
    seen_resources: set[str] = set()
    for gi, group in enumerate(spec.get("resourceGroups", [])):
        covered = group["coveredResources"]
        for r in covered:
            if r in seen_resources:
                errors.append(f"resource {r} repeated across resource groups")
            seen_resources.add(r)
        for flavor in group["flavors"]:
            if flavor["name"] in seen_flavors:
                errors.append(f"flavor {flavor['name']} repeated")
            seen_flavors.add(flavor["name"])
            if [r["name"] for r in flavor["resources"]] != covered:
                errors.append(f"group {gi} flavor {flavor['name']}: resources not in coveredResources order")
            for r in flavor["resources"]:
                if "lendingLimit" in r and quantity(r["lendingLimit"]) > quantity(r["nominalQuota"]):
                    errors.append(f"{flavor['name']}/{r['name']}: lendingLimit > nominalQuota")
                if ("lendingLimit" in r or "borrowingLimit" in r) and not spec.get("cohortName"):
                    errors.append(f"{flavor['name']}/{r['name']}: limits without cohortName")
    weight = spec.get("fairSharing", {}).get("weight")
    if weight is not None and not (quantity(weight) == 0 or quantity(weight) > Decimal("1e-9")):
        errors.append(f"fairSharing.weight {weight} must be 0 or > 1e-9")
    return errors


def kueue_errors(obj: dict[str, Any]) -> list[str]:
    assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2", obj["apiVersion"]
    schema = schema_for(obj["kind"])
    validator = jsonschema.Draft7Validator(schema)  # x-kubernetes-* keys are ignored; int-or-string has anyOf
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(obj)]
    return errors + cel_errors(schema, obj) + webhook_errors(obj)
