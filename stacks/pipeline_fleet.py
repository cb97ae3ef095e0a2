"""The delivery pipeline of a fleet spec (``clusters:``): the members deploy in waves, one per region or per ring.

Source -> synth -> for each environment of the fleet in order (non-production first, as the spec lists them; or the
fleet itself, ``Deploy``): per wave, a person approves, then one CDK Pipelines wave deploys one stage
(``MemberStage``) per member of that wave (each member's stacks in their dependency order, as for one cluster, its
plan and objects as ``build_fleet`` and ``fleet_manifests`` build them, once per environment), each followed by its
evidence upload when the member keeps evidence (``monitoring.evidence``), then, before the next wave, a drift check
of each member of the wave (``hyperpod-gov drift`` of the member, written out by ``stacks/fleet_member.py``). The
waves are one per region, in the order the clusters first name it (``accounts.capacity.region``), or, when the
clusters set ``ring``, one per ring, lowest first, whatever the regions. The pipeline's account, region,
repository and branch are the first member's ``deployment.pipeline`` (the fleet's own keys).
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath
from typing import Any, Optional

import aws_cdk as cdk
from aws_cdk import Environment, Stack, Tags, aws_codepipeline as codepipeline
from aws_cdk import aws_iam as iam, pipelines
from cdk_nag import AwsSolutionsChecks

from constructs import Construct

from hyperpod_gov import (FleetSpec, HyperPodGovernance, add_credential_stack, build_fleet, fleet_manifests,
                          load_fleet)

from .pipeline import (DEPLOY_ROLE, EVIDENCE_OUTPUT, LOOKUP_ROLE, TEST_COMMAND, _role_arns_as_sub, acknowledge,
                       acknowledge_builds, acknowledge_evidence_builds, acknowledge_pipeline, pipeline_source,
                       synth_command, toolchain_versions, wildcard)

INSTALL = "python3 -m venv /tmp/hyperpod-gov && /tmp/hyperpod-gov/bin/pip install -q -c constraints.txt ."


class MemberStage(cdk.Stage):
    """One member of a fleet in a stage of its own: its plan and Kubernetes objects as ``build_fleet`` and
    ``fleet_manifests`` build them (the MultiKueue objects of dispatch included), so the pipeline deploys what
    ``synth FLEET`` writes."""

    def __init__(self, scope: Construct, id: str, *, plan: Any, manifests: Any, cluster: str, fleet: str,
                 fleet_plan: Any, position: int = 0, nag: bool = True) -> None:
        super().__init__(scope, id)
        self.cluster = cluster
        self.position = position  # the cluster's index in the spec's clusters
        self.fleet = fleet  # the fleet's name (without an environment's suffix): the pipeline's is <fleet>-pipeline
        self.governance = HyperPodGovernance(self, "Governance", plan=plan, manifests=manifests, nag=nag)
        # a dispatch member's MultiKueue credential stack (docs/fleet.md, "The worker credential")
        self.credential = add_credential_stack(self, fleet_plan, cluster, self.governance, nag=nag)


Wave = tuple[str, Optional[str], str, list[MemberStage]]  # (id, environment, region or "ring N", member stages)


def wave_groups(fleet: FleetSpec, regions: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    """``(id suffix, where, clusters)`` of each wave of one environment, in deploy order: per ring, lowest first,
    when the clusters set ``ring`` (the fleet document has checked that all do, HPG-F012 the manager's), else per
    region (``regions``: each cluster's), in the order the clusters first name it; clusters in the spec's order."""
    rings = {c["name"]: c.get("ring") for c in fleet.data.get("clusters") or ()}
    if any(r is not None for r in rings.values()):
        return [(f"ring{r}", f"ring {r}", [c for c in regions if rings[c] == r])
                for r in sorted({r for r in rings.values() if r is not None})]
    by_region: dict[str, list[str]] = {}
    for cluster, region in regions.items():
        by_region.setdefault(region, []).append(cluster)
    return [(region, region, clusters) for region, clusters in by_region.items()]


def fleet_waves(app: cdk.App, path: str, *, nag: bool = True) -> list[Wave]:
    """Each environment's waves in deploy order (every fleet rule checked; raises ``SpecError``), a stage per member,
    named ``<environment>-<cluster>`` (``Deploy-<cluster>`` for a fleet without environments); a wave is
    ``<environment>-<region>`` or ``<environment>-ring<N>`` (``wave_groups``)."""
    base = load_fleet(path)
    envs: list[Optional[str]] = [e["name"] for e in base.data.get("environments") or ()] or [None]
    waves: list[Wave] = []
    for env in envs:
        # Every member's plan and objects, and the fleet rules (HPG-F006..), as `hyperpod-gov synth` of the fleet
        # builds and checks them: once per environment, each member's stacks built only in its stage.
        fleet = base if env is None else load_fleet(path, environment=env)
        plan = build_fleet(fleet)
        manifests = fleet_manifests(plan)
        stages = {c: MemberStage(app, f"{env or 'Deploy'}-{c}", plan=p, manifests=manifests[c], cluster=c,
                                 fleet=base.name, fleet_plan=plan, position=i, nag=nag)
                  for i, (c, p) in enumerate(plan.plans.items())}
        regions = {c: p.region for c, p in plan.plans.items()}
        waves += [(f"{env or 'Deploy'}-{key}", env, where, [stages[c] for c in clusters])
                  for key, where, clusters in wave_groups(fleet, regions)]
    return waves


def first_member(waves: list[Wave]) -> MemberStage:
    """The stage of the spec's first cluster in the first environment: its ``deployment.pipeline`` places the
    pipeline, whichever wave (a ring) deploys it."""
    return min((s for w in waves if w[1] == waves[0][1] for s in w[3]), key=lambda s: s.position)


def _member_file(spec: str, cluster: str, suffix: str = "") -> str:
    """Where CodeBuild writes a member spec: beside the fleet spec (a member's relative paths are the fleet's)."""
    return shlex.quote(str(PurePosixPath(spec).parent / f".fleet-member-{cluster}{suffix}.yaml"))


def _write_member(fleet: str, env: Optional[str], cluster: str, out: str) -> str:
    return (f"/tmp/hyperpod-gov/bin/python -m stacks.fleet_member {fleet} {shlex.quote(env or '-')} "
            f"{shlex.quote(cluster)} {out}")


def member_drift_check(stage: MemberStage, cluster: str, env: Optional[str],
                       source: pipelines.IFileSetProducer, spec: str) -> pipelines.CodeBuildStep:
    """``drift_check`` of one member: its spec written out beside the fleet's, then ``hyperpod-gov drift`` of it
    from CodeBuild through the read-only lookup role of its capacity account (--no-kubernetes, as for one cluster)."""
    plan = stage.governance.plan
    role = LOOKUP_ROLE.format(account=plan.account, region=plan.region)
    member = _member_file(spec, cluster)
    return pipelines.CodeBuildStep(
        f"Check-{stage.stage_name}",
        input=source,
        commands=[
            INSTALL,
            _write_member(shlex.quote(spec), env, cluster, member),
            f"aws configure set profile.check.role_arn {role}",
            "aws configure set profile.check.credential_source EcsContainer",
            f"/tmp/hyperpod-gov/bin/hyperpod-gov drift {member} --profile check --region {plan.region} "
            "--no-kubernetes",
        ],
        role_policy_statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[role])],
    )


def member_evidence_upload(stage: MemberStage, cluster: str, env: Optional[str], source: pipelines.IFileSetProducer,
                           spec: str) -> Optional[pipelines.CodeBuildStep]:
    """``evidence_upload`` of one member that keeps evidence (``monitoring.evidence``), right after its stage: the
    member written out of the fleet spec, its base written out of the fleet spec of the previous commit (the member
    itself on the first commit, or when the cluster is new), `hyperpod-gov evidence` of the two, verified, uploaded
    under ``<environment>/<commit>/`` of the member's own bucket through its capacity account's deploy role, the one
    role that bucket lets put objects (as for one cluster)."""
    plan = stage.governance.plan
    if plan.alerting.evidence is None:
        return None
    writer = DEPLOY_ROLE.format(account=plan.account, region=plan.region)
    (output,) = [c for c in stage.node.find_all() if isinstance(c, cdk.CfnOutput) and c.node.id == EVIDENCE_OUTPUT]
    spec_q = shlex.quote(spec)
    member, base = _member_file(spec, cluster), _member_file(spec, cluster, "-base")
    fleet_base = shlex.quote(str(PurePosixPath(spec).parent / ".fleet-base.yaml"))
    return pipelines.CodeBuildStep(
        f"Evidence-{stage.stage_name}",
        input=source,
        env_from_cfn_outputs={"EVIDENCE_BUCKET": output},
        commands=[
            INSTALL,
            _write_member(spec_q, env, cluster, member),
            f"git show HEAD~1:{spec_q} > {fleet_base} 2>/dev/null || cp {spec_q} {fleet_base}",
            f"{_write_member(fleet_base, env, cluster, base)} || cp {member} {base}",
            f"aws configure set profile.evidence.role_arn {writer}",
            "aws configure set profile.evidence.credential_source EcsContainer",
            f"/tmp/hyperpod-gov/bin/hyperpod-gov evidence {member} --base {base} --out /tmp/evidence && "
            "/tmp/hyperpod-gov/bin/hyperpod-gov evidence --verify /tmp/evidence && aws s3 cp --recursive "
            f"/tmp/evidence \"s3://$EVIDENCE_BUCKET/{env or 'Deploy'}/$(git rev-parse HEAD)/\" --profile evidence "
            f"--region {plan.region}",
        ],
        role_policy_statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[writer])],
    )


class FleetPipelineStack(Stack):
    """Source -> synth -> per environment and wave (region or ring): approval, the wave's members (each followed by
    its evidence upload, if it keeps evidence), their drift checks before the next wave."""

    def __init__(self, scope: cdk.App, id: str, *, waves: list[Wave], synth_context: dict[str, str],
                 repository: str, connection_arn: str, toolchain: dict[str, str]) -> None:
        plan = first_member(waves).governance.plan
        p = plan.pipeline
        super().__init__(scope, id, env=Environment(account=p.account, region=p.region), stack_name=id,
                         description=f"hyperpod-gov fleet {id.removesuffix('-pipeline')}: delivery pipeline")
        for key, value in plan.tags:
            Tags.of(self).add(key, value)
        # a member that keeps evidence records: CodeBuild clones the repository (the commit and its parent)
        history = any(s.governance.plan.alerting.evidence is not None for w in waves for s in w[3])
        source = pipelines.CodePipelineSource.connection(repository, p.branch, connection_arn=connection_arn,
                                                         **({"code_build_clone_output": True} if history else {}))
        self.pipeline = pipelines.CodePipeline(
            self, "Pipeline", pipeline_name=id, cli_version=toolchain["cli"],
            cdk_assets_cli_version=toolchain["cdk_assets"], cross_account_keys=True, enable_key_rotation=True,
            pipeline_type=codepipeline.PipelineType.V2,
            synth=pipelines.ShellStep("Synth", input=source, commands=[TEST_COMMAND, synth_command(synth_context)],
                                      primary_output_directory="cdk.out"),
        )
        self.waves = waves
        for i, (wave_id, env, where, stages) in enumerate(waves):
            clusters = [s.cluster for s in stages]
            comment = (f"Deploy {', '.join(clusters)} ({where}"
                       + (f", environment {env}" if env else "") + ")?"
                       + (f" {waves[i - 1][0]} is deployed and its drift checks passed." if i else ""))
            post = [member_drift_check(s, c, env, source, synth_context["spec"]) for s, c in zip(stages, clusters)
                    ] if i < len(waves) - 1 else []
            wave = self.pipeline.add_wave(wave_id, pre=[pipelines.ManualApprovalStep(f"Approve-{wave_id}",
                                                                                     comment=comment)], post=post)
            for stage, cluster in zip(stages, clusters):
                upload = member_evidence_upload(stage, cluster, env, source, synth_context["spec"])
                wave.add_stage(stage, post=[upload] if upload is not None else [])
        self.pipeline.build_pipeline()
        _role_arns_as_sub(self, self.pipeline)
        acknowledge_pipeline(self, self.pipeline)
        acknowledge_check_builds(self, self.pipeline)
        acknowledge_evidence_builds(self, self.pipeline)
        acknowledge_replication(self, self.pipeline)


def acknowledge_check_builds(stack: Stack, pipeline: pipelines.CodePipeline) -> None:
    """Each member's drift check build writes its own log streams and reports, named per build."""
    acknowledge_builds(stack, pipeline, "Check", "drift check")


def acknowledge_replication(stack: Stack, pipeline: pipelines.CodePipeline) -> None:
    """A wave in another region than the pipeline's: CodePipeline's support stack there holds the artifact
    replication bucket (private, encrypted with the pipeline's cross-account key); the pipeline's role reads and
    writes its objects, whose keys are made per run."""
    for region, support in pipeline.pipeline.cross_region_support.items():
        bucket = support.replication_bucket
        name = stack.resolve(bucket.bucket_name)  # the generated physical name, as the pipeline stack sees it
        acknowledge(support.stack, [("AwsSolutions-S1", f"CodePipeline's artifact replication bucket in {region}: "
                                     "reached only by the pipeline's roles, every access recorded by CloudTrail.")])
        acknowledge(pipeline.pipeline.role, [(wildcard("Resource", f"arn:<AWS::Partition>:s3:::{name}/*"),
                                              f"The pipeline moves artifacts through its {region} replication "
                                              "bucket; keys are made per run.")])


def add_fleet_pipeline(app: cdk.App, path: str, *, spec_path: Optional[str] = None, nag: bool = True
                       ) -> FleetPipelineStack:
    """The fleet's pipeline stack (``<fleet name>-pipeline``) and its waves in ``app``; repository and connection
    from the first member's ``deployment.pipeline`` or the context, as ``add_pipeline``."""
    waves = fleet_waves(app, path, nag=nag)
    repository, connection, context = pipeline_source(app, first_member(waves).governance.plan.pipeline,
                                                      spec_path or path)
    name = first_member(waves).fleet
    stack = FleetPipelineStack(app, f"{name}-pipeline", waves=waves, synth_context=context, repository=repository,
                               connection_arn=connection, toolchain=toolchain_versions())
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return stack
