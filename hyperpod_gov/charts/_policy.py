"""What the admission policies share: their API and name prefix, the rules that match Pods and every workload kind
of the table, and the CEL helpers over the pod specs of the object under review."""

from __future__ import annotations

from typing import Any

from ..plan.workloads import CORE, WORKLOAD_KINDS, WorkloadKind, pod_specs_expression

ADMISSION_API = "admissionregistration.k8s.io/v1"
POLICY_PREFIX = "hyperpod-gov"

# Where every workload kind keeps its pod templates (plan/workloads.py: Kubeflow kinds a map of replica type -> spec,
# HyperPod a list, the inference and spaces kinds their pod fields written as a pod spec).
POD_SPECS = pod_specs_expression(WORKLOAD_KINDS)
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _cel_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def _every_container(predicate: str) -> str:
    """``predicate`` (over ``c``, and ``s`` its pod spec) holds for every container of every pod spec."""
    lists = " && ".join(f"(has(s.{k}) ? s.{k} : []).all(c, {predicate})" for k in CONTAINER_LISTS)
    return f"variables.specs.all(s, {lists})"


def _every_spec(predicate: str) -> str:
    return f"variables.specs.all(s, {predicate})"


def _check(expression: str, message: str) -> dict[str, str]:
    return {"expression": expression, "message": message, "reason": "Forbidden"}


def kind_resources(kinds: tuple[WorkloadKind, ...] = WORKLOAD_KINDS) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(API group, sorted resources) of ``kinds``, groups in table order: how RBAC rules and policies name them."""
    groups: dict[str, set[str]] = {}
    for k in kinds:
        groups.setdefault(k.group, set()).add(k.resource)
    return tuple((g, tuple(sorted(r))) for g, r in groups.items())


EPHEMERAL_CONTAINERS = "pods/ephemeralcontainers"  # kubectl debug adds containers to a running pod through it


def _workload_rules(operations: list[str], *, ephemeral: bool = True) -> list[dict[str, Any]]:
    """Pods (with their ephemeral containers) and every kind of the table: the union over all teams (RBAC decides
    which a team may create)."""
    pods = ["pods", EPHEMERAL_CONTAINERS] if ephemeral else ["pods"]
    rules = [{"apiGroups": [CORE], "apiVersions": ["*"], "resources": pods, "operations": operations}]
    rules += [{"apiGroups": [group], "apiVersions": ["*"], "resources": list(resources), "operations": operations}
              for group, resources in kind_resources()]
    return rules
