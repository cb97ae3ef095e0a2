"""The reference app's multi-account delivery pipeline (CDK Pipelines), written on hyperpod-gov's public API.

Source -> synth (the README's test command, then `cdk synth`) -> for each environment of the spec, in order: a
person approves, then one ``HyperPodGovernanceStage`` deploys every stack of that environment (consumer accounts'
roles, the capacity account's stacks, the Unified Studio connections, in the order their dependencies give), then,
before the next environment, `hyperpod-gov drift` checks what was deployed. A team's own pipeline adds the same
stage with ``pipeline.add_stage(HyperPodGovernanceStage(...))`` (docs/library.md, docs/pipeline.md).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Optional, Sequence

import aws_cdk as cdk
from aws_cdk import Environment, Stack, Tags, aws_codebuild as codebuild, aws_codepipeline as codepipeline
from aws_cdk import aws_iam as iam, pipelines
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from hyperpod_gov import GovernanceSpec, HyperPodGovernanceStage, SpecError, SpecIssue

TEST_COMMAND = "./dev.sh test"  # the README's test command
NAG_PACK = "AwsSolutions"  # cdk-nag's plugin: an acknowledgement's id is "AwsSolutions::<rule>"
ROOT = Path(__file__).resolve().parents[1]


def synth_command(context: dict[str, str]) -> str:
    """The pipeline's own ``cdk synth``, with every context value (quoted for the shell CodeBuild runs)."""
    return "./dev.sh cdk synth " + " ".join(f"-c {k}={shlex.quote(v)}" for k, v in context.items())


def add_pipeline(app: cdk.App, spec: GovernanceSpec, *, spec_path: str, nag: bool = True) -> "PipelineStack":
    """The pipeline stack and one ``HyperPodGovernanceStage`` per environment of ``spec`` (or one for the spec
    itself when it lists none), in ``app``. The pipeline's account, region, repository and branch are the first
    environment's ``deployment.pipeline``; what the spec leaves unset comes from the context (``-c
    pipelineRepository=...``, ``-c pipelineConnectionArn=...``)."""
    names: list[Optional[str]] = [e.name for e in spec.environments] or [None]
    stages = [HyperPodGovernanceStage(app, env or "Deploy", spec=spec, environment=env, nag=nag) for env in names]
    plan = stages[0].governance.plan
    repository, connection, context = pipeline_source(app, plan.pipeline, spec_path)
    pipeline = PipelineStack(app, plan.stacks.pipeline, stages=stages, synth_context=context, repository=repository,
                             connection_arn=connection, toolchain=toolchain_versions())
    if nag:
        cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return pipeline


def pipeline_source(app: cdk.App, p: Any, spec_path: str) -> tuple[str, str, dict[str, str]]:
    """The pipeline's repository and connection (``p``: the plan's ``deployment.pipeline``; what it leaves unset,
    from the context; raises ``SpecError`` when either is in neither), and the context of the pipeline's own synth:
    what CodeBuild runs to rebuild this app, the spec as a path of the repository it checks out, and every context
    value this synth took from the command line rather than the spec."""
    repository = p.repository or app.node.try_get_context("pipelineRepository")
    connection = p.connection_arn or app.node.try_get_context("pipelineConnectionArn")
    missing = [(k, c) for k, v, c in (("repository", repository, "pipelineRepository"),
                                      ("connectionArn", connection, "pipelineConnectionArn")) if not v]
    if missing:
        raise SpecError([SpecIssue(f"deployment.pipeline.{k}", "is not set", None,
                                   f"set it in the spec or pass -c {c}=...") for k, c in missing])
    context = {"spec": repository_path(spec_path), "pipeline": "true"}
    if not p.repository:
        context["pipelineRepository"] = repository
    if not p.connection_arn:
        context["pipelineConnectionArn"] = connection
    return repository, connection, context


def build_pipeline_app(spec: GovernanceSpec, *, spec_path: str, app: Optional[cdk.App] = None,
                       outdir: Optional[str] = None, nag: bool = True) -> cdk.App:
    """``add_pipeline`` in ``app`` (a new one unless given): what ``app.py`` builds with ``-c pipeline=true``."""
    if app is None:
        app = cdk.App(outdir=outdir, analytics_reporting=False)
    add_pipeline(app, spec, spec_path=spec_path, nag=nag)
    return app


class PipelineStack(Stack):
    """Source -> synth -> per environment: approval, the environment's stage, a drift check before the next."""

    def __init__(self, scope: Construct, id: str, *, stages: Sequence[HyperPodGovernanceStage],
                 synth_context: dict[str, str], repository: str, connection_arn: str,
                 toolchain: dict[str, str]) -> None:
        plan = stages[0].governance.plan
        p = plan.pipeline
        super().__init__(scope, id, env=Environment(account=p.account, region=p.region), stack_name=id,
                         description=f"hyperpod-gov {plan.name}: delivery pipeline")
        Tags.of(self).add("hyperpod-gov:spec", plan.name)
        for key, value in plan.tags:
            Tags.of(self).add(key, value)
        # a spec that keeps evidence records: CodeBuild clones the repository, so the record names the commit and
        # compares the spec with its previous commit's
        history = any(s.governance.plan.alerting.evidence is not None for s in stages)
        source = pipelines.CodePipelineSource.connection(repository, p.branch, connection_arn=connection_arn,
                                                         **({"code_build_clone_output": True} if history else {}))
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
        self.stages = list(stages)
        for i, stage in enumerate(stages):
            env_plan = stage.governance.plan
            name = stage.stage_name
            # Before every environment, the first too: nothing of it (not even a consumer account's role) deploys
            # before a person approves; after each but the last, its drift check.
            comment = (f"Deploy {env_plan.name} (consumer accounts, capacity account {env_plan.account}, Unified "
                       "Studio)?") if i == 0 else (f"{stages[i - 1].stage_name} is deployed and its drift check "
                                                   f"passed: deploy {env_plan.name}?")
            post = [drift_check(name, env_plan, source, synth_context["spec"])] if i < len(stages) - 1 else []
            upload = evidence_upload(stage, source, synth_context["spec"])
            post += [upload] if upload is not None else []
            self.pipeline.add_stage(stage, pre=[pipelines.ManualApprovalStep(f"Approve-{name}", comment=comment)],
                                    post=post)
        self.pipeline.build_pipeline()
        _role_arns_as_sub(self, self.pipeline)
        acknowledge_pipeline(self, self.pipeline)
        acknowledge_evidence_builds(self, self.pipeline)


# The read-only role `cdk bootstrap` creates in every account it bootstraps (qualifier hnb659fds, the default),
# with the ReadOnlyAccess managed policy and trust for the accounts given to --trust (the pipeline's).
LOOKUP_ROLE = "arn:aws:iam::{account}:role/cdk-hnb659fds-lookup-role-{account}-{region}"
# The bootstrap deploy role of the capacity account: the one principal the evidence bucket lets put objects
# (the bucket's policy names the same role), and the stack output naming the bucket (docs/evidence.md).
DEPLOY_ROLE = "arn:aws:iam::{account}:role/cdk-hnb659fds-deploy-role-{account}-{region}"
EVIDENCE_OUTPUT = "EvidenceBucketName"


def drift_check(env: str, plan: Any, source: pipelines.IFileSetProducer, spec: str) -> pipelines.CodeBuildStep:
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


def evidence_upload(stage: HyperPodGovernanceStage, source: pipelines.IFileSetProducer, spec: str
                    ) -> Optional[pipelines.CodeBuildStep]:
    """After an environment whose spec keeps evidence (``monitoring.evidence``): `hyperpod-gov evidence` of what was
    deployed against the spec of the previous commit (itself on the first one), uploaded to the evidence bucket
    under ``<environment>/<commit>/`` through the capacity account's deploy role, the one role that may put objects
    there (the bucket's policy; nothing in it can be deleted before its retention ends)."""
    plan = stage.governance.plan
    if plan.alerting.evidence is None:
        return None
    writer = DEPLOY_ROLE.format(account=plan.account, region=plan.region)
    (output,) = [c for c in stage.node.find_all() if isinstance(c, cdk.CfnOutput) and c.node.id == EVIDENCE_OUTPUT]
    env = stage.stage_name
    spec_q = shlex.quote(spec)
    # add_pipeline names each stage after its environment, or "Deploy" for a spec without environments (an
    # environment's name is a DNS label: never "Deploy")
    environment = "" if env == "Deploy" else f" --environment {shlex.quote(env)}"
    return pipelines.CodeBuildStep(
        f"Evidence-{env}",
        input=source,
        env_from_cfn_outputs={"EVIDENCE_BUCKET": output},
        commands=[
            "python3 -m venv /tmp/hyperpod-gov && /tmp/hyperpod-gov/bin/pip install -q -c constraints.txt .",
            f"git show HEAD~1:{spec_q} > /tmp/base.yaml 2>/dev/null || cp {spec_q} /tmp/base.yaml",
            f"aws configure set profile.evidence.role_arn {writer}",
            "aws configure set profile.evidence.credential_source EcsContainer",
            f"/tmp/hyperpod-gov/bin/hyperpod-gov evidence {spec_q} --base /tmp/base.yaml{environment} "
            f"--out /tmp/evidence && /tmp/hyperpod-gov/bin/hyperpod-gov evidence --verify /tmp/evidence && "
            f"aws s3 cp --recursive /tmp/evidence \"s3://$EVIDENCE_BUCKET/{env}/$(git rev-parse HEAD)/\" "
            f"--profile evidence --region {plan.region}",
        ],
        role_policy_statements=[iam.PolicyStatement(actions=["sts:AssumeRole"], resources=[writer])],
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


def acknowledge_evidence_builds(stack: Stack, pipeline: pipelines.CodePipeline) -> None:
    """Each evidence upload build (``evidence_upload``) writes its own log streams and reports, named per build."""
    acknowledge_builds(stack, pipeline, "Evidence", "evidence")


def acknowledge_builds(stack: Stack, pipeline: pipelines.CodePipeline, step: str, what: str) -> None:
    """Each build of the pipeline's ``<step>-...`` steps (``what``: the build, as the reasons name it) writes log
    streams in its own log group and reports into its own report groups, named per build."""
    region, account = stack.region, stack.account
    for project in pipeline.node.find_all():
        if isinstance(project, codebuild.CfnProject) and f"/{step}-" in project.node.path:
            lid = stack.get_logical_id(project)
            acknowledge(project.node.scope, [  # type: ignore[arg-type]
                (wildcard("Resource", f"arn:<AWS::Partition>:logs:{region}:{account}:log-group:/aws/codebuild/"
                          f"<{lid}>:*"),
                 f"The {what} build writes log streams (named per build) in its own log group."),
                (wildcard("Resource", f"arn:<AWS::Partition>:codebuild:{region}:{account}:report-group/<{lid}>-*"),
                 f"The {what} build reports into its own report groups (named after the project)."),
            ])


def toolchain_versions() -> dict[str, str]:
    """The CDK CLI and cdk-assets versions this repository pins (package.json), for the pipeline's own steps."""
    deps = json.loads((ROOT / "package.json").read_text())["devDependencies"]
    return {"cli": deps["aws-cdk"], "cdk_assets": deps["cdk-assets"]}


def repository_path(spec_path: str, root: Optional[Path] = None) -> str:
    """``spec_path`` relative to the repository root (``root``, default the directory ``cdk synth`` runs in, where
    cdk.json is), in POSIX form: the path the pipeline's CodeBuild checkout has the spec at."""
    root = (root or Path.cwd()).resolve()
    path = Path(spec_path)
    resolved = (path if path.is_absolute() else root / path).resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        raise SpecError([SpecIssue(
            "(pipeline)", f"the spec is outside the repository the pipeline builds ({root})", spec_path,
            "keep the spec in the repository (e.g. specs/governance.yaml) and pass -c spec= with that path")]) from None


def wildcard(kind: str, value: str) -> str:
    """The AwsSolutions-IAM5 finding for a wildcard ``Action`` or ``Resource``."""
    return f"{NAG_PACK}-IAM5[{kind}::{value}]"


def acknowledge(construct: Construct, findings: Sequence[tuple[str, str]]) -> None:
    """Acknowledge ``(finding, reason)`` pairs on ``construct`` and the resources below it (CDK's validations)."""
    cdk.Validations.of(construct).acknowledge(
        *(cdk.Acknowledgment(id=f"{NAG_PACK}::{rule}", reason=reason) for rule, reason in findings))
