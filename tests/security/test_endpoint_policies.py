"""Every VPC endpoint admits only the spec's accounts (or organization) and the AWS-owned resources the cluster
needs: the synthesized policy documents, evaluated request by request (tests/security/iam_eval.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from hyperpod_gov.plan.endpoint_policies import AWS_OWNED_BUCKETS, endpoint_policy, perimeter
from hyperpod_gov.plan.plan import INTERFACE_ENDPOINTS
from hyperpod_gov.spec import parse_spec
from tests.conftest import EXAMPLES, TODAY
from tests.security.iam_eval import Request, aws_request, evaluate

import yaml

CAPACITY = "111111111111"  # examples/enterprise.yaml
CONSUMER = "222222222222"
FOREIGN = "999999999999"
ECR_SERVICE_ACCOUNT = "602401143452"  # the EKS add-on images' registry in us-east-1
NODE = f"arn:aws:iam::{CAPACITY}:role/node"
TEAM_TARGET = f"arn:aws:iam::{CONSUMER}:role/team-data"
OUTSIDER = f"arn:aws:iam::{FOREIGN}:user/own-keys"
ORG = "o-a1b2c3d4e5"


def _service(resource: dict) -> str:
    """The endpoint's plan name from its CloudFormation ServiceName (com.amazonaws.<region>.<service>)."""
    name = resource["Properties"]["ServiceName"]
    text = name if isinstance(name, str) else "".join(p if isinstance(p, str) else "" for p in name["Fn::Join"][1])
    service = text.rsplit(".", 1)[-1] if "ecr." not in text else "ecr." + text.rsplit(".", 1)[-1]
    by_service = {"ecr.api": "EcrApi", "ecr.dkr": "EcrDkr", "ec2": "Ec2", "sts": "Sts", "eks": "Eks",
                  "eks-auth": "EksAuth", "logs": "Logs", "monitoring": "Monitoring", "api": "SageMakerApi",
                  "ssm": "Ssm", "kms": "Kms", "secretsmanager": "SecretsManager",
                  "s3": "S3Interface" if resource["Properties"].get("VpcEndpointType") == "Interface" else "S3Gateway"}
    return by_service[service]


def endpoint_policies(templates: dict) -> dict[str, dict]:
    found = {}
    for template in templates.values():
        for resource in template.get("Resources", {}).values():
            if resource["Type"] == "AWS::EC2::VPCEndpoint":
                found[_service(resource)] = resource["Properties"].get("PolicyDocument")
    return found


@pytest.fixture(scope="module")
def policies(enterprise) -> dict[str, dict]:
    return endpoint_policies(enterprise.templates)


def test_every_endpoint_has_a_policy(policies, startup):
    # The enterprise example names secrets (grants.secretsPrefix) and keys (targetRole.kmsKeys); startup neither.
    assert sorted(policies) == sorted([*INTERFACE_ENDPOINTS, "Kms", "SecretsManager", "S3Gateway"])
    assert all(p is not None for p in policies.values()), [k for k, p in policies.items() if p is None]
    assert sorted(endpoint_policies(startup.templates)) == sorted([*INTERFACE_ENDPOINTS, "S3Gateway"])
    assert all(p is not None for p in endpoint_policies(startup.templates).values())


S3 = ("S3Gateway", "S3Interface")


@pytest.mark.parametrize("endpoint", S3)
def test_a_foreign_accounts_bucket_is_denied_even_to_the_capacity_accounts_node(policies, endpoint):
    put = aws_request("s3:PutObject", "arn:aws:s3:::exfil-bucket/data.tar", principal=NODE, resource_account=FOREIGN)
    assert evaluate(policies[endpoint], put) == "ImplicitDeny"


@pytest.mark.parametrize("endpoint", S3)
def test_the_ecr_layer_bucket_is_allowed_on_ecrs_presigned_url(policies, endpoint):
    # The layer download is signed by an ECR service account, not by ours: only the bucket exception admits it.
    get = aws_request("s3:GetObject", "arn:aws:s3:::prod-us-east-1-starport-layer-bucket/sha256:abc",
                      principal=f"arn:aws:iam::{ECR_SERVICE_ACCOUNT}:user/ecr", resource_account="000000000000")
    assert evaluate(policies[endpoint], get) == "Allow"
    put = aws_request("s3:PutObject", "arn:aws:s3:::prod-us-east-1-starport-layer-bucket/x", principal=NODE,
                      resource_account="000000000000")
    assert evaluate(policies[endpoint], put) == "ImplicitDeny"  # reads only
    other_region = aws_request("s3:GetObject", "arn:aws:s3:::prod-eu-west-1-starport-layer-bucket/x",
                               principal=NODE, resource_account="000000000000")
    assert evaluate(policies[endpoint], other_region) == "ImplicitDeny"


@pytest.mark.parametrize("endpoint", S3)
def test_the_amazon_linux_repositories_are_allowed_unauthenticated(policies, endpoint):
    for bucket in ("al2023-repos-us-east-1-de612dc2", "amazonlinux-2-repos-us-east-1"):
        get = aws_request("s3:GetObject", f"arn:aws:s3:::{bucket}/core/mirrors", principal=None,
                          resource_account=None)
        assert evaluate(policies[endpoint], get) == "Allow", bucket


@pytest.mark.parametrize("endpoint", S3)
def test_the_spec_accounts_buckets_are_allowed_to_their_principals_only(policies, endpoint):
    lifecycle = "arn:aws:s3:::sagemaker-ml-cluster-lifecycle/on_create.sh"
    assert evaluate(policies[endpoint], aws_request("s3:GetObject", lifecycle, principal=NODE,
                                                    resource_account=CAPACITY)) == "Allow"
    data = "arn:aws:s3:::research-data/train/x"
    assert evaluate(policies[endpoint], aws_request("s3:GetObject", data, principal=TEAM_TARGET,
                                                    resource_account=CONSUMER)) == "Allow"
    assert evaluate(policies[endpoint], aws_request("s3:GetObject", lifecycle, principal=OUTSIDER,
                                                    resource_account=CAPACITY)) == "ImplicitDeny"
    assert evaluate(policies[endpoint], aws_request("s3:PutObject", "arn:aws:s3:::own/x", principal=OUTSIDER,
                                                    resource_account=FOREIGN)) == "ImplicitDeny"


# CloudFormation's custom resource responses (plan/endpoint_policies.py, CFN_RESPONSE_BUCKET): a PUT on the
# presigned ResponseURL that CloudFormation signs with its service principal (AWS's data perimeter examples).
CFN_RESPONSES = "arn:aws:s3:::cloudformation-custom-resource-response-useast1"
AWS_BUCKET_OWNER = "000000000000"  # the AWS account that owns CloudFormation's buckets (not in the request here)


def _cfn_response(account: str, stack: str = "stack/acme-ml-capacity/5b918b10-0000-11ef-8f6b-0a1b2c3d4e5f",
                  region: str = "us-east-1") -> Request:
    key = f"arn:aws:cloudformation:{region}:{account}:{stack}|KubectlResource|0d5b1c2a-request"
    return aws_request("s3:PutObject", f"{CFN_RESPONSES}/{key}", principal=None, resource_account=AWS_BUCKET_OWNER,
                       service=True)


@pytest.mark.parametrize("endpoint", S3)
def test_an_attackers_presigned_cloudformation_response_url_is_denied(policies, endpoint):
    # The attacker's stack in its own account: its response URL is presigned by CloudFormation's service principal
    # (aws:PrincipalIsAWSService true), which the S3 endpoints admitted for any action on any bucket before.
    assert evaluate(policies[endpoint], _cfn_response(FOREIGN)) == "ImplicitDeny"
    # The stack name cannot smuggle the capacity account in: the account field of the ARN is what is matched.
    assert evaluate(policies[endpoint], _cfn_response(FOREIGN, stack=f"stack/{CAPACITY}/x")) == "ImplicitDeny"
    # Another region's stack of the capacity account writes to another bucket, and a consumer's stack runs no
    # handler in this VPC.
    assert evaluate(policies[endpoint], _cfn_response(CAPACITY, region="eu-west-1")) == "ImplicitDeny"
    assert evaluate(policies[endpoint], _cfn_response(CONSUMER)) == "ImplicitDeny"
    # Nor any other URL an AWS service presigns: a service principal is no longer admitted on S3 at all.
    other = aws_request("s3:PutObject", "arn:aws:s3:::amazon-q-uploads-us-east-1/x", principal=None,
                        resource_account=AWS_BUCKET_OWNER, service=True)
    assert evaluate(policies[endpoint], other) == "ImplicitDeny"
    wait = aws_request("s3:PutObject", f"arn:aws:s3:::cloudformation-waitcondition-us-east-1/arn:aws:cloudformation:"
                       f"us-east-1:{FOREIGN}:stack/x/guid/Handle", principal=None, resource_account=AWS_BUCKET_OWNER,
                       service=True)
    assert evaluate(policies[endpoint], wait) == "ImplicitDeny"


@pytest.mark.parametrize("endpoint", S3)
def test_the_capacity_accounts_stacks_answer_cloudformation_through_the_endpoints(policies, endpoint):
    assert evaluate(policies[endpoint], _cfn_response(CAPACITY)) == "Allow"
    read = aws_request("s3:GetObject", f"{CFN_RESPONSES}/arn:aws:cloudformation:us-east-1:{CAPACITY}:stack/x/y|R|Q",
                       principal=None, resource_account=AWS_BUCKET_OWNER, service=True)
    assert evaluate(policies[endpoint], read) == "ImplicitDeny"  # a response is written, never read back


def test_only_the_capacity_stack_runs_functions_in_the_vpc(enterprise):
    # Why the capacity account's stacks are enough: the custom resources that answer from inside the VPC are the
    # functions with a VpcConfig (aws_eks_v2's kubectl provider framework and handler), all in the capacity stack.
    in_vpc = sorted((stack, lid) for stack, t in enterprise.templates.items()
                    for lid, r in t.get("Resources", {}).items()
                    if r["Type"] == "AWS::Lambda::Function" and "VpcConfig" in r.get("Properties", {}))
    assert in_vpc and {stack for stack, _ in in_vpc} == {"acme-ml-capacity"}, in_vpc


@pytest.mark.parametrize("endpoint", S3)
def test_a_slurm_clusters_s3_endpoints_admit_no_cloudformation_response(endpoint):
    # A Slurm cluster has no kubectl handler: no stack of the spec answers CloudFormation from inside the VPC.
    from tests.slurm.spec_fixtures import plan_of, slurm_base

    plan = plan_of(slurm_base())  # capacity account 111111111111 in us-east-1, as the enterprise example
    policy = endpoint_policy(plan.network.perimeter, endpoint)
    assert evaluate(policy, _cfn_response(plan.account)) == "ImplicitDeny"
    assert "cloudformation" not in str(policy)


@pytest.mark.parametrize("endpoint", sorted({*INTERFACE_ENDPOINTS, "Kms", "SecretsManager"} - set(S3)))
def test_interface_endpoints_still_admit_aws_service_principals(policies, endpoint):
    call = aws_request("logs:PutLogEvents", "arn:aws:logs:us-east-1:000000000000:log-group:x", principal=None,
                       resource_account=AWS_BUCKET_OWNER, service=True)
    assert evaluate(policies[endpoint], call) == "Allow"


RESOURCE_CALLS = {
    "Logs": ("logs:PutLogEvents", "arn:aws:logs:us-east-1:{account}:log-group:exfil:log-stream:x"),
    "EcrApi": ("ecr:InitiateLayerUpload", "arn:aws:ecr:us-east-1:{account}:repository/exfil"),
    "EcrDkr": ("ecr:PutImage", "arn:aws:ecr:us-east-1:{account}:repository/exfil"),
    "Sts": ("sts:AssumeRole", "arn:aws:iam::{account}:role/exfil"),
    "Monitoring": ("cloudwatch:PutDashboard", "arn:aws:cloudwatch::{account}:dashboard/exfil"),
    "SageMakerApi": ("sagemaker:CreateModel", "arn:aws:sagemaker:us-east-1:{account}:model/exfil"),
    "Ssm": ("ssm:PutParameter", "arn:aws:ssm:us-east-1:{account}:parameter/exfil"),
    "Ec2": ("ec2:CreateSnapshot", "arn:aws:ec2:us-east-1:{account}:volume/vol-1"),
    "Eks": ("eks:DescribeCluster", "arn:aws:eks:us-east-1:{account}:cluster/other"),
    "EksAuth": ("eks-auth:AssumeRoleForPodIdentity", "arn:aws:eks:us-east-1:{account}:cluster/other"),
    "Kms": ("kms:Decrypt", "arn:aws:kms:us-east-1:{account}:key/1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"),
    "SecretsManager": ("secretsmanager:GetSecretValue", "arn:aws:secretsmanager:us-east-1:{account}:secret:team/x"),
}


@pytest.mark.parametrize("endpoint", sorted(RESOURCE_CALLS))
def test_interface_endpoints_deny_foreign_resources_and_foreign_principals(policies, endpoint):
    action, resource = RESOURCE_CALLS[endpoint]
    policy = policies[endpoint]
    ours = aws_request(action, resource.format(account=CAPACITY), principal=NODE, resource_account=CAPACITY)
    assert evaluate(policy, ours) == "Allow"
    to_consumer = aws_request(action, resource.format(account=CONSUMER), principal=NODE, resource_account=CONSUMER)
    assert evaluate(policy, to_consumer) == "Allow"
    foreign_resource = aws_request(action, resource.format(account=FOREIGN), principal=NODE,
                                   resource_account=FOREIGN)
    assert evaluate(policy, foreign_resource) == "ImplicitDeny"
    foreign_principal = aws_request(action, resource.format(account=CAPACITY), principal=OUTSIDER,
                                    resource_account=CAPACITY)
    assert evaluate(policy, foreign_principal) == "ImplicitDeny"


@pytest.mark.parametrize("endpoint, action", [("Ec2", "ec2:DescribeInstances"), ("Logs", "logs:DescribeLogGroups"),
                                              ("Monitoring", "cloudwatch:PutMetricData"),
                                              ("EcrApi", "ecr:GetAuthorizationToken"),
                                              ("Sts", "sts:GetCallerIdentity")])
def test_calls_without_a_resource_account_are_admitted_for_the_spec_principals_only(policies, endpoint, action):
    assert evaluate(policies[endpoint], aws_request(action, "*", principal=NODE, resource_account=None)) == "Allow"
    assert evaluate(policies[endpoint], aws_request(action, "*", principal=OUTSIDER, resource_account=None)) \
        == "ImplicitDeny"


@pytest.mark.parametrize("endpoint", ["EcrApi", "EcrDkr"])
def test_nodes_pull_aws_owned_images_but_push_nowhere_foreign(policies, endpoint):
    repository = f"arn:aws:ecr:us-east-1:{ECR_SERVICE_ACCOUNT}:repository/eks/pod-identity-agent"
    for action in ("ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"):
        pull = aws_request(action, repository, principal=NODE, resource_account=ECR_SERVICE_ACCOUNT)
        assert evaluate(policies[endpoint], pull) == "Allow", action
        by_outsider = aws_request(action, repository, principal=OUTSIDER, resource_account=ECR_SERVICE_ACCOUNT)
        assert evaluate(policies[endpoint], by_outsider) == "ImplicitDeny", action
    for action in ("ecr:PutImage", "ecr:UploadLayerPart", "ecr:CompleteLayerUpload", "ecr:CreateRepository"):
        push = aws_request(action, f"arn:aws:ecr:us-east-1:{FOREIGN}:repository/exfil", principal=NODE,
                           resource_account=FOREIGN)
        assert evaluate(policies[endpoint], push) == "ImplicitDeny", action


def test_public_ssm_parameters_are_readable(policies):
    get = aws_request("ssm:GetParameter", "arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/x",
                      principal=NODE, resource_account=None)
    assert evaluate(policies["Ssm"], get) == "Allow"


def _with_org(org: str | None) -> dict:
    data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
    if org is not None:
        data["accounts"]["organizationId"] = org
    return data


def test_the_organization_admits_its_accounts_and_still_not_a_resource_outside_it():
    spec = parse_spec(_with_org(ORG), today=TODAY)
    p = perimeter(spec.accounts, "aws", handlers_in_vpc=True)
    for endpoint in (*INTERFACE_ENDPOINTS, "Kms", "SecretsManager", "S3Gateway"):
        policy = endpoint_policy(p, endpoint)
        member = "arn:aws:iam::555555555555:role/org-member"
        inside = aws_request("s3:GetObject" if endpoint.startswith("S3") else "logs:PutLogEvents", "*",
                             principal=member, resource_account="555555555555", principal_org=ORG, resource_org=ORG)
        assert evaluate(policy, inside) == "Allow", endpoint
        # A resource account outside every organization has no aws:ResourceOrgID: not admitted by the org either.
        outside = aws_request("s3:PutObject" if endpoint.startswith("S3") else "logs:PutLogEvents", "*",
                              principal=member, resource_account=FOREIGN, principal_org=ORG)
        assert evaluate(policy, outside) == "ImplicitDeny", endpoint
    plain = perimeter(parse_spec(_with_org(None), today=TODAY).accounts, "aws", handlers_in_vpc=True)
    assert "aws:PrincipalOrgID" not in str(endpoint_policy(plain, "Logs"))


@pytest.mark.parametrize("value", ["o-short", "O-A1B2C3D4E5", "a1b2c3d4e5", "o-a1b2c3d4e5\n", "r-a1b2"])
def test_an_organization_id_that_is_not_one_is_a_spec_error(value):
    from hyperpod_gov.spec import SpecError

    with pytest.raises(SpecError) as err:
        parse_spec(_with_org(value), today=TODAY)
    text = str(err.value)
    assert "accounts.organizationId: is not an AWS Organizations id" in text and "o-a1b2c3d4e5" in text


def test_every_aws_owned_bucket_is_documented_with_its_source():
    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    for pattern, source in AWS_OWNED_BUCKETS:
        assert f"`{pattern}`" in page, pattern
        assert source in page, source


def test_naming_an_organization_is_a_privilege_change_in_diff():
    from hyperpod_gov.diff import governance_diff
    from hyperpod_gov.plan import build_plan

    old = build_plan(parse_spec(_with_org(None), today=TODAY))
    new = build_plan(parse_spec(_with_org(ORG), today=TODAY))
    lines = [line for line in governance_diff(old, new) if "organization" in line]
    assert lines and all("privilege" in line and ORG in line for line in lines), governance_diff(old, new)
    assert not [line for line in governance_diff(new, old) if "privilege" in line and "organization" in line]


# --- KMS and Secrets Manager where the spec names keys or secrets (issue 55) ------------------------------------------

def _endpoints(**grants) -> tuple[str, ...]:
    from hyperpod_gov.plan import build_plan
    from tests.conftest import BASE

    data = copy.deepcopy(BASE)
    if grants:
        data["teams"][1]["workloadIdentities"] = [{"serviceAccount": "loader", "grants": grants}]
    return build_plan(parse_spec(data, today=TODAY)).network.interface_endpoints


def test_kms_and_secrets_manager_endpoints_come_only_where_the_spec_names_keys_or_secrets():
    base = _endpoints()
    assert base == INTERFACE_ENDPOINTS  # BASE names neither
    key = "arn:aws:kms:us-east-1:111111111111:key/1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"
    assert _endpoints(kmsKeyArns=[key]) == (*base, "Kms")
    assert _endpoints(secretsPrefix="team-b/") == (*base, "SecretsManager")
    assert _endpoints(kmsKeyArns=[key], secretsPrefix="team-b/") == (*base, "Kms", "SecretsManager")


def test_the_enterprise_pods_reach_their_keys_and_secrets_through_the_endpoints_only_in_the_perimeter(policies):
    # applied-research's experiment-runner reads its secrets with its source role; speech's trainer target role
    # decrypts with a key of the research-data consumer account: both pass, another account's key or secret not.
    source = f"arn:aws:iam::{CAPACITY}:role/experiment-runner-source"
    secret = f"arn:aws:secretsmanager:us-east-1:{CAPACITY}:secret:applied-research/db-AbCdEf"
    assert evaluate(policies["SecretsManager"], aws_request("secretsmanager:GetSecretValue", secret,
                                                            principal=source, resource_account=CAPACITY)) == "Allow"
    own_key = f"arn:aws:kms:us-east-1:{CONSUMER}:key/1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"
    assert evaluate(policies["Kms"], aws_request("kms:Decrypt", own_key, principal=TEAM_TARGET,
                                                 resource_account=CONSUMER)) == "Allow"
    foreign_key = f"arn:aws:kms:us-east-1:{FOREIGN}:key/x"
    assert evaluate(policies["Kms"], aws_request("kms:Encrypt", foreign_key, principal=TEAM_TARGET,
                                                 resource_account=FOREIGN)) == "ImplicitDeny"
    assert evaluate(policies["SecretsManager"], aws_request(
        "secretsmanager:PutSecretValue", f"arn:aws:secretsmanager:us-east-1:{FOREIGN}:secret:x", principal=OUTSIDER,
        resource_account=FOREIGN)) == "ImplicitDeny"
