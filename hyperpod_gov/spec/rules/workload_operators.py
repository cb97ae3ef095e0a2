"""HPG-D009: a team's approved workloads run on an operator the cluster has (docs/operators.md, docs/workloads.md).

A contract that approves ``inference`` lets the team create InferenceEndpointConfigs and JumpStartModels, which
only the HyperPod inference operator runs; ``interactive`` and ``experimentation`` admit Workspaces, which only the
spaces operator runs; ``ray`` admits RayJobs, RayClusters and RayServices, which only KubeRay runs
(``spec.workloads.OPERATOR_NEEDED``). Without the operator the CRDs do not exist: the team's
RBAC names kinds nobody serves, and the contract promises work the cluster cannot run.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ..workloads import operator_needed
from ._common import _slurm

# What each operator is called in a refusal: the inference and spaces operators are HyperPod's, Ray runs on the open
# source KubeRay operator unchanged (sagemaker-hyperpod-ray-install-kuberay.html).
OPERATOR_NAMES = {"inference": "HyperPod inference operator", "spaces": "HyperPod spaces operator",
                  "ray": "KubeRay operator"}


def installed_operators(spec: GovernanceSpec) -> tuple[str, ...]:
    """The operators hyperpod-gov installs: cluster.operators, or with cluster.existing only when the key is set."""
    c = spec.cluster
    return tuple(c.operators) if c.existing is None or "operators" in c.model_fields_set else ()


def _listed(kinds: tuple[str, ...]) -> str:
    """``A``, ``As and Bs``, ``As, Bs and Cs``."""
    plural = [k + "s" for k in kinds]
    return plural[0] if len(plural) == 1 else f"{', '.join(plural[:-1])} and {plural[-1]}"


def _fix(op: str, word: str, existing: bool, installed: tuple[str, ...]) -> str:
    drop = f"or remove {word} from the contract's approvedWorkloads"
    if not existing:
        return f"add {op} to cluster.operators (operators: [{', '.join((*installed, op))}]) {drop}"
    if op == "inference":  # HPG-D005: hyperpod-gov does not install it on an existing cluster
        return (f"install the inference operator on the cluster (docs/operators.md) and add inference to "
                f"cluster.existing.operators, {drop}")
    return (f"add {op} to cluster.existing.operators if it runs there already, or to cluster.operators for "
            f"hyperpod-gov to install it, {drop}")


@rule("HPG-D009", "error", "Each team's approved workloads run on an operator the cluster has: inference on the "
      "HyperPod inference operator, interactive and experimentation on the spaces operator, ray on KubeRay "
      "(cluster.operators; with "
      "cluster.existing also cluster.existing.operators, the ones that run there already, which cluster.operators "
      "does not install a second time).")
def approved_workloads_have_their_operators(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if _slurm(spec):  # Slurm partitions run any work: no Kubernetes kinds, no operators
        return
    c = spec.cluster
    installed = installed_operators(spec)
    running = c.existing.operators if c.existing is not None else ()
    for i, op in enumerate(running):
        if op in installed:
            yield SpecIssue(f"cluster.existing.operators[{i}]", f"says the {op} operator runs on the cluster "
                            f"already, and cluster.operators installs it too: EKS refuses a second add-on of the "
                            f"same name", op, f"remove {op} from cluster.operators (or from "
                            f"cluster.existing.operators if it does not run there)")
    have = set(installed) | set(running)
    where = (f"cluster.operators: [{', '.join(installed)}]" if c.existing is None else
             f"cluster.operators installs [{', '.join(installed)}], cluster.existing.operators runs "
             f"[{', '.join(running)}]")
    for ti, team in enumerate(spec.teams):
        if team.contract is None:
            continue
        words = list(team.contract.approved_workloads)
        for wi, word in enumerate(words):
            needed = operator_needed(word)
            if needed is None or needed[0] in have or word in words[:wi]:
                continue
            op, kinds = needed
            yield SpecIssue(f"teams[{ti}].contract.approvedWorkloads[{wi}]",
                            f"lets team {team.name} create {_listed(kinds)}, which only the {OPERATOR_NAMES[op]} "
                            f"runs, and the cluster has no {op} operator ({where})", word,
                            _fix(op, word, c.existing is not None, installed))

