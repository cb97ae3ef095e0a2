"""Build the CDK app (and, from the governance issue on, the Kubernetes manifests) from a spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from .spec.models import ConsumerAccount, GovernanceSpec

if TYPE_CHECKING:
    from .charts import Manifests


# Feature flags the library is written for. They are set on the app here, not only in
# cdk.json, so that `hyperpod-gov synth`, the tests and `cdk synth` build the same templates.
FEATURE_FLAGS = {
    "@aws-cdk/core:checkSecretUsage": True,
    "@aws-cdk/aws-iam:minimizePolicies": True,
    "@aws-cdk/core:validateSnapshotRemovalPolicy": True,
    "@aws-cdk/aws-s3:createDefaultLoggingPolicy": True,
    "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True,
    "@aws-cdk/aws-iam:standardizedServicePrincipals": True,
    # CDK's built-in template check: an unacknowledged finding fails the synth.
    "@aws-cdk/core:validateAgainstDefaultRules": True,
    # Governance stacks import the cluster from the capacity stack; keep exports protected.
    "@aws-cdk/core:defaultCrossStackReferences": "strong",
}


def stack_name(spec: GovernanceSpec, role: str) -> str:
    return f"{spec.name}-{role}"


def add_capacity_stacks(scope: Construct, spec: GovernanceSpec, *, manifests: "Manifests",
                        base_dir: Optional[Path] = None) -> list[cdk.Stack]:
    """The capacity account's stacks: capacity, governance, and the team shards (in deploy order)."""
    from stacks.capacity import CapacityStack  # stacks compose constructs; imported late to keep CLI start fast
    from stacks.governance import GovernanceStack, TeamsStack

    from .plan import build_plan, identity_plans, principal_access, shard_label, shard_of

    def by_shard(items: list, key) -> dict[int, list]:
        groups: dict[int, list] = {}
        for item in items:
            groups.setdefault(shard_of(key(item), spec.deployment.team_stacks), []).append(item)
        return groups

    plan = build_plan(spec)
    capacity = CapacityStack(scope, stack_name(spec, "capacity"), spec=spec, base_dir=base_dir)
    governance = GovernanceStack(scope, stack_name(spec, "governance"), spec=spec, plan=plan, capacity=capacity,
                                 manifests=manifests)
    teams_by_shard = by_shard(list(spec.teams), lambda t: t.name)
    identities_by_shard = by_shard(list(identity_plans(spec, partition=cdk.Aws.PARTITION)), lambda i: i.team)
    principals_by_shard = by_shard(list(principal_access(spec)), lambda a: a.principal_arn)
    stacks: list[cdk.Stack] = [capacity, governance]
    for index in sorted(set(teams_by_shard) | set(principals_by_shard)):
        stacks.append(TeamsStack(scope, stack_name(spec, shard_label(index)), spec=spec, plan=plan,
                                 capacity=capacity, governance=governance, teams=teams_by_shard.get(index, []),
                                 identities=identities_by_shard.get(index, []),
                                 principals=principals_by_shard.get(index, []), manifests=manifests))
    return stacks


def consumer_stack_name(spec: GovernanceSpec, consumer: ConsumerAccount) -> str:
    return stack_name(spec, f"consumer-{consumer.name}")


def add_consumer_stack(scope: Construct, spec: GovernanceSpec, consumer: ConsumerAccount) -> Optional[cdk.Stack]:
    """The target roles the spec asks the library to create in ``consumer`` (none: no stack)."""
    from stacks.consumer import ConsumerAccountStack

    from .plan import identity_plans

    mine = [i for i in identity_plans(spec, partition=cdk.Aws.PARTITION)
            if i.consumer is not None and i.consumer.name == consumer.name]
    if not mine:
        return None
    return ConsumerAccountStack(scope, consumer_stack_name(spec, consumer), spec=spec, consumer=consumer,
                                identities=mine)


def apply_feature_flags(app: Construct) -> None:
    for flag, value in FEATURE_FLAGS.items():
        if app.node.try_get_context(flag) is None:
            app.node.set_context(flag, value)


def build_app(
    spec: GovernanceSpec,
    *,
    app: Optional[cdk.App] = None,
    outdir: Optional[str] = None,
    base_dir: Optional[Path] = None,
    nag: bool = True,
    manifests: Optional["Manifests"] = None,
) -> cdk.App:
    """Compose every stack of the spec into ``app`` (a new one unless given)."""
    from .charts import render

    if app is None:
        app = cdk.App(outdir=outdir, analytics_reporting=False)
    apply_feature_flags(app)
    add_capacity_stacks(app, spec, manifests=manifests or render(spec), base_dir=base_dir)
    for consumer in spec.accounts.consumers:
        add_consumer_stack(app, spec, consumer)
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


class PipelineConfigError(Exception):
    """The pipeline lacks its repository or connection; the message says where to set them."""


def build_pipeline_app(spec: GovernanceSpec, *, spec_path: str, app: Optional[cdk.App] = None,
                       outdir: Optional[str] = None, base_dir: Optional[Path] = None, nag: bool = True) -> cdk.App:
    """The pipeline app: one pipeline stack whose stages hold every stack of the spec."""
    from stacks.pipeline import PipelineStack

    from .charts import render

    if app is None:
        app = cdk.App(outdir=outdir, analytics_reporting=False)
    apply_feature_flags(app)
    p = spec.deployment.pipeline
    repository = (p.repository if p else None) or app.node.try_get_context("pipelineRepository")
    connection = (p.connection_arn if p else None) or app.node.try_get_context("pipelineConnectionArn")
    missing = [k for k, v in (("repository", repository), ("connectionArn", connection)) if not v]
    if missing:
        raise PipelineConfigError(
            "; ".join(f"deployment.pipeline.{k}: is not set; set it in the spec or pass "
                      f"-c pipeline{k[0].upper()}{k[1:]}=..." for k in missing)
        )
    pipeline = PipelineStack(app, stack_name(spec, "pipeline"), spec=spec, spec_path=spec_path,
                             repository=repository, branch=p.branch if p else "main", connection_arn=connection,
                             manifests=render(spec), base_dir=base_dir)
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
        for stage in pipeline.stages:  # each stage is its own assembly with its own validation
            cdk.Validations.of(stage).add_plugins(AwsSolutionsChecks(stage))
    return app


class PolicyValidationError(Exception):
    """cdk-nag (or another validation plugin) found unacknowledged violations."""

    def __init__(self, violations: list[str], report: Path):
        self.violations = violations
        self.report = report
        super().__init__(f"{len(violations)} policy violation(s); report: {report}")


def _violations(report: Path) -> list[str]:
    data = json.loads(report.read_text())
    out = []
    for plugin in data.get("pluginReports", []):
        for v in plugin.get("violations", []):
            for c in v.get("violatingConstructs", []):
                out.append(f"{c['constructPath']}: {v['ruleName']}: {v['description']}")
    return sorted(out)


def synth(spec: GovernanceSpec, out_dir: Path, *, base_dir: Optional[Path] = None,
          nag: bool = True, manifests: Optional["Manifests"] = None) -> cdk.cx_api.CloudAssembly:
    """Write the cloud assembly to ``out_dir/cdk.out`` and the manifests to ``out_dir/k8s``.

    Raises ``PolicyValidationError`` on unacknowledged cdk-nag findings.
    """
    from .charts import render

    out_dir.mkdir(parents=True, exist_ok=True)
    assembly_dir = out_dir / "cdk.out"
    manifests = manifests or render(spec)
    manifests.write(out_dir / "k8s")
    app = build_app(spec, outdir=str(assembly_dir), base_dir=base_dir, nag=nag, manifests=manifests)
    try:
        return app.synth()
    except RuntimeError as exc:
        report = assembly_dir / "validation-report.json"
        if "ValidationFailed" in str(exc) and report.exists():
            raise PolicyValidationError(_violations(report), report) from None
        raise


def assembly_warnings(assembly: cdk.cx_api.CloudAssembly) -> list[str]:
    """Warnings that constructs attached to the app (stable ids first), sorted."""
    out = []
    for stack in assembly.stacks:
        for message in stack.messages:
            if message.level == cdk.cx_api.SynthesisMessageLevel.WARNING:
                out.append(f"{message.id}: {message.entry.data}")
    return sorted(out)
