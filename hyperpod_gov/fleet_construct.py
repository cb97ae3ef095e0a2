"""The public construct of a fleet: every member of a fleet spec added to a CDK app (``HyperPodFleet``).

    app = cdk.App()
    fleet = HyperPodFleet(app, "Fleet", fleet=load_fleet("fleet.yaml"))

Each member is one ``HyperPodGovernance`` in the app, its stacks named ``<fleet>-<cluster>-...`` and deployed to
that cluster's account and region, as ``hyperpod-gov synth FLEET.yaml`` builds them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional

import aws_cdk as cdk
from constructs import Construct

from .charts import Manifests, governance_manifests
from .charts.fleet_objects import fleet_cluster_objects
from .construct import WARNING_PREFIX, HyperPodGovernance
from .plan.fleet import FleetPlan, build_fleet

if TYPE_CHECKING:
    from .plan.multikueue_credential import CredentialPlan
    from .spec.fleet import FleetSpec


def credential_plans(fleet: FleetPlan) -> dict[str, "CredentialPlan"]:
    """Each dispatch member's worker-credential plan by cluster name (none without dispatch)."""
    from .plan.multikueue_credential import credential_plans as plans

    dispatch = fleet.fleet.dispatch
    return {} if dispatch is None else plans(fleet.plans, dispatch.manager, tuple(dispatch.workers))


def add_credential_stack(scope: Construct, fleet: FleetPlan, cluster: str, member: HyperPodGovernance, *,
                         nag: bool = True) -> Optional[cdk.Stack]:
    """The dispatch member ``cluster``'s ``<member>-multikueue`` stack (stacks/multikueue.py) in ``scope``, after
    the member's governance stack (``member``: its construct in ``scope``), cdk-nag's checks on it with ``nag``;
    None for a member not in dispatch."""
    from .construct import OwnStacksNag
    from .stacks.capacity import CapacityStack
    from .stacks.multikueue import MultiKueueCredentialStack

    cp = credential_plans(fleet).get(cluster)
    if cp is None:
        return None
    plan = fleet.plans[cluster]
    capacity = member.stack(plan.stacks.capacity) if plan.stacks.capacity else None
    stack = MultiKueueCredentialStack(
        scope, cp.stack, plan=plan, cp=cp, capacity=capacity if isinstance(capacity, CapacityStack) else None,
        governance=member.stack(plan.stacks.governance or ""), stack_name=cp.stack)
    if nag:
        cdk.Validations.of(cdk.Stage.of(member)).add_plugins(OwnStacksNag([stack]))  # type: ignore[arg-type]
    return stack


def fleet_manifests(fleet: FleetPlan, extra: Optional[Mapping[str, list[dict[str, Any]]]] = None
                    ) -> dict[str, Manifests]:
    """Each member's Kubernetes objects (none for a Slurm member), with its extra cluster-wide objects (``extra``
    by cluster name; default: ``fleet_cluster_objects(fleet)``) after its own."""
    extra = fleet_cluster_objects(fleet) if extra is None else extra
    out: dict[str, Manifests] = {}
    for cluster, plan in fleet.plans.items():
        manifests = governance_manifests(plan)
        if extra.get(cluster):
            manifests = Manifests(cluster=[*manifests.cluster, *extra[cluster]], teams=manifests.teams)
        out[cluster] = manifests
    return out


class HyperPodFleet(Construct):
    """Every member of a fleet spec, each a ``HyperPodGovernance`` in ``scope`` (its stacks in its own account
    and region).

    :param scope: the ``cdk.App`` or ``cdk.Stage`` the stacks go into.
    :param id: this construct's id; member ``<cluster>``'s construct is ``<id>-<cluster>``.
    :param fleet: the fleet, from ``load_fleet(path)`` (``environment=``: one environment of it).
    :param nag: run cdk-nag's AwsSolutions checks on every member's stacks (default: true).
    :raises SpecError: a member breaks a rule or an invariant, or the fleet breaks a fleet rule: every problem of
        every member at once, paths in the fleet spec. Warnings no member acknowledges become CDK warnings.
    """

    def __init__(self, scope: Construct, id: str, *, fleet: Optional["FleetSpec"] = None, nag: bool = True,
                 plan: Optional[FleetPlan] = None, manifests: Optional[Mapping[str, Manifests]] = None,
                 **kwargs: Any) -> None:
        if not cdk.Stage.is_stage(scope):
            raise TypeError(f"HyperPodFleet({id!r}): its scope must be a cdk.App or a cdk.Stage (its stacks go "
                            f"there), not {type(scope).__name__} at {scope.node.path!r}")
        if (fleet is None) == (plan is None):
            raise TypeError(f"HyperPodFleet({id!r}) needs fleet= (load_fleet(path)) or plan=, one of them")
        super().__init__(scope, id)
        self.plan: FleetPlan = plan if plan is not None else build_fleet(fleet)  # type: ignore[arg-type]
        """Every member's plan and the fleet spec."""
        self.manifests = dict(manifests) if manifests is not None else fleet_manifests(self.plan)
        self.members: dict[str, HyperPodGovernance] = {
            cluster: HyperPodGovernance(scope, f"{id}-{cluster}", plan=member, manifests=self.manifests[cluster],
                                        nag=nag, **kwargs)
            for cluster, member in self.plan.plans.items()}
        """Each member's construct by cluster name, in the spec's order."""
        self.credential_stacks: dict[str, cdk.Stack] = {
            cluster: stack for cluster, member in self.members.items()
            if (stack := add_credential_stack(scope, self.plan, cluster, member, nag=nag)) is not None}
        """With ``fleet.dispatch``, each dispatch member's ``<member>-multikueue`` stack by cluster name: the
        worker credential's secret, key and minter, or the manager's copier (docs/fleet.md)."""
        if plan is None:  # given a plan, the caller has reported its warnings (as HyperPodGovernance does)
            for issue in self.plan.warnings:
                cdk.Annotations.of(self).add_warning_v2(f"{WARNING_PREFIX}:{issue.rule or 'warning'}", str(issue))

    def add_member_credential_stack(self, scope: Construct, cluster: str, member: HyperPodGovernance, *,
                                    nag: bool = True) -> Optional[cdk.Stack]:
        """Member ``cluster``'s MultiKueue credential stack in another ``scope`` (a pipeline's stage), after
        ``member``, that member's ``HyperPodGovernance`` there; None for a member not in dispatch."""
        return add_credential_stack(scope, self.plan, cluster, member, nag=nag)

    @property
    def stacks(self) -> list[cdk.Stack]:
        """Every member's stacks, member by member in the spec's order, each in deploy order; then the members'
        MultiKueue credential stacks."""
        return [*(s for member in self.members.values() for s in member.stacks), *self.credential_stacks.values()]
