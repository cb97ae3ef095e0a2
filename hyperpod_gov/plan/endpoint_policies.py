"""The VPC endpoints' policies: only the spec's accounts (or its organization) through the cluster's endpoints.

Without a policy an endpoint admits any principal to any resource, so a team member with another account's keys
could write the team's data to that account's bucket, repository or log group from inside the VPC, with no
internet egress at all. Every endpoint here admits:

- principals of the spec's accounts (capacity, consumers, trusted; or of its organization) acting on resources of
  those accounts (``aws:PrincipalAccount``/``aws:ResourceAccount``, ``aws:PrincipalOrgID``/``aws:ResourceOrgID``);
- on the interface endpoints but S3, the same principals in requests that carry no resource account
  (``ec2:Describe*``, ``logs:DescribeLogGroups``, ``cloudwatch:PutMetricData``, ``ecr:GetAuthorizationToken``,
  ``sts:GetCallerIdentity``: actions without a resource, for which ``aws:ResourceAccount`` is not in the request
  context and a ``StringEquals`` on it would deny). The test is ``Null: aws:ResourceAccount``, never the org key: a
  resource account outside any organization has no ``aws:ResourceOrgID`` either;
- on the interface endpoints but S3, AWS service principals (``aws:PrincipalIsAWSService``), which a team's own
  keys never are;
- the AWS-owned resources the cluster itself needs, each with its source below (``AWS_OWNED_BUCKETS``, image pulls
  on the ECR endpoints, public SSM parameters and documents);
- on S3, the CloudFormation responses of the capacity account's stacks only, where a custom resource runs in the
  VPC (``cloudformation_responses``).

S3 admits no service principal: a presigned URL that an AWS service signs with its service principal is evaluated
with ``aws:PrincipalIsAWSService`` true, and CloudFormation signs every stack's custom resource response URL so
(AWS's data perimeter examples, vpc_endpoint_policies/README.md, "AllowRequestsByAWSServicePrincipals"). Any
stack's, an attacker's in another account included: a pod holding such a URL could PUT the team's data into the
response bucket, and the attacker reads it back as the custom resource's attributes, response after response.

The statements follow AWS's data perimeter examples for VPC endpoints (github.com/aws-samples/
data-perimeter-policy-examples, vpc_endpoint_policies/). Plain data, no CDK token: the construct renders it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

S3_ENDPOINTS = ("S3Gateway", "S3Interface")
ECR_ENDPOINTS = ("EcrApi", "EcrDkr")

# AWS-owned buckets that hosts in the VPC read through the S3 endpoints, with the page that names each. ``{region}``
# and ``{region_no_dashes}`` are filled per region. Reads only (s3:GetObject), by any principal: these calls are
# unauthenticated or signed by the owning service's account (ECR's presigned layer URLs), never by ours.
AWS_OWNED_BUCKETS: tuple[tuple[str, str], ...] = (
    # Image layers of every ECR pull (ours and AWS's): "Minimum Amazon S3 bucket permissions for Amazon ECR",
    # docs.aws.amazon.com/AmazonECR/latest/userguide/vpc-endpoints.html#ecr-minimum-s3-perms
    ("prod-{region}-starport-layer-bucket", "ECR image layers (Amazon ECR User Guide, VPC endpoints, minimum "
     "Amazon S3 bucket permissions)"),
    # Package repositories of the nodes' Amazon Linux: "Kernel Live Patching on AL2" and the AL2023 user guide
    # (docs.aws.amazon.com/AWSEC2/latest/UserGuide/al2-live-patching.html, docs.aws.amazon.com/linux/al2023/ug/
    # live-patching.html), as collected in AWS's data perimeter S3 endpoint example.
    ("amazonlinux-2-repos-{region}", "Amazon Linux 2 package repositories (Amazon EC2 User Guide, Kernel Live "
     "Patching on AL2)"),
    ("amazonlinux.{region}.amazonaws.com", "Amazon Linux package repositories (Amazon EC2 User Guide, Kernel Live "
     "Patching on AL2)"),
    ("packages.{region}.amazonaws.com", "Amazon Linux package repositories (Amazon EC2 User Guide, Kernel Live "
     "Patching on AL2)"),
    ("repo.{region}.amazonaws.com", "Amazon Linux package repositories (Amazon EC2 User Guide, Kernel Live "
     "Patching on AL2)"),
    ("al2023-repos-{region}-de612dc2", "Amazon Linux 2023 package repositories (Amazon Linux 2023 User Guide, "
     "Kernel Live Patching)"),
    ("al2023-{region}", "Amazon Linux 2023 package repositories (Amazon Linux 2023 User Guide, Kernel Live "
     "Patching)"),
    # docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/download-cloudwatch-agent-commandline.html
    ("amazoncloudwatch-agent-{region}", "CloudWatch agent package (CloudWatch User Guide, download the agent)"),
    ("amazoncloudwatch-agent", "CloudWatch agent package (CloudWatch User Guide, download the agent)"),
    # docs.aws.amazon.com/systems-manager/latest/userguide/ssm-agent-minimum-s3-permissions.html (the nodes'
    # SSM agent, through which HyperPod gives shell access to instances)
    ("amazon-ssm-{region}", "SSM Agent updates (Systems Manager User Guide, SSM Agent minimum S3 permissions)"),
    ("aws-ssm-{region}", "SSM Agent documents and plugins (Systems Manager User Guide, SSM Agent minimum S3 "
     "permissions)"),
)

# Where CloudFormation takes custom resource responses in a region (CloudFormation User Guide, "VPC endpoints",
# bucket names: docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cfn-vpce-bucketnames.html). The key of one
# response is the stack's ARN, the resource's logical id and the request id joined by '|', as in the ResponseURL of
# every custom resource request (https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/
# arn%3Aaws%3Acloudformation%3Aus-east-1%3A123456789012%3Astack/name/guid%7CLogicalId%7CRequestId?...). The
# request reference of the User Guide shows the URL as a placeholder only: should the layout change, the handler's
# response is denied and the stack operation fails on its timeout; the perimeter does not open.
CFN_RESPONSE_BUCKET = "cloudformation-custom-resource-response-{region_no_dashes}"

# What an image pull needs beyond the token (docs.aws.amazon.com/AmazonECR/latest/userguide/
# image-pull.html): reads only, never a push. The registries of the images the cluster runs belong to AWS
# accounts that differ per region and service (EKS add-ons: docs.aws.amazon.com/eks/latest/userguide/
# add-ons-images.html; HyperPod's agents; task governance), so pulls by the spec's principals are admitted from
# any registry; what may run is the admission policies' and the node role's concern, and a pull moves no data out.
ECR_PULL_ACTIONS = ("ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer")


@dataclass(frozen=True)
class Perimeter:
    """Whose principals and resources the VPC endpoints admit."""

    accounts: tuple[str, ...]  # capacity, consumers and trusted, sorted and unique
    organization_id: Optional[str]  # accounts.organizationId
    region: str
    partition: str
    # The account whose stacks run custom resources inside the VPC: the capacity account of an EKS cluster (its
    # kubectl handler). None: no stack does (a Slurm cluster has no kubectl handler), no response is admitted.
    handler_account: Optional[str]

    def _fill(self) -> dict[str, str]:
        return {"region": self.region, "region_no_dashes": self.region.replace("-", "")}

    def aws_owned_buckets(self) -> tuple[str, ...]:
        """The object ARNs of ``AWS_OWNED_BUCKETS`` in this region."""
        return tuple(f"arn:{self.partition}:s3:::{pattern.format(**self._fill())}/*"
                     for pattern, _ in AWS_OWNED_BUCKETS)

    def cloudformation_responses(self) -> Optional[str]:
        """The object ARNs of the custom resource responses of ``handler_account``'s stacks in this region (None:
        no stack answers from inside the VPC).

        The custom resources that answer through the endpoints are the kubectl handler's (aws_eks_v2 runs its
        provider framework in the private subnets) in the capacity stack; the task governance provider and every
        other handler run outside the VPC. The key starts with the stack's ARN, which CloudFormation writes and
        signs into the presigned URL: another account's stack cannot name this account."""
        if self.handler_account is None:
            return None
        bucket = CFN_RESPONSE_BUCKET.format(**self._fill())
        stacks = f"arn:{self.partition}:cloudformation:{self.region}:{self.handler_account}:stack/"
        return f"arn:{self.partition}:s3:::{bucket}/{stacks}*"


def perimeter(accounts: Any, partition: str, *, handlers_in_vpc: bool) -> Perimeter:
    """The perimeter of a spec's ``accounts``; ``handlers_in_vpc``: whether the capacity stack runs custom
    resources in the VPC (an EKS cluster's kubectl handler)."""
    ids = {accounts.capacity.id, *(c.id for c in accounts.consumers), *accounts.trusted}
    return Perimeter(tuple(sorted(ids)), accounts.organization_id, accounts.capacity.region, partition,
                     accounts.capacity.id if handlers_in_vpc else None)


def _scopes(p: Perimeter) -> list[tuple[str, str, str, list[str]]]:
    """(Sid suffix, principal key, resource key, values): the accounts always, the organization when named."""
    out = [("Accounts", "aws:PrincipalAccount", "aws:ResourceAccount", list(p.accounts))]
    if p.organization_id:
        out.append(("Organization", "aws:PrincipalOrgID", "aws:ResourceOrgID", [p.organization_id]))
    return out


def _allow(sid: str, condition: Optional[dict[str, Any]] = None, *, actions: Any = "*", resources: Any = "*",
           principal: Any = None) -> dict[str, Any]:
    statement: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Principal": principal or {"AWS": "*"},
                                 "Action": actions, "Resource": resources}
    if condition:
        statement["Condition"] = condition
    return statement


def endpoint_policy(p: Perimeter, endpoint: str) -> dict[str, Any]:
    """The policy document of one endpoint, by its plan name (``INTERFACE_ENDPOINTS`` or ``S3Gateway``)."""
    statements = []
    for suffix, principal_key, resource_key, values in _scopes(p):
        statements.append(_allow(f"{suffix}PrincipalsTo{suffix}Resources",
                                 {"StringEquals": {principal_key: values, resource_key: values}}))
    if endpoint not in S3_ENDPOINTS:
        # S3 names a bucket in every request but ListAllMyBuckets, which lists the caller's own: no exception there.
        for suffix, principal_key, _, values in _scopes(p):
            statements.append(_allow(f"{suffix}PrincipalsWithoutResourceAccount",
                                     {"StringEquals": {principal_key: values},
                                      "Null": {"aws:ResourceAccount": "true"}}))
    if endpoint not in S3_ENDPOINTS:
        statements.append(_allow("AwsServicePrincipals", {"Bool": {"aws:PrincipalIsAWSService": "true"}}))
    if endpoint in S3_ENDPOINTS:
        statements.append(_allow("AwsOwnedBuckets", actions="s3:GetObject", resources=list(p.aws_owned_buckets()),
                                 principal="*"))
        responses = p.cloudformation_responses()
        if responses is not None:
            # No principal condition: whoever signed the URL (CloudFormation's service principal), the object key
            # names the stack, and only this account's stacks are admitted.
            statements.append(_allow("CapacityStacksCloudFormationResponses", actions="s3:PutObject",
                                     resources=responses, principal="*"))
    elif endpoint in ECR_ENDPOINTS:
        for suffix, principal_key, _, values in _scopes(p):
            statements.append(_allow(f"{suffix}PrincipalsPullFromAnyRegistry",
                                     {"StringEquals": {principal_key: values}}, actions=list(ECR_PULL_ACTIONS)))
    elif endpoint == "Ssm":
        # Public parameters (e.g. /aws/service/eks/optimized-ami/...) and AWS-owned documents carry no account:
        # docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-public-parameters.html
        owned = [f"arn:{p.partition}:ssm:{p.region}::parameter/aws/*", f"arn:{p.partition}:ssm:{p.region}::document/*"]
        for suffix, principal_key, _, values in _scopes(p):
            statements.append(_allow(f"{suffix}PrincipalsToAwsOwnedSsmResources",
                                     {"StringEquals": {principal_key: values}},
                                     actions=["ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath",
                                              "ssm:GetDocument", "ssm:DescribeDocument"], resources=owned))
    return {"Version": "2012-10-17", "Statement": statements}
