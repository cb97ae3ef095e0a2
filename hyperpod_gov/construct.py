"""The public constructs: the governance of one spec added to a CDK app (``HyperPodGovernance``) or delivered as one
stage of a CDK Pipeline (``HyperPodGovernanceStage``).

    app = cdk.App()
    network = MyNetworkStack(app, "Network")
    gov = HyperPodGovernance(app, "Gov", spec=load_spec("governance.yaml"), vpc=network.vpc)

Both compose every stack of the spec's plan under the names ``hyperpod-gov synth`` gives them, so an app, the CLI
and a pipeline deploy the same stacks. docs/library.md is the user's guide.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Optional, Sequence

import aws_cdk as cdk
import jsii
from aws_cdk import aws_ec2 as ec2
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from .charts import Manifests, governance_manifests
from .plan import Plan, build_plan
from .plan.invariants import INVARIANTS, plan_warnings
from .spec import GovernanceSpec, SpecError, SpecIssue, acknowledge, check_acknowledgements, check_spec
from .spec.environments import spec_of_environment
from .spec.rules import RULES
from .stacks.layout import add_capacity_stacks, add_consumer_stacks, order_deploys

# Warnings of the spec's rules and the plan's invariants that the spec does not acknowledge become CDK warnings on
# the construct under this id prefix (``cdk synth --strict`` fails on them, as ``hyperpod-gov synth --strict`` does).
WARNING_PREFIX = "hyperpod-gov"


class HyperPodGovernance(Construct):
    """Every stack of one governance spec, added to an App or a Stage the caller owns.

    The stacks are created in ``scope`` itself, beside the caller's own stacks, under the names ``hyperpod-gov
    synth`` gives them (``gov.stacks``): their artifact ids, template files and ``cdk deploy NAME`` stay those of
    the CLI (CDK would prefix a hash of this construct's path to the artifact of a stack nested in it). Nothing of
    ``scope`` changes but that: no context is set on it, the feature flags the library is written for are set on
    each of its own stacks (``hyperpod_gov.stacks.base.SpecStack``), and cdk-nag's AwsSolutions checks, with
    ``nag``, cover these stacks only.

    :param scope: the ``cdk.App`` or ``cdk.Stage`` the stacks go into.
    :param id: this construct's id in ``scope``.
    :param spec: the governance spec, from ``load_spec(path)`` or built in Python (``GovernanceSpec``).
    :param environment: a name of ``spec.environments``: that environment's spec (accounts and overrides merged
        on the base), as ``hyperpod-gov synth --environment NAME`` builds it. Default: the spec itself, which must
        then list no environments.
    :param vpc: the VPC the cluster goes into, from another stack of the app (an ``ec2.IVpc``), instead of one the
        capacity stack creates. The spec says so with ``cluster.vpc: {fromApp: true, cidr, createEndpoints}``; the
        cluster uses the VPC's private subnets, and endpoints and flow logs are created only where the spec asks.
        CDK makes the references across stacks. Default: as ``cluster.vpc`` says.
    :param nag: run cdk-nag's AwsSolutions checks on these stacks when the app synthesizes (default: true). A
        finding without an acknowledgement fails the synth, as it does for ``hyperpod-gov synth``.
    :param base_dir: the folder relative paths of the spec are read from (lifecycle scripts, chart folders).
        Default: the spec file's folder when the spec came from ``load_spec``, else the working directory.
    :raises SpecError: the spec (or the environment) breaks a rule or a plan invariant: every problem at once,
        each with its path, value and fix. Warnings the spec does not acknowledge become CDK warnings.
    """

    def __init__(self, scope: Construct, id: str, *, spec: Optional[GovernanceSpec] = None,
                 environment: Optional[str] = None, vpc: Optional[ec2.IVpc] = None, nag: bool = True,
                 base_dir: Optional[Path] = None, plan: Optional[Plan] = None,
                 manifests: Optional[Manifests] = None, **kwargs: Any) -> None:
        if not cdk.Stage.is_stage(scope):
            raise TypeError(f"HyperPodGovernance({id!r}): its scope must be a cdk.App or a cdk.Stage (its stacks "
                            f"go there), not {type(scope).__name__} at {scope.node.path!r}")
        super().__init__(scope, id)
        warnings: Sequence[SpecIssue] = ()
        if plan is None:
            if spec is None:
                raise TypeError(f"HyperPodGovernance({id!r}) needs spec= (load_spec(path) or a GovernanceSpec)")
            plan, warnings = plan_of(spec, environment=environment, base_dir=base_dir)
        elif spec is not None or environment is not None:
            raise TypeError(f"HyperPodGovernance({id!r}): give spec= (and environment=) or plan=, not both")
        check_vpc(plan, vpc)
        self.plan = plan
        """The plan every stack was built from (names, quotas, stack layout)."""
        self.manifests = manifests if manifests is not None else governance_manifests(plan)
        capacity = add_capacity_stacks(scope, self.plan, self.manifests, vpc=vpc, **kwargs)
        consumers = add_consumer_stacks(scope, self.plan)
        order_deploys(self.plan, capacity, consumers)
        self.stacks: list[cdk.Stack] = [*capacity, *consumers]
        """The stacks added to ``scope``, in deploy order (add dependencies, tags or aspects to them)."""
        for issue in warnings:
            cdk.Annotations.of(self).add_warning_v2(f"{WARNING_PREFIX}:{issue.rule or 'warning'}", str(issue))
        if nag:
            cdk.Validations.of(cdk.Stage.of(self)).add_plugins(OwnStacksNag(self.stacks))  # type: ignore[arg-type]

    def stack(self, name: str) -> cdk.Stack:
        """The stack of that name (``acme-ml-capacity``, ``acme-ml-teams-03``, ...)."""
        for stack in self.stacks:
            if stack.stack_name == name:
                return stack
        raise KeyError(f"{name!r} is not a stack of {self.node.path}; its stacks: "
                       f"{', '.join(s.stack_name for s in self.stacks)}")


class HyperPodGovernanceStage(cdk.Stage):
    """A ``cdk.Stage`` holding one ``HyperPodGovernance``: an environment of the spec for a CDK Pipeline
    (``pipeline.add_stage(HyperPodGovernanceStage(app, "Prod", spec=spec, environment="production"))``).

    Its stacks deploy to the accounts and regions the spec names (each stack carries its own); CDK Pipelines deploys
    them in the order their dependencies give (consumer accounts' roles and the access entries before the teams,
    the cluster before the Unified Studio connections). Keyword arguments: those of ``HyperPodGovernance`` (spec,
    environment, vpc, nag, base_dir); ``stage_props``: those of ``cdk.Stage`` (e.g. ``outdir``).
    """

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, environment: Optional[str] = None,
                 vpc: Optional[ec2.IVpc] = None, nag: bool = True, base_dir: Optional[Path] = None,
                 stage_props: Optional[dict[str, Any]] = None) -> None:
        super().__init__(scope, id, **(stage_props or {}))
        self.governance = HyperPodGovernance(self, "Governance", spec=spec, environment=environment, vpc=vpc,
                                             nag=nag, base_dir=base_dir)
        """The construct holding the plan and the stacks."""

    @property
    def stacks(self) -> list[cdk.Stack]:
        """The stage's stacks, in deploy order."""
        return self.governance.stacks


def plan_of(spec: GovernanceSpec, *, environment: Optional[str] = None, base_dir: Optional[Path] = None,
            today: Optional[dt.date] = None) -> tuple[Plan, tuple[SpecIssue, ...]]:
    """The plan of ``spec`` (of its ``environment``) with every rule and invariant checked, as ``hyperpod-gov
    synth`` checks a spec file, and the warnings the spec does not acknowledge. Raises ``SpecError``."""
    if environment is not None:
        spec = spec_of_environment(spec, environment)
    elif spec.environments:
        names = ", ".join(e.name for e in spec.environments)
        raise SpecError([SpecIssue("environments", f"lists {names}: this spec is deployed as one of them", names,
                                   f"pass environment= one of them, e.g. environment={spec.environments[0].name!r}")])
    folder = base_dir or spec_folder(spec) or Path.cwd()
    today = today or dt.date.today()
    # The rules run once (a spec built in Python has not been through load_spec): their errors, and
    # acknowledgements of no warning rule, stop here; their warnings go through the acknowledgements with the plan's.
    issues = check_spec(spec, today=today)
    failing = [*check_acknowledgements(spec.acknowledgements, RULES + INVARIANTS),
               *(i for i in issues if i.severity != "warning")]
    if failing:
        raise SpecError(failing)
    plan = build_plan(spec, base_dir=folder)  # the invariants' errors stop here
    review = acknowledge([*issues, *plan_warnings(plan)], spec.acknowledgements)
    return plan, tuple(review.warnings)


def spec_folder(spec: GovernanceSpec) -> Optional[Path]:
    """The folder of the file ``load_spec`` read ``spec`` from (None for a spec built in Python)."""
    return getattr(spec, "_source_dir", None)


def check_vpc(plan: Plan, vpc: Optional[ec2.IVpc]) -> None:
    """``vpc=`` exactly where the spec says ``cluster.vpc.fromApp`` and the plan has a capacity stack for it, with
    the spec's CIDR where the VPC's is known."""
    existing = plan.network.existing
    from_app = existing is not None and existing.vpc_id is None
    if vpc is None:
        if from_app:
            raise SpecError([SpecIssue("cluster.vpc.fromApp", "says the CDK app gives the VPC, but none was given",
                                       True, "pass vpc= (an ec2.IVpc) to HyperPodGovernance (docs/library.md); "
                                       "hyperpod-gov synth has no app to take one from: give cluster.vpc.vpcId "
                                       "with privateSubnetIds instead, or remove fromApp")])
        return
    if not from_app:
        raise SpecError([SpecIssue("cluster.vpc.fromApp", "is not set, but vpc= gives the cluster a VPC", None,
                                   "set cluster.vpc: {fromApp: true, cidr: <the VPC's CIDR>, createEndpoints: "
                                   "true|false} so that the spec (and explain, diff) say where the cluster runs")])
    if plan.stacks.capacity is None:
        raise SpecError([SpecIssue("cluster.existing", "governs a cluster that exists: its VPC is the cluster's",
                                   "vpc=", "leave vpc= out in governance-only mode")])
    literal = literal_cidr(vpc)
    if literal is not None and literal != plan.network.cidr:
        raise SpecError([SpecIssue("cluster.vpc.cidr", f"is not the CIDR of the VPC given as vpc= ({literal})",
                                   plan.network.cidr, f"set cidr: {literal} (the teams' NetworkPolicies and the "
                                   "endpoints allow HTTPS from it)")])


def literal_cidr(vpc: ec2.IVpc) -> Optional[str]:
    """The VPC's IPv4 CIDR where synth knows it: a VPC imported with a literal one, or an ``ec2.Vpc`` whose
    ``AWS::EC2::VPC`` states one (its ``vpc_cidr_block`` is a token then)."""
    cidr = vpc.vpc_cidr_block
    if not cdk.Token.is_unresolved(cidr):
        return cidr
    child = vpc.node.default_child if isinstance(vpc, ec2.Vpc) else None
    declared = getattr(child, "cidr_block", None)
    return declared if isinstance(declared, str) and not cdk.Token.is_unresolved(declared) else None


@jsii.implements(cdk.IPolicyValidationPlugin)
class OwnStacksNag:
    """cdk-nag's AwsSolutions pack over some stacks only.

    CDK accepts validation plugins on a Stage (or App) alone, and the pack walks the whole Stage it validates; this
    plugin, registered on the Stage that holds ``stacks``, has the pack walk each of them and reports what it
    finds under the pack's own name (one violation per rule, as the pack groups them)."""

    def __init__(self, stacks: Sequence[cdk.Stack]) -> None:
        self._stacks = list(stacks)
        self._pack = AwsSolutionsChecks()

    @property
    def name(self) -> str:
        return self._pack.name

    @property
    def version(self) -> Optional[str]:
        return self._pack.version

    @property
    def rule_ids(self) -> Optional[list[str]]:
        return self._pack.rule_ids

    def validate(self, context: cdk.IPolicyValidationContext) -> cdk.PolicyValidationPluginReport:
        found: dict[str, tuple[cdk.PolicyViolation, list[Any]]] = {}
        for stack in self._stacks:
            for violation in self._pack.validate_scope(stack).violations:
                if violation.rule_name in found:
                    found[violation.rule_name][1].extend(violation.violating_resources)
                else:
                    found[violation.rule_name] = (violation, list(violation.violating_resources))
        violations = [
            cdk.PolicyViolation(rule_name=name, description=v.description, severity=v.severity, fix=v.fix,
                                rule_metadata=v.rule_metadata, violating_resources=resources)
            for name, (v, resources) in found.items()
        ]
        return cdk.PolicyValidationPluginReport(success=not violations, violations=violations)
