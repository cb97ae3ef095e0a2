"""The MultiKueue worker credential's infrastructure, as plain data (docs/fleet.md, "The worker credential").

Each worker's account gets a Secrets Manager secret the worker's minter writes and only the manager's copier role
may read; the manager's account gets that copier. Both run in a stack of their own per member
(``credential_stack``), after the member's governance stack has applied the Kubernetes Role each identity is bound
to (charts/multikueue_credential.py). Names are derived here, so each side can name the other before it exists: the
worker's resource policy names the copier role by ARN (``copier_role_arn``), the copier's policy the worker's
secret by its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from .model import Plan
from .multikueue import KUBECONFIG_KEY, WORKER_ACCOUNT, kubeconfig_secret
from .operators import KUEUE_NAMESPACE

STACK_SUFFIX = "multikueue"
SECRET_PREFIX = "hyperpod-gov/multikueue/"
MINTER_GROUP = "hyperpod-gov:multikueue-minter"  # the minter role's Kubernetes group on the worker (access entry)
COPIER_GROUP = "hyperpod-gov:multikueue-copier"  # the copier role's Kubernetes group on the manager
MINTER_ROLE = "hyperpod-gov-multikueue-minter"  # the namespaced Role and RoleBinding of kueue-system on the worker
COPIER_ROLE = "hyperpod-gov-multikueue-copier"  # the namespaced Role and RoleBinding of kueue-system on the manager
SCHEDULE_RATE_HOURS = 8  # live/kube_credential.py REFRESH_SECONDS
COPY_OFFSET_MINUTES = 30  # the copier's schedule starts this long after the minters'


def credential_stack(member: str) -> str:
    """The stack of a member's credential infrastructure: ``<member>-multikueue``. No other stack of a fleet ends
    in ``-multikueue`` (``plan.parts.StackLayout``: capacity, governance, monitoring, dashboards, access, teams,
    consumer and studio stacks), and member names differ, so no two stacks of a fleet share the name."""
    return f"{member}-{STACK_SUFFIX}"


def secret_name(member: str) -> str:
    """The worker's Secrets Manager secret: ``hyperpod-gov/multikueue/<worker member>/kubeconfig`` (the member's
    name, ``<fleet>-<cluster>``, so two fleets' workers in one account never share a secret). The manager reads it
    by partial ARN (another account's secret is named by ARN, and the six characters Secrets Manager appends are
    not known in advance); the ``/kubeconfig`` ending keeps the name from ending in a hyphen and six characters,
    which CreateSecret's documentation warns confuses a partial-ARN lookup (a member such as ``acme-worker``)."""
    return f"{SECRET_PREFIX}{member}/kubeconfig"


def copier_role_name(manager_member: str) -> str:
    """The copier's IAM role name in the manager's account, fixed so the workers' policies name it before it
    exists (the member name is at most 20 characters: the role name at most 38 of IAM's 64)."""
    return f"{manager_member}-mk-copier"


@dataclass(frozen=True)
class WorkerSecret:
    """One worker's secret as the manager reads it: where it is, and the Secret it becomes on the manager."""

    worker: str  # the worker's cluster name in the fleet (the MultiKueueCluster and its Secret are named after it)
    account: str
    region: str
    secret: str  # the secret's name (its ARN ends in -?????? that Secrets Manager adds)
    kubeconfig_secret: str  # <worker>-kubeconfig in kueue-system on the manager


@dataclass(frozen=True)
class CredentialPlan:
    """One member's credential infrastructure: a worker's (``role == "worker"``: the secret, its key, the minter)
    or the manager's (the copier of every worker's secret)."""

    role: str  # "worker" | "manager"
    member: str  # the member's spec name (<fleet>-<cluster>)
    cluster: str  # the member's cluster name in the fleet
    account: str
    region: str
    eks_cluster: str
    stack: str
    manager_account: str
    copier_role: str  # the manager's copier role name
    namespace: str = KUEUE_NAMESPACE
    service_account: str = WORKER_ACCOUNT  # worker: the service account the token is for
    secret: Optional[WorkerSecret] = None  # worker: its own secret
    workers: tuple[WorkerSecret, ...] = ()  # manager: every worker's secret, in dispatch order
    kubeconfig_key: str = KUBECONFIG_KEY

    @property
    def group(self) -> str:
        return MINTER_GROUP if self.role == "worker" else COPIER_GROUP

    @property
    def rbac_name(self) -> str:
        return MINTER_ROLE if self.role == "worker" else COPIER_ROLE


def credential_plans(members: Mapping[str, Plan], manager: str, workers: tuple[str, ...]) -> dict[str, CredentialPlan]:
    """The manager's and each worker's credential plan, by cluster name (manager first, then the workers in
    dispatch order). ``members``: each member's plan by cluster name."""
    home = members[manager]
    copier = copier_role_name(home.name)
    secrets = tuple(WorkerSecret(w, members[w].account, members[w].region, secret_name(members[w].name),
                                 kubeconfig_secret(w)) for w in workers)

    def plan(cluster: str, role: str, **kw: object) -> CredentialPlan:
        p = members[cluster]
        return CredentialPlan(role=role, member=p.name, cluster=cluster, account=p.account, region=p.region,
                              eks_cluster=p.eks_cluster_name, stack=credential_stack(p.name),
                              manager_account=home.account, copier_role=copier, **kw)  # type: ignore[arg-type]

    return {manager: plan(manager, "manager", workers=secrets),
            **{s.worker: plan(s.worker, "worker", secret=s) for s in secrets}}
