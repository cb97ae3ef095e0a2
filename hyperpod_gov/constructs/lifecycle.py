"""Lifecycle scripts of the HyperPod instances: a ``sagemaker-`` bucket and the shipped scripts (for a Slurm
cluster also what synth generates: ``provisioning_parameters.json`` and the governance files under ``slurm/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional

from aws_cdk import Duration, RemovalPolicy, Stack, aws_s3 as s3, aws_s3_deployment as s3deploy
from constructs import Construct

from ..plan.slurm import DEFAULT_DATA_ROOT as DATA_ROOT, SlurmPlan
from ._nag import acknowledge, managed_policy, wildcard

LIFECYCLE_DIR = Path(__file__).resolve().parents[1] / "assets" / "lifecycle"
SLURM_LIFECYCLE_DIR = Path(__file__).resolve().parents[1] / "assets" / "lifecycle_slurm"
SLURM_FILES_PREFIX = "slurm/"  # the rendered governance files, beside on_create.sh (which runs slurm/apply.sh)
PROVISIONING_PARAMETERS = "provisioning_parameters.json"
LIFECYCLE_PREFIX = "lifecycle/"
ON_CREATE = "on_create.sh"
# Bytecode beside the shipped node_type.py (pip compiles every .py of the package at install) is not a script:
# left in, the asset's hash would follow the Python version that imported or installed the package.
BYTECODE = ["__pycache__", "*.pyc"]


class LifecycleScripts(Construct):
    """A ``sagemaker-`` bucket (encrypted, TLS-only, private, access-logged) holding the shipped scripts."""

    def __init__(self, scope: Construct, id: str, *, bucket_name: str, source: Path = LIFECYCLE_DIR) -> None:
        super().__init__(scope, id)
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=RemovalPolicy.RETAIN,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
        )
        acknowledge(self.access_logs, [("AwsSolutions-S1", "This is the access-log bucket of the lifecycle "
                                        "script bucket; logging it into itself would loop.")])
        self.bucket = s3.Bucket(
            self,
            "Resource",
            bucket_name=bucket_name,
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            versioned=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="lifecycle-bucket/",
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.deployment = s3deploy.BucketDeployment(
            self,
            "Upload",
            sources=[s3deploy.Source.asset(str(source), exclude=BYTECODE)],
            destination_bucket=self.bucket,
            destination_key_prefix=LIFECYCLE_PREFIX,
            prune=True,
            retain_on_delete=True,
        )
        self.source_s3_uri = f"s3://{self.bucket.bucket_name}/{LIFECYCLE_PREFIX}"


def slurm_parameters(slurm: SlurmPlan, file_system: Optional[Mapping[str, str]]) -> dict[str, Any]:
    """What the Slurm on_create.sh reads (``provisioning_parameters.json``, in the keys of HyperPod's base-config
    lifecycle scripts): which group is the controller and which the login group, each compute group's partition,
    whether accounting is external, and the shared file system (``DNSName`` and ``LustreMountName``, deploy-time
    values for a created one) with its mount point; sorted, so the same plan gives the same bytes."""
    controller = next(g.name for g in slurm.groups if g.node_type == "Controller")
    login = next((g.name for g in slurm.groups if g.node_type == "Login"), None)
    out: dict[str, Any] = {
        "version": "1.0.0",
        "workload_manager": "slurm",
        "controller_group": controller,
        **({"login_group": login} if login else {}),
        "worker_groups": [{"instance_group_name": g.name, "partition_name": g.partition}
                          for g in slurm.groups if g.node_type == "Compute"],
        "accounting_database": "external" if slurm.accounting_database is not None else "controller",
    }
    if file_system:
        out.update({"fsx_dns_name": file_system["DNSName"], "fsx_mountname": file_system["LustreMountName"],
                    "fsx_mount_dir": DATA_ROOT})
    return dict(sorted(out.items()))


def add_slurm_files(lifecycle: LifecycleScripts, *, parameters: Mapping[str, Any], files: Mapping[str, str]) -> None:
    """Upload ``provisioning_parameters.json`` and the rendered governance files (relative path -> text, written
    under ``slurm/``) with the shipped Slurm scripts, in one deployment (pruned together)."""
    lifecycle.deployment.add_source(s3deploy.Source.json_data(PROVISIONING_PARAMETERS, dict(parameters)))
    for path, text in sorted(files.items()):
        lifecycle.deployment.add_source(s3deploy.Source.data(SLURM_FILES_PREFIX + path, text))


def acknowledge_bucket_deployment(stack: Stack, lifecycle: LifecycleScripts) -> None:
    """The singleton handler of BucketDeployment lives at stack level, outside the LifecycleScripts scope."""
    bucket_id = stack.get_logical_id(lifecycle.bucket.node.default_child)  # type: ignore[arg-type]
    assets = f"arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-{stack.account}-{stack.region}/*"
    copy = "The BucketDeployment handler copies the lifecycle scripts from the CDK asset bucket into the " \
           "lifecycle bucket and prunes stale ones"
    for child in stack.node.children:
        if child.node.id.startswith("Custom::CDKBucketDeployment"):
            acknowledge(
                child,
                [
                    (managed_policy("service-role/AWSLambdaBasicExecutionRole"),
                     "Lets the BucketDeployment handler write its own logs; AWS-managed, CloudWatch Logs only."),
                    ("AwsSolutions-L1", "The BucketDeployment handler's runtime is pinned by aws-cdk-lib to "
                     "the one its bundled AWS CLI layer supports; it moves with aws-cdk-lib upgrades."),
                    (wildcard("Action", "s3:GetObject*"), f"{copy}: it reads objects and their versions."),
                    (wildcard("Action", "s3:GetBucket*"), f"{copy}: it reads the buckets' location."),
                    (wildcard("Action", "s3:List*"), f"{copy}: it lists both buckets to compare them."),
                    (wildcard("Action", "s3:DeleteObject*"), f"{copy}: pruning deletes stale scripts."),
                    (wildcard("Action", "s3:Abort*"), f"{copy}: it aborts failed multipart uploads."),
                    (wildcard("Resource", assets), f"{copy}: asset object keys are content hashes."),
                    (wildcard("Resource", f"<{bucket_id}.Arn>/*"), f"{copy}: it writes under lifecycle/."),
                ],
            )
