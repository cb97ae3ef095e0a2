"""The tenants: quotas, sharing, people, workload identities, egress and the connection contract."""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator

from .contract import Contract
from .slurm import TeamSlurm
from .tags import MAX_TEAM_TAGS, check_tags
from .monitoring import AlarmOverrides
from ._base import SpecModel, check_ipv4_cidr, check_label, is_link_local, spec_error
from .allocation import BorrowLimit, Partitions, QuotaEntry, Sharing  # noqa: F401 (re-exported)
from .team_data import (  # noqa: F401 (re-exported)
    ECR_REPOSITORY,
    KMS_KEY_ARN,
    SECRET_PREFIX,
    Grants,
    S3Access,
    TargetRole,
    TeamStorage,
    WorkloadIdentity,
    folder_prefix,
)
from .types import MAX_NAME, IamPrincipal, Port


# A registry host (with an optional port), then repository path segments, ending at a '/' boundary.
IMAGE_PREFIX = re.compile(r"\A[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?/([a-z0-9]+([._-][a-z0-9]+)*/)*\Z",
                          re.ASCII)


class Access(SpecModel):
    """Who may see the team's work and who may act on it."""

    viewers: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role/user ARNs that may view the team's work."
    )
    submitters: tuple[IamPrincipal, ...] = Field(
        default=(), description="IAM role/user ARNs that may submit, change and delete the team's jobs (and view)."
    )
    pod_exec: bool = Field(
        default=False,
        description="Submitters may `kubectl exec` into the team's pods (pods/exec). Default: false; exec runs "
        "arbitrary commands with the workload's credentials, which is acting, not viewing.",
    )
    write_secrets: bool = Field(
        default=False,
        description="Submitters may read, create, change and delete Secrets in the team namespace. Default: false "
        "(Secrets come from the platform; with this a submitter reads every Secret of the namespace and can mint "
        "a token for any of its service accounts).",
    )
    write_config_maps: bool = Field(
        default=False,
        description="Submitters may read, create, change and delete ConfigMaps in the team namespace. Default: "
        "false (job configuration travels in the job; viewers never read ConfigMaps).",
    )
    tools_policy: bool = Field(
        default=True,
        description="Give the team's viewers and submitters the IAM rights `aws eks update-kubeconfig` and the "
        "HyperPod CLI need (an IAM managed policy attached to those in the capacity account; for those of other "
        "accounts the document is written to iam/<team>.json in the synth output). Default: true; false when the "
        "roles get these rights another way.",
    )


class EgressRule(SpecModel):
    """An extra egress allow on top of the team's default-deny policy."""

    cidr: str = Field(description="Destination IPv4 CIDR.")
    ports: tuple[Port, ...] = Field(min_length=1, description="Destination ports (1..65535).")
    protocol: Literal["TCP", "UDP"] = Field(default="TCP", description="Protocol (default: TCP).")
    allow_node_ports: bool = Field(
        default=False,
        description="The rule may open the nodes' and the VPC's own services (SSH 22, DNS 53, Lustre 988 and "
        "1018-1023, NFS 2049, kubelet 10250/10255, kube-proxy 10256) toward the cluster's VPC (default: false, and "
        "such a rule is refused: HPG-E010).",
    )

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        check_ipv4_cidr(v, allow_any=True)
        if is_link_local(v):
            raise spec_error(
                "is link-local space (169.254.0.0/16: the instance metadata service and the node's agents), "
                "from where a pod reads the node role's credentials",
                "remove the rule: the Pod Identity agent is already allowed, and the metadata service never is",
            )
        return v


class Team(SpecModel):
    """A tenant of the cluster: its capacity, sharing policy, people and workloads."""

    name: str = Field(description="DNS-1123 label, at most 40 characters; namespace hyperpod-ns-<name>.")
    fair_share_weight: int = Field(
        default=100, ge=0, le=100, description="0..100; share of idle capacity (default: 100)."
    )
    quota: tuple[QuotaEntry, ...] = Field(
        default=(), max_length=15, description="Capacity the team owns, per instance type (at most 15 entries)."
    )
    sharing: Sharing = Field(
        default_factory=Sharing, description="Lending and borrowing (default: LendAndBorrow, 50%)."
    )
    active: bool = Field(
        default=True,
        description="false pauses the team (ComputeQuota ActivationState: Disabled; in kueue mode its ClusterQueue "
        "is stopped with stopPolicy: Hold): nothing new of the team is admitted, work already admitted keeps "
        "running until it ends; its namespace, access and objects stay (default: true).",
    )
    preempt_team_tasks: Literal["LowerPriority", "Never"] = Field(
        default="LowerPriority",
        description="default: LowerPriority, a team's own urgent work may preempt its own lower-priority work.",
    )
    access: Access = Field(default_factory=Access, description="Who may view and who may submit (default: nobody).")
    workload_identities: tuple[WorkloadIdentity, ...] = Field(
        default=(), description="Service accounts with AWS credentials (default: none)."
    )
    egress: tuple[EgressRule, ...] = Field(default=(), description="Extra egress allows (default: none).")
    allow_internet_egress: bool = Field(
        default=False,
        description="Allow egress rules that together reach the internet (0.0.0.0/0, or a /8 of public "
        "addresses or more). Default: false, and such rules are rejected: a team's pods should reach the networks they "
        "need, not everything.",
    )
    pod_security: Literal["baseline", "restricted"] = Field(
        default="baseline",
        description="Pod Security level enforced on the team's pods (both modes): baseline (default: no "
        "privileged, host namespaces, hostPath or host ports; IPC_LOCK and a memory-backed /dev/shm allowed for "
        "EFA and NCCL) or restricted (baseline plus non-root, no privilege escalation, all capabilities dropped "
        "but NET_BIND_SERVICE and IPC_LOCK, RuntimeDefault seccomp).",
    )
    contract: Optional[Contract] = Field(default=None, description="Owners and review date (recommended).")
    # Per-team workload limits (docs/workloads.md): the priority classes and image registries a team may use.
    priority_classes: Optional[tuple[str, ...]] = Field(
        default=None,
        description="Names of scheduler.priorityClasses the team may label its work with "
        "(kueue.x-k8s.io/priority-class) or name as a pod's priorityClassName; admission refuses any other, "
        "system-node-critical and system-cluster-critical among them. Default: every class of "
        "scheduler.priorityClasses. [] allows none.",
    )
    require_priority: bool = Field(
        default=False,
        description="Admission refuses the team's work (every workload kind, and a Pod no managed controller made) "
        "created without a kueue.x-k8s.io/priority-class label, or updated to remove it (work created unlabeled "
        "before this was set can still be updated). Default: false, unlabeled work runs at the lowest priority. "
        "Refused on a Slurm cluster.",
    )
    images: tuple[str, ...] = Field(
        default=(),
        description="Registry prefixes (ending in '/') that every image of the team's containers, init "
        "containers and ephemeral containers must start with, matched as written (e.g. "
        "123456789012.dkr.ecr.us-east-1.amazonaws.com/, public.ecr.aws/docker/library/). Default: none, any "
        "image.",
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        description="Tags on the team's resources (its quota, roles, alarms, topics), for cost allocation; they "
        "override the top-level tags of the same key (default: none).",
    )
    retiring: bool = Field(
        default=False,
        description="The connection is being handed over: the team's principals (viewers, submitters, the Unified "
        "Studio project role) lose cluster access and its workload identities are removed, while its namespace and "
        "quota remain. Default: false. Removing the team afterwards is the revocation.",
    )
    alarms: Optional[AlarmOverrides] = Field(
        default=None, description="This team's alarm thresholds, key by key (default: monitoring.alarms)."
    )
    storage: TeamStorage = Field(
        default_factory=TeamStorage, description="Storage created for the team (default: none)."
    )
    slurm: Optional[TeamSlurm] = Field(
        default=None,
        description="With cluster.orchestrator: slurm: the team's POSIX identity, {users, group, dataPath} "
        "(default: no users, group <team>, directory /fsx/<team>). Refused on an EKS cluster.",
    )

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: dict[str, str]) -> dict[str, str]:
        return check_tags(v, limit=MAX_TEAM_TAGS)

    @field_validator("images")
    @classmethod
    def _images(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for prefix in v:
            if not IMAGE_PREFIX.match(prefix):
                fixed = prefix.strip().lower().rstrip("/") + "/"
                example = fixed if IMAGE_PREFIX.match(fixed) else "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
                raise spec_error(
                    f"{prefix!r} is not a registry prefix: a registry host, optionally repository path "
                    "segments, ending in '/' (without the '/', 'registry.example.com' also matches "
                    "'registry.example.com.attacker.net/...')",
                    f"write it as e.g. '{example}'",
                )
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="team name", max_len=MAX_NAME)

    @property
    def namespace(self) -> str:
        return f"hyperpod-ns-{self.name}"


class SharedPool(SpecModel):
    """A pseudo-team that holds the capacity no team owns: capacity minus the sum of quotas."""

    name: str = Field(default="shared", description="Team name of the pool (default: shared).")
    strategy: Literal["Lend", "LendAndBorrow"] = Field(
        default="Lend", description="default: Lend, the pool lends everything and never borrows."
    )
    fair_share_weight: int = Field(default=0, ge=0, le=100, description="default: 0, the pool borrows last.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="shared pool name", max_len=MAX_NAME)
