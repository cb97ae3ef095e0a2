"""The multi-account delivery pipeline (CDK Pipelines): test, synth, consumer accounts, approval, capacity."""

from __future__ import annotations

import shlex

from typing import Any, Sequence

from aws_cdk import Environment, Stack, Stage, aws_codepipeline as codepipeline, aws_iam as iam, pipelines
from constructs import Construct

from hyperpod_gov.charts import Manifests
from hyperpod_gov.constructs._nag import acknowledge, wildcard
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.contracts import StudioStack
from hyperpod_gov.plan.plan import ConsumerStack

from .base import SpecStack, capacity_env
from .consumer import ConsumerAccountStack
from .layout import add_capacity_stacks
from .studio import StudioConnectionsStack

TEST_COMMAND = "./dev.sh test"  # the README's test command


class CapacityStage(Stage):
    """The capacity account: capacity, governance and team stacks."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, manifests: Manifests, **kwargs: Any) -> None:
        super().__init__(scope, id, env=capacity_env(plan), **kwargs)
        self.stacks = add_capacity_stacks(self, plan, manifests)


class ConsumerStage(Stage):
    """One consumer account and region: the target roles workloads assume there."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, consumer: ConsumerStack, **kwargs: Any) -> None:
        super().__init__(scope, id, env=Environment(account=consumer.account, region=consumer.region), **kwargs)
        self.stack = ConsumerAccountStack(self, consumer.name, plan=plan, consumer=consumer, stack_name=consumer.name)


class StudioStage(Stage):
    """One Unified Studio account and region: the projects' connections to the cluster."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, studio: StudioStack, **kwargs: Any) -> None:
        super().__init__(scope, id, env=Environment(account=studio.account, region=studio.region), **kwargs)
        self.stack = StudioConnectionsStack(self, studio.name, plan=plan, studio=studio, stack_name=studio.name)


def synth_command(context: dict[str, str]) -> str:
    """The pipeline's own ``cdk synth``, with every context value (quoted for the shell CodeBuild runs)."""
    return "./dev.sh cdk synth " + " ".join(f"-c {k}={shlex.quote(v)}" for k, v in context.items())


class PipelineStack(SpecStack):
    """Source -> synth (the test suite, then `cdk synth`) -> consumer accounts -> approval -> capacity account."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, synth_context: dict[str, str], repository: str,
                 connection_arn: str, deployments: Sequence[tuple[str, Plan, Manifests]],
                 toolchain: dict[str, str], **kwargs: Any) -> None:
        p = plan.pipeline
        super().__init__(scope, id, plan=plan, env=Environment(account=p.account, region=p.region),
                         what="delivery pipeline", **kwargs)
        source = pipelines.CodePipelineSource.connection(repository, p.branch, connection_arn=connection_arn)
        self.pipeline = pipelines.CodePipeline(
            self,
            "Pipeline",
            pipeline_name=p.name,
            # The same CDK CLI and cdk-assets as this repository pins (package.json), never "latest".
            cli_version=toolchain["cli"],
            cdk_assets_cli_version=toolchain["cdk_assets"],
            cross_account_keys=True,  # the artifact key is shared with every target account
            enable_key_rotation=True,
            pipeline_type=codepipeline.PipelineType.V2,
            synth=pipelines.ShellStep(
                "Synth",
                input=source,
                commands=[TEST_COMMAND, synth_command(synth_context)],
                primary_output_directory="cdk.out",
            ),
        )
        self.stages: list[Stage] = []
        named = len(deployments) > 1 or any(env for env, _, _ in deployments)
        for i, (env, env_plan, env_manifests) in enumerate(deployments):
            prefix = f"{env}-" if named else ""
            # Before every environment but the first: the previous one was checked, and a person approves.
            pre = [pipelines.ManualApprovalStep(f"Approve-{env}", comment=(
                f"{deployments[i - 1][0]} is deployed and its drift check passed: deploy environment {env}?"))] \
                if i > 0 else []
            last = self._add_environment(env_plan, env_manifests, prefix, pre)
            if i < len(deployments) - 1:
                last.add_post(drift_check(env, env_plan, source, synth_context["spec"]))
        self.pipeline.build_pipeline()
        _role_arns_as_sub(self, self.pipeline)
        acknowledge_pipeline(self, self.pipeline)

    def _add_environment(self, plan: Plan, manifests: Manifests, prefix: str,
                         pre: list[pipelines.Step]) -> pipelines.StageDeployment:
        """One environment's waves in order (consumer accounts, the capacity account after an approval, Unified
        Studio); ``pre`` runs before its first. Returns the capacity stage's deployment (its post-deploy steps)."""
        if plan.stacks.consumers:
            wave = self.pipeline.add_wave(f"{prefix}ConsumerAccounts", pre=pre)
            pre = []
            for consumer in plan.stacks.consumers:
                stage = ConsumerStage(self, f"{prefix}Consumer-{consumer.account_name}", plan=plan, consumer=consumer)
                self.stages.append(stage)
                wave.add_stage(stage)
        capacity = CapacityStage(self, f"{prefix}Capacity", plan=plan, manifests=manifests)
        self.stages.append(capacity)
        deployment = self.pipeline.add_stage(
            capacity,
            pre=[*pre, pipelines.ManualApprovalStep(f"{prefix}ApproveCapacity", comment=(
                f"Deploy {plan.name} to the capacity account {plan.account}?"))],
        )
        if plan.stacks.studio:  # after the capacity stage: a connection names the cluster and needs its entry
            wave = self.pipeline.add_wave(f"{prefix}UnifiedStudio")
            for studio in plan.stacks.studio:
                stage = StudioStage(self, f"{prefix}Studio-{studio.account}-{studio.region}", plan=plan, studio=studio)
                self.stages.append(stage)
                wave.add_stage(stage)
        return deployment


# The read-only role `cdk bootstrap` creates in every account it bootstraps (qualifier hnb659fds, the default),
# with the ReadOnlyAccess managed policy and trust for the accounts given to --trust (the pipeline's).
LOOKUP_ROLE = "arn:aws:iam::{account}:role/cdk-hnb659fds-lookup-role-{account}-{region}"


def drift_check(env: str, plan: Plan, source: pipelines.IFileSetProducer, spec: str) -> pipelines.CodeBuildStep:
    """After a non-final environment: `hyperpod-gov drift` against it, from CodeBuild, read-only (the bootstrap
    lookup role of its capacity account). The private EKS API is out of CodeBuild's reach, so the AWS side is
    compared (--no-kubernetes); a drift stops the pipeline before the next environment's approval."""
    role = LOOKUP_ROLE.format(account=plan.account, region=plan.region)
    return pipelines.CodeBuildStep(
        f"Check-{env}",
        input=source,
        commands=[
            "python3 -m venv /tmp/hyperpod-gov && /tmp/hyperpod-gov/bin/pip install -q -c constraints.txt .",
            f"aws configure set profile.check.role_arn {role}",
            "aws configure set profile.check.credential_source EcsContainer",
            f"/tmp/hyperpod-gov/bin/hyperpod-gov drift {shlex.quote(spec)} --environment {shlex.quote(env)} "
            f"--profile check --region {plan.region} --no-kubernetes",
        ],
        role_policy_statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[role])],
    )


def _role_arns_as_sub(stack: Stack, pipeline: pipelines.CodePipeline) -> None:
    """Write the cross-account CloudFormation roles as Fn::Sub, the form cfn-lint (E3703) asks for.

    CDK Pipelines renders them as an empty-delimiter Fn::Join of the partition and a literal.
    """
    cfn = pipeline.pipeline.node.default_child
    stages = stack.resolve(cfn.stages)  # type: ignore[union-attr]
    for si, stage in enumerate(stages):
        for ai, action in enumerate(stage.get("actions", [])):
            arn = (action.get("configuration") or {}).get("RoleArn")
            if isinstance(arn, dict) and "Fn::Join" in arn and arn["Fn::Join"][0] == "":
                parts = arn["Fn::Join"][1]
                if all(isinstance(p, str) or p == {"Ref": "AWS::Partition"} for p in parts):
                    text = "".join(p if isinstance(p, str) else "${AWS::Partition}" for p in parts)
                    cfn.add_property_override(  # type: ignore[union-attr]
                        f"Stages.{si}.Actions.{ai}.Configuration.RoleArn", {"Fn::Sub": text})


def acknowledge_pipeline(stack: Stack, pipeline: pipelines.CodePipeline) -> None:
    """CDK Pipelines' own roles: each wildcard is scoped to the pipeline's bucket, key, builds or bootstrap roles."""
    region, account = stack.region, stack.account
    bucket = "The CDK Pipelines roles move artifacts through the pipeline's own artifacts bucket"
    key = "The CDK Pipelines roles encrypt artifacts with the pipeline's own (rotating) artifact key only"
    findings = [
        ("AwsSolutions-S1", "Pipeline artifacts bucket: private, KMS-encrypted, TLS-only, reached only by the "
         "pipeline's roles; every access is already recorded by CloudTrail through those roles."),
        (wildcard("Action", "s3:Abort*"), f"{bucket}: abort failed multipart uploads."),
        (wildcard("Action", "s3:DeleteObject*"), f"{bucket}: replace artifacts of earlier runs."),
        (wildcard("Action", "s3:GetBucket*"), f"{bucket}: read the bucket's location and encryption."),
        (wildcard("Action", "s3:GetObject*"), f"{bucket}: read artifacts and their versions."),
        (wildcard("Action", "s3:List*"), f"{bucket}: list artifacts of a run."),
        (wildcard("Resource", "<PipelineArtifactsBucketAEA9A052.Arn>/*"), f"{bucket}: keys are made per run."),
        (wildcard("Action", "kms:GenerateDataKey*"), key + "."),
        (wildcard("Action", "kms:ReEncrypt*"), key + "."),
        (wildcard("Resource", f"arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild/"
                  "<PipelineBuildSynthCdkBuildProject6BEFA8E6>:*"),
         "The synth build writes log streams (named per build) in its own log group."),
        (wildcard("Resource", f"arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/"
                  "<PipelineBuildSynthCdkBuildProject6BEFA8E6>-*"),
         "The synth build reports test results into its own report groups (named after the project)."),
        (wildcard("Resource", f"arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild/"
                  "<PipelineUpdatePipelineSelfMutationDAA41400>:*"),
         "The self-mutation build writes log streams (named per build) in its own log group."),
        (wildcard("Resource", f"arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/"
                  "<PipelineUpdatePipelineSelfMutationDAA41400>-*"),
         "The self-mutation build writes its reports into its own report groups."),
        (wildcard("Resource", f"arn:*:iam::{account}:role/*"),
         "Self-mutation assumes the CDK bootstrap deploy roles of the pipeline account (their names carry the "
         "bootstrap qualifier, which is only known at deploy time)."),
        (wildcard("Resource", "*"),
         "cloudformation:DescribeStacks, s3:ListBucket (self-mutation) and codebuild Start/Stop/BatchGetBuilds "
         "(asset publishing) take no narrower resource here; every write goes through the bootstrap roles."),
        (wildcard("Resource", f"arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild/*"),
         "Asset publishing builds are created by CDK Pipelines per asset; their log groups are named per project."),
        (wildcard("Resource", f"arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/*"),
         "Asset publishing builds are created by CDK Pipelines per asset; their report groups are named per project."),
    ]
    acknowledge(pipeline, findings)

