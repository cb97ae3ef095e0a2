"""HPG-S, the cluster's shape: Slurm keys only with cluster.orchestrator: slurm, the node types a Slurm cluster needs,
no EKS-only key, and the accounting database (docs/slurm.md)."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from .._base import SpecModel
from ..errors import NO_VALUE, SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _slurm


# Each key that only means something on EKS, where it lives on its model, and what a Slurm cluster has instead.
EKS_ONLY_CLUSTER = (
    ("kubernetesVersion", "kubernetes_version", "Slurm's version is the one HyperPod installs (the scripts probe "
     "`sinfo -V`)"),
    ("endpointAccess", "endpoint_access", "a Slurm cluster has no Kubernetes API: users reach the Login group (SSM "
     "or SSH) and submit with sbatch"),
    ("adminCidrs", "admin_cidrs", "a Slurm cluster has no Kubernetes API endpoint: users reach the Login group "
     "(SSM or SSH)"),
    ("apiAccess", "api_access", "a Slurm cluster has no Kubernetes API endpoint: users reach the Login group (SSM "
     "or SSH)"),
    ("authenticationMode", "authentication_mode", "Slurm authenticates users with munge and POSIX identities, not "
     "EKS access entries"),
    ("admins", "admins", "Slurm administrators are POSIX users of the controller (sacctmgr AdminLevel), not EKS "
     "access entries"),
    ("viewers", "viewers", "list the people in teams[].slurm.users: Slurm shows jobs to users with an "
     "association"),
    ("memberClusterReads", "member_cluster_reads", "Kubernetes RBAC has no Slurm counterpart: teams[].slurm.users "
     "may run squeue and sinfo"),
    ("operators", "operators", "HyperPod operators are EKS add-ons; a Slurm cluster runs jobs with sbatch and srun"),
    ("addonVersions", "addon_versions", "EKS add-ons and the Kueue chart do not run on a Slurm cluster (its one key "
     "is observabilityExtension, the monitoring.prometheus extension's pin)"),
    ("dependenciesChart", "dependencies_chart", "the dependencies Helm chart is installed on EKS; a Slurm cluster's "
     "health agent comes with HyperPod's image"),
    ("imageRegistries", "image_registries", "pods pull images on EKS; Slurm jobs run on the nodes' own software"),
    ("existing", "existing", "cluster.existing describes an EKS-orchestrated cluster (eksClusterName, the kubectl "
     "handler); governing a running Slurm cluster is `hyperpod-gov import` with --slurm-dump"),
)


EKS_ONLY_SCHEDULER = (
    ("mode", "mode", "slurmctld schedules a Slurm cluster: priority/multifactor and preempt/qos take the place of "
     "task governance and Kueue"),
    ("taskGovernanceResources", "task_governance_resources", "task governance's cluster policy and compute quotas "
     "are EKS objects; Slurm gets accounts and QOS"),
    ("gangScheduling", "gang_scheduling", "slurmctld starts a job only once all its nodes are allocated, so there is "
     "no pod-readiness timeout to set (Kueue's waitForPodsReady)"),
    ("topology", "topology", "Slurm places jobs with its topology plugin (topology.conf), which HyperPod writes "
     "with the cluster, not with Kueue Topology objects or pod annotations"),
)


EKS_ONLY_GROUP = (
    ("labels", "labels", "Kubernetes labels: a Slurm group's nodes are found by its slurm.partition"),
    ("taints", "taints", "Kubernetes taints: keep work off a Slurm group with dedicatedTo (its partition admits "
     "only that team's accounts)"),
    ("mig", "mig", "MIG partitions would be GPU types every node's gres.conf declares, which hyperpod-gov does not "
     "write: use whole GPUs"),
)


EKS_ONLY_TEAM = (
    ("access", "access", "teams[].slurm.users: POSIX users with an association to the team's account"),
    ("workloadIdentities", "workload_identities", "EKS Pod Identity has no Slurm counterpart: jobs run with the "
     "instance group's execution role"),
    ("egress", "egress", "NetworkPolicies have no Slurm counterpart: the cluster's security groups apply to every "
     "job"),
    ("allowInternetEgress", "allow_internet_egress", "NetworkPolicies have no Slurm counterpart"),
    ("podSecurity", "pod_security", "Pod Security has no Slurm counterpart: jobs run as the submitting POSIX user"),
    ("images", "images", "pod image admission has no Slurm counterpart"),
    ("requirePriority", "require_priority", "Kubernetes admission has no Slurm counterpart: a job without --qos "
     "runs at its account's default QOS"),
    ("storage", "storage", "the team bucket admits the team's IAM roles, which a Slurm team does not have: "
     "teams[].slurm.dataPath is its directory on the shared file system"),
)


EKS_ONLY_TOP = (
    ("unifiedStudio", "unified_studio", "the domain units, project profiles, grants and projects are created by the "
     "studio stacks, which deploy a team's HyperPod connection on an EKS-orchestrated cluster only; on Slurm, Studio "
     "reaches the cluster through the Login group, and cluster.slurm.restrictTaskView with teams[].slurm.studioUser "
     "scopes what each team's project sees (docs/slurm.md)"),
)


def _shown(value: object) -> object:
    if isinstance(value, SpecModel):
        return value.model_dump(by_alias=True, exclude_unset=True)
    if isinstance(value, tuple) and value and isinstance(value[0], SpecModel):
        return [v.model_dump(by_alias=True, exclude_unset=True) for v in value]
    return value


@rule("HPG-S001", "error", "Slurm keys (cluster.slurm, instanceGroups[].slurm, teams[].slurm) appear only with "
      "cluster.orchestrator: slurm, and there every instance group has its slurm role.")
def slurm_keys_match_the_orchestrator(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if not _slurm(spec):
        fix = "set cluster.orchestrator: slurm, or remove the key (an EKS cluster has no Slurm roles)"
        if c.slurm is not None:
            yield SpecIssue("cluster.slurm", "configures Slurm on an EKS-orchestrated cluster", _shown(c.slurm), fix)
        for gi, g in enumerate(c.instance_groups):
            if g.slurm is not None:
                yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm", "gives a Slurm role on an EKS-orchestrated "
                                "cluster", _shown(g.slurm), fix)
        for ti, t in enumerate(spec.teams):
            if t.slurm is not None:
                yield SpecIssue(f"teams[{ti}].slurm", "gives POSIX users on an EKS-orchestrated cluster",
                                _shown(t.slurm), fix + "; on EKS the team's people are access.viewers and submitters")
        return
    for gi, g in enumerate(c.instance_groups):
        if g.slurm is None:
            yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm", "is missing: a Slurm cluster's groups each have a "
                            "node type", NO_VALUE, "add slurm: {nodeType: Compute, partition: NAME} (or nodeType: "
                            "Controller | Login)")


@rule("HPG-S002", "error", "A Slurm cluster has exactly one Controller group and at most one Login group, a "
      "partition on every Compute group and none on Controller or Login groups.")
def slurm_node_types_are_complete(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    groups = [(gi, g) for gi, g in enumerate(spec.cluster.instance_groups) if g.slurm is not None]
    controllers = [gi for gi, g in groups if g.slurm.node_type == "Controller"]
    logins = [gi for gi, g in groups if g.slurm.node_type == "Login"]
    if not controllers:
        yield SpecIssue("cluster.instanceGroups", "has no Controller group: slurmctld and slurmdbd run on it",
                        NO_VALUE, "add a group with slurm: {nodeType: Controller}, e.g. one ml.m5.xlarge")
    for gi in controllers[1:]:
        yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm.nodeType", "is a second Controller group; HyperPod "
                        f"allows one (cluster.instanceGroups[{controllers[0]}])", "Controller",
                        "make it a Compute group, or remove it")
    for gi in logins[1:]:
        yield SpecIssue(f"cluster.instanceGroups[{gi}].slurm.nodeType", "is a second Login group; HyperPod allows "
                        f"at most one (cluster.instanceGroups[{logins[0]}])", "Login",
                        "put the login nodes in one group (raise its count)")
    if not any(g.slurm.node_type == "Compute" for _, g in groups):
        yield SpecIssue("cluster.instanceGroups", "has no Compute group: no node runs jobs", NO_VALUE,
                        "add a group with slurm: {nodeType: Compute, partition: NAME}")
    for gi, g in groups:
        path = f"cluster.instanceGroups[{gi}].slurm.partition"
        if g.slurm.node_type == "Compute" and g.slurm.partition is None:
            yield SpecIssue(path, "is missing: HyperPod needs a partition for every Compute group", NO_VALUE,
                            f"add partition: NAME, e.g. {g.name}")
        elif g.slurm.node_type != "Compute" and g.slurm.partition is not None:
            yield SpecIssue(path, f"is set on a {g.slurm.node_type} group, which runs no jobs; HyperPod refuses it",
                            g.slurm.partition, "remove partition (only Compute groups have one)")


def _eks_only(prefix: str, model: SpecModel, keys: tuple[tuple[str, str, str], ...]) -> Iterator[SpecIssue]:
    for key, attr, instead in keys:
        if attr == "addon_versions" and getattr(model, attr).model_fields_set <= {"observability_extension"}:
            continue  # the Slurm extension's pin (monitoring.prometheus, HPG-S016)
        if attr in model.model_fields_set:
            yield SpecIssue(f"{prefix}.{key}" if prefix else key, f"only applies to an EKS-orchestrated cluster; {instead}",
                            _shown(getattr(model, attr)), f"remove {key} (or set cluster.orchestrator: eks)")


@rule("HPG-S003", "error", "A Slurm spec sets no key that only applies to EKS (Kubernetes version, API endpoint, "
      "access entries, operators and add-ons, scheduler mode, labels and taints, pod access, identities and egress, "
      "Unified Studio delegation); "
      "each refusal names what Slurm has instead.")
def slurm_refuses_eks_only_keys(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if not _slurm(spec):
        return
    yield from _eks_only("cluster", spec.cluster, EKS_ONLY_CLUSTER)
    yield from _eks_only("scheduler", spec.scheduler, EKS_ONLY_SCHEDULER)
    for gi, g in enumerate(spec.cluster.instance_groups):
        yield from _eks_only(f"cluster.instanceGroups[{gi}]", g, EKS_ONLY_GROUP)
    for ti, t in enumerate(spec.teams):
        yield from _eks_only(f"teams[{ti}]", t, EKS_ONLY_TEAM)
    yield from _eks_only("", spec, EKS_ONLY_TOP)


@rule("HPG-S013", "error", "An external Slurm accounting database needs cluster.nodeProvisioningMode: Continuous "
      "(the service supports AccountingDatabase only there).")
def slurm_accounting_database_needs_continuous(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    s = spec.cluster.slurm
    if _slurm(spec) and s is not None and s.accounting_database is not None \
            and spec.cluster.node_provisioning_mode != "Continuous":
        yield SpecIssue("cluster.slurm.accountingDatabase", "is supported only with continuous node provisioning",
                        _shown(s.accounting_database), "set cluster.nodeProvisioningMode: Continuous, or remove "
                        "accountingDatabase (the controller's own MariaDB keeps the accounting)")
