"""The delivery pipeline of a fleet spec (``clusters:``): the members deploy in waves, one wave per region.

Source -> synth -> for each environment of the fleet in order (non-production first, as the spec lists them; or the
fleet itself, ``Deploy``): per region, in the order the clusters first name it (``accounts.capacity.region``), a
person approves, then one CDK Pipelines wave deploys one stage (``MemberStage``) per member of that region (each
member's stacks in their dependency order, as for one cluster, its plan and objects as ``HyperPodFleet`` builds them), then, before the next wave, a drift check of each
member of the wave (``hyperpod-gov drift`` of the member, written out by ``stacks/fleet_member.py``). The pipeline's
account, region, repository and branch are the first member's ``deployment.pipeline`` (the fleet's own keys).
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath
from typing import Optional

import aws_cdk as cdk
from aws_cdk import Environment, Stack, Tags, aws_codebuild as codebuild, aws_codepipeline as codepipeline
from aws_cdk import aws_iam as iam, pipelines
from cdk_nag import AwsSolutionsChecks

from constructs import Construct

from hyperpod_gov import HyperPodFleet, HyperPodGovernance, SpecError, SpecIssue, load_fleet

from .pipeline import (LOOKUP_ROLE, TEST_COMMAND, _role_arns_as_sub, acknowledge, acknowledge_pipeline,
                       repository_path, synth_command, toolchain_versions, wildcard)



class MemberStage(cdk.Stage):
    """One member of a fleet in a stage of its own: its plan and Kubernetes objects as ``HyperPodFleet`` builds
    them (the MultiKueue objects of dispatch included), so the pipeline deploys what ``synth FLEET`` writes."""

    def __init__(self, scope: Construct, id: str, *, fleet: HyperPodFleet, cluster: str, nag: bool = True) -> None:
        super().__init__(scope, id)
        self.governance = HyperPodGovernance(self, "Governance", plan=fleet.plan.plans[cluster],
                                             manifests=fleet.manifests[cluster], nag=nag)
        # a dispatch member's MultiKueue credential stack (docs/fleet.md, "The worker credential")
        self.credential = fleet.add_member_credential_stack(self, cluster, self.governance, nag=nag)


Wave = tuple[str, Optional[str], str, list[MemberStage]]  # (id, environment, region, member stages)


def fleet_waves(app: cdk.App, path: str, *, nag: bool = True) -> list[Wave]:
    """Each environment's waves in deploy order (every fleet rule checked; raises ``SpecError``): per region (the
    clusters' order of first naming it), a stage per member of that region, named ``<environment>-<cluster>``
    (``Deploy-<cluster>`` for a fleet without environments)."""
    envs: list[Optional[str]] = [e["name"] for e in load_fleet(path).data.get("environments") or ()] or [None]
    waves: list[Wave] = []
    for env in envs:
        # Every member's plan and objects, and the fleet rules (HPG-F006..), as `hyperpod-gov synth` of the fleet
        # builds and checks them; in an app of its own, never synthesized (only the public API reaches them).
        fleet = HyperPodFleet(cdk.App(), "Fleet", fleet=load_fleet(path, environment=env), nag=False)
        by_region: dict[str, list[MemberStage]] = {}
        for cluster, plan in fleet.plan.plans.items():
            stage = MemberStage(app, f"{env or 'Deploy'}-{cluster}", fleet=fleet, cluster=cluster, nag=nag)
            by_region.setdefault(plan.region, []).append(stage)
        waves += [(f"{env or 'Deploy'}-{region}", env, region, stages) for region, stages in by_region.items()]
    return waves


def member_drift_check(stage: MemberStage, cluster: str, env: Optional[str],
                       source: pipelines.IFileSetProducer, spec: str) -> pipelines.CodeBuildStep:
    """``drift_check`` of one member: its spec written out beside the fleet's, then ``hyperpod-gov drift`` of it
    from CodeBuild through the read-only lookup role of its capacity account (--no-kubernetes, as for one cluster)."""
    plan = stage.governance.plan
    role = LOOKUP_ROLE.format(account=plan.account, region=plan.region)
    member = shlex.quote(str(PurePosixPath(spec).parent / f".fleet-member-{cluster}.yaml"))
    return pipelines.CodeBuildStep(
        f"Check-{stage.stage_name}",
        input=source,
        commands=[
            "python3 -m venv /tmp/hyperpod-gov && /tmp/hyperpod-gov/bin/pip install -q -c constraints.txt .",
            f"/tmp/hyperpod-gov/bin/python -m stacks.fleet_member {shlex.quote(spec)} {shlex.quote(env or '-')} "
            f"{shlex.quote(cluster)} {member}",
            f"aws configure set profile.check.role_arn {role}",
            "aws configure set profile.check.credential_source EcsContainer",
            f"/tmp/hyperpod-gov/bin/hyperpod-gov drift {member} --profile check --region {plan.region} "
            "--no-kubernetes",
        ],
        role_policy_statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[role])],
    )


class FleetPipelineStack(Stack):
    """Source -> synth -> per environment and region: approval, the wave of that region's members, their drift
    checks before the next wave."""

    def __init__(self, scope: cdk.App, id: str, *, waves: list[Wave], synth_context: dict[str, str],
                 repository: str, connection_arn: str, toolchain: dict[str, str]) -> None:
        plan = waves[0][3][0].governance.plan
        p = plan.pipeline
        super().__init__(scope, id, env=Environment(account=p.account, region=p.region), stack_name=id,
                         description=f"hyperpod-gov fleet {id.removesuffix('-pipeline')}: delivery pipeline")
        for key, value in plan.tags:
            Tags.of(self).add(key, value)
        source = pipelines.CodePipelineSource.connection(repository, p.branch, connection_arn=connection_arn)
        self.pipeline = pipelines.CodePipeline(
            self, "Pipeline", pipeline_name=id, cli_version=toolchain["cli"],
            cdk_assets_cli_version=toolchain["cdk_assets"], cross_account_keys=True, enable_key_rotation=True,
            pipeline_type=codepipeline.PipelineType.V2,
            synth=pipelines.ShellStep("Synth", input=source, commands=[TEST_COMMAND, synth_command(synth_context)],
                                      primary_output_directory="cdk.out"),
        )
        self.waves = waves
        for i, (wave_id, env, region, stages) in enumerate(waves):
            clusters = [s.stage_name.removeprefix(f"{env or 'Deploy'}-") for s in stages]
            comment = (f"Deploy {', '.join(clusters)} ({region}"
                       + (f", environment {env}" if env else "") + ")?"
                       + (f" {waves[i - 1][0]} is deployed and its drift checks passed." if i else ""))
            post = [member_drift_check(s, c, env, source, synth_context["spec"]) for s, c in zip(stages, clusters)
                    ] if i < len(waves) - 1 else []
            wave = self.pipeline.add_wave(wave_id, pre=[pipelines.ManualApprovalStep(f"Approve-{wave_id}",
                                                                                     comment=comment)], post=post)
            for stage in stages:
                wave.add_stage(stage)
        self.pipeline.build_pipeline()
        _role_arns_as_sub(self, self.pipeline)
        acknowledge_pipeline(self, self.pipeline)
        acknowledge_check_builds(self, self.pipeline)
        acknowledge_replication(self, self.pipeline)


def acknowledge_check_builds(stack: Stack, pipeline: pipelines.CodePipeline) -> None:
    """Each member's drift check build writes its own log streams and reports, named per build."""
    region, account = stack.region, stack.account
    for project in pipeline.node.find_all():
        if isinstance(project, codebuild.CfnProject) and "/Check-" in project.node.path:
            lid = stack.get_logical_id(project)
            acknowledge(project.node.scope, [  # type: ignore[arg-type]
                (wildcard("Resource", f"arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild/"
                          f"<{lid}>:*"), "The drift check build writes log streams (named per build) in its own "
                 "log group."),
                (wildcard("Resource", f"arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/<{lid}>-*"),
                 "The drift check build reports into its own report groups (named after the project)."),
            ])


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
    p = waves[0][3][0].governance.plan.pipeline
    repository = p.repository or app.node.try_get_context("pipelineRepository")
    connection = p.connection_arn or app.node.try_get_context("pipelineConnectionArn")
    missing = [(k, c) for k, v, c in (("repository", repository, "pipelineRepository"),
                                      ("connectionArn", connection, "pipelineConnectionArn")) if not v]
    if missing:
        raise SpecError([SpecIssue(f"deployment.pipeline.{k}", "is not set", None,
                                   f"set it in the spec or pass -c {c}=...") for k, c in missing])
    context = {"spec": repository_path(spec_path or path), "pipeline": "true"}
    if not p.repository:
        context["pipelineRepository"] = repository
    if not p.connection_arn:
        context["pipelineConnectionArn"] = connection
    name = load_fleet(path).name
    stack = FleetPipelineStack(app, f"{name}-pipeline", waves=waves, synth_context=context, repository=repository,
                               connection_arn=connection, toolchain=toolchain_versions())
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return stack
