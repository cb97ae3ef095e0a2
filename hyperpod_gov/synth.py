"""Build the CDK app (and, from the governance issue on, the Kubernetes manifests) from a spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from .spec.models import GovernanceSpec

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
    from stacks.capacity import CapacityStack  # stacks compose constructs; imported late to keep CLI start fast
    from stacks.governance import GovernanceStack, TeamsStack

    from .charts import render
    from .plan import build_plan, principal_access, shard_label, shard_of

    if app is None:
        app = cdk.App(outdir=outdir, analytics_reporting=False)
    for flag, value in FEATURE_FLAGS.items():
        if app.node.try_get_context(flag) is None:
            app.node.set_context(flag, value)
    plan = build_plan(spec)
    manifests = manifests or render(spec, plan)
    capacity = CapacityStack(app, stack_name(spec, "capacity"), spec=spec, base_dir=base_dir)
    governance = GovernanceStack(app, stack_name(spec, "governance"), spec=spec, plan=plan, capacity=capacity,
                                 manifests=manifests)
    shards = spec.deployment.team_stacks
    teams_by_shard: dict[int, list] = {}
    for team in spec.teams:
        teams_by_shard.setdefault(shard_of(team.name, shards), []).append(team)
    principals_by_shard: dict[int, list] = {}
    for access in principal_access(spec):
        principals_by_shard.setdefault(shard_of(access.principal_arn, shards), []).append(access)
    for index in sorted(set(teams_by_shard) | set(principals_by_shard)):
        TeamsStack(app, stack_name(spec, shard_label(index)), spec=spec, plan=plan, capacity=capacity,
                   governance=governance, teams=teams_by_shard.get(index, []),
                   principals=principals_by_shard.get(index, []), manifests=manifests)
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
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
          nag: bool = True) -> cdk.cx_api.CloudAssembly:
    """Write the cloud assembly to ``out_dir/cdk.out`` and the manifests to ``out_dir/k8s``.

    Raises ``PolicyValidationError`` on unacknowledged cdk-nag findings.
    """
    from .charts import render

    out_dir.mkdir(parents=True, exist_ok=True)
    assembly_dir = out_dir / "cdk.out"
    manifests = render(spec)
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
