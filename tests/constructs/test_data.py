"""Per-team data, judged by what the synthesized policies let through (tests/iam_eval.py): prefixes end at a '/',
the team bucket and its key admit only the team's principals, TLS only, and Pod Identity trusts one service
account."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from hyperpod_gov.constructs.execution_role import execution_role
from hyperpod_gov.constructs.identity import TargetRole, WorkloadIdentityRole
from hyperpod_gov.constructs.team_storage import TeamStorage
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from hyperpod_gov.stacks.base import apply_feature_flags
from tests.conftest import TODAY
from tests.iam_eval import Request, decision, resolve
from tests.synth_helpers import minimal_app, resources

ACCOUNT = "111111111111"
SUBMITTER_A = "arn:aws:iam::111111111111:role/A"
VIEWER_A = "arn:aws:iam::111111111111:role/AViewer"
SUBMITTER_B = "arn:aws:iam::111111111111:role/B"
ROLE_A = "arn:aws:iam::111111111111:role/acme-team-a-trainer"
ROLE_B = "arn:aws:iam::111111111111:role/acme-team-b-loader"


def _stack() -> cdk.Stack:
    app = minimal_app(analytics_reporting=False)
    apply_feature_flags(app)  # as the app synthesizes (server access logs by bucket policy, among others)
    return cdk.Stack(app, "s", env=cdk.Environment(account=ACCOUNT, region="us-east-1"))


@pytest.fixture
def spec(base):
    """team-a: a same-account identity with grants and a team bucket; team-b: its own identity and submitter."""
    a, b = base["teams"]
    a["access"]["viewers"] = [VIEWER_A]
    a["workloadIdentities"] = [{"serviceAccount": "trainer", "grants": {
        "s3": [{"bucket": "shared", "prefix": "data", "access": "read-write"}],
        "kmsKeyArns": ["arn:aws:kms:us-east-1:111111111111:key/0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b"],
        "secretsPrefix": "team-a",
        "ecrRepositories": ["team-a/trainer"],
    }}]
    a["storage"] = {"bucket": "create"}
    b["access"] = {"submitters": [SUBMITTER_B]}
    b["workloadIdentities"] = [{"serviceAccount": "loader"}]
    return base


def _plan(data):
    return build_plan(parse_spec(data, today=TODAY))


def _policy_statements(template, type_):
    out = []
    for _, props in resources(template, type_):
        doc = props.get("PolicyDocument") or props.get("KeyPolicy")
        out += resolve(doc, template)["Statement"]
    return out


def _identity_template(plan, team="team-a"):
    stack = _stack()
    store = None
    storage = plan.team(team).storage
    if storage is not None:
        store = TeamStorage(stack, "Storage", storage=storage)
    for identity in (i for i in plan.identities if i.team == team):
        WorkloadIdentityRole(stack, f"Identity-{identity.service_account}", cluster_name=plan.eks_cluster_name,
                             identity=identity, account=plan.account, cluster_arn=plan.cluster.eks_arn,
                             team_key=store.key if store else None)
    return Template.from_stack(stack).to_json()


# --- the '/' boundary ----------------------------------------------------------------------------------------------


def test_prefix_data_reaches_data_and_never_data_other(spec):
    t = _identity_template(_plan(spec))
    statements = _policy_statements(t, "AWS::IAM::Policy")
    ok = Request("s3:PutObject", "arn:aws:s3:::shared/data/part-0")
    assert decision(statements, ok) == "allow"
    for key in ("data-other/part-0", "datax", "data"):
        assert decision(statements, Request("s3:GetObject", f"arn:aws:s3:::shared/{key}")) == "implicit", key
    listing = "arn:aws:s3:::shared"
    assert decision(statements, Request("s3:ListBucket", listing, context={"s3:prefix": "data/"})) == "allow"
    assert decision(statements, Request("s3:ListBucket", listing, context={"s3:prefix": "data-other/"})) == "implicit"
    assert decision(statements, Request("s3:ListBucket", listing)) == "implicit"  # no prefix: the whole bucket


def test_a_created_target_roles_prefix_ends_at_a_slash_too(base):
    base["teams"][0]["workloadIdentities"] = [{"serviceAccount": "trainer", "targetRole": {
        "account": "data", "name": "trainer-data", "s3": [{"bucket": "lake", "prefix": "raw"}]}}]
    plan = _plan(base)
    stack = _stack()
    TargetRole(stack, "T", identity=plan.identities[0], capacity_account=ACCOUNT, eks_cluster_name="e",
               eks_cluster_arn=plan.cluster.eks_arn, description="d")
    statements = _policy_statements(Template.from_stack(stack).to_json(), "AWS::IAM::Policy")
    assert decision(statements, Request("s3:GetObject", "arn:aws:s3:::lake/raw/x")) == "allow"
    assert decision(statements, Request("s3:GetObject", "arn:aws:s3:::lake/raw-private/x")) == "implicit"


def test_secrets_and_images_are_limited_to_the_named_prefix_and_repositories(spec):
    statements = _policy_statements(_identity_template(_plan(spec)), "AWS::IAM::Policy")
    secret = "arn:aws:secretsmanager:us-east-1:111111111111:secret:"
    assert decision(statements, Request("secretsmanager:GetSecretValue", secret + "team-a/db-AbCdEf")) == "allow"
    assert decision(statements, Request("secretsmanager:GetSecretValue", secret + "team-admin/db-AbCdEf")) == "implicit"
    repo = "arn:aws:ecr:us-east-1:111111111111:repository/"
    assert decision(statements, Request("ecr:BatchGetImage", repo + "team-a/trainer")) == "allow"
    assert decision(statements, Request("ecr:BatchGetImage", repo + "team-b/trainer")) == "implicit"
    assert decision(statements, Request("ecr:GetAuthorizationToken", "*")) == "allow"


def test_an_identity_without_grants_or_target_gets_no_permissions(spec):
    plan = _plan(spec)
    t = _identity_template(plan, "team-b")
    assert list(resources(t, "AWS::IAM::Policy")) == []


# --- the team bucket and its key -------------------------------------------------------------------------------------


@pytest.fixture
def bucket_policy(spec):
    t = _identity_template(_plan(spec))
    (policy,) = [resolve(p["PolicyDocument"], t)["Statement"] for _, p in resources(t, "AWS::S3::BucketPolicy")
                 if "DenyReadOutsideTeam" in str(p)]
    bucket = next(p["BucketName"] for _, p in resources(t, "AWS::S3::Bucket") if "BucketName" in p)
    return policy, f"arn:aws:s3:::{bucket}"


TLS = {"aws:SecureTransport": "true"}


def test_the_team_bucket_admits_its_roles_and_submitters_and_denies_another_teams(bucket_policy):
    statements, bucket = bucket_policy
    obj = f"{bucket}/checkpoints/step-1"
    for who in (ROLE_A, SUBMITTER_A):
        for action in ("s3:GetObject", "s3:PutObject", "s3:DeleteObject"):
            assert decision(statements, Request(action, obj, who, TLS)) != "deny", (who, action)
    assert decision(statements, Request("s3:PutObject", obj, SUBMITTER_A, TLS)) == "allow"  # by ARN, any account
    for who in (ROLE_B, SUBMITTER_B, VIEWER_A, "arn:aws:iam::111111111111:role/Admin",
                "arn:aws:iam::111111111111:root", "arn:aws:iam::999999999999:role/Outsider"):
        for action in ("s3:GetObject", "s3:PutObject", "s3:ListBucket"):
            resource = bucket if action == "s3:ListBucket" else obj
            assert decision(statements, Request(action, resource, who, TLS)) == "deny", (who, action)
    assert decision(statements, Request("s3:GetObject", obj, None, TLS)) == "deny"  # anonymous


def test_the_team_bucket_refuses_requests_without_tls(bucket_policy):
    statements, bucket = bucket_policy
    request = Request("s3:GetObject", f"{bucket}/x", ROLE_A, {"aws:SecureTransport": "false"})
    assert decision(statements, request) == "deny"


def test_bucket_configuration_is_never_denied_so_a_wrong_policy_can_be_repaired(bucket_policy):
    statements, bucket = bucket_policy
    admin = "arn:aws:iam::111111111111:role/Admin"
    assert decision(statements, Request("s3:PutBucketPolicy", bucket, admin, TLS)) != "deny"


def test_viewers_read_only_when_the_spec_says_so(spec):
    spec["teams"][0]["storage"]["viewersRead"] = True
    t = _identity_template(_plan(spec))
    (statements,) = [resolve(p["PolicyDocument"], t)["Statement"] for _, p in resources(t, "AWS::S3::BucketPolicy")
                     if "DenyReadOutsideTeam" in str(p)]
    bucket = next(p["BucketName"] for _, p in resources(t, "AWS::S3::Bucket") if "BucketName" in p)
    assert decision(statements, Request("s3:GetObject", f"arn:aws:s3:::{bucket}/x", VIEWER_A, TLS)) == "allow"
    assert decision(statements, Request("s3:PutObject", f"arn:aws:s3:::{bucket}/x", VIEWER_A, TLS)) == "deny"


def test_the_team_key_is_used_only_by_the_teams_principals_through_s3(spec):
    t = _identity_template(_plan(spec))
    (key,) = [resolve(p["KeyPolicy"], t)["Statement"] for _, p in resources(t, "AWS::KMS::Key")]
    via = {"kms:ViaService": "s3.us-east-1.amazonaws.com"}
    for who in (ROLE_A, SUBMITTER_A):
        assert decision(key, Request("kms:Decrypt", "*", who, via)) == "allow", who
        assert decision(key, Request("kms:Decrypt", "*", who)) == "implicit", who  # not outside S3
    for who in (ROLE_B, SUBMITTER_B, VIEWER_A, "arn:aws:iam::111111111111:role/Admin"):
        for action in ("kms:Decrypt", "kms:GenerateDataKey", "kms:Encrypt", "kms:ReEncryptFrom"):
            assert decision(key, Request(action, "*", who, via)) == "implicit", (who, action)
    # The account administers the key (so it is never orphaned) but cannot use it.
    admin = "arn:aws:iam::111111111111:role/Admin"
    assert decision(key, Request("kms:PutKeyPolicy", "*", admin)) == "allow"
    assert decision(key, Request("kms:ScheduleKeyDeletion", "*", admin)) == "allow"


def test_the_team_bucket_is_versioned_logged_private_and_encrypted_with_the_team_key(spec):
    t = _identity_template(_plan(spec))
    (bucket,) = [p for _, p in resources(t, "AWS::S3::Bucket") if "BucketName" in p]
    (key_id,) = [lid for lid, _ in resources(t, "AWS::KMS::Key")]
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["PublicAccessBlockConfiguration"] == {k: True for k in (
        "BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets")}
    assert bucket["LoggingConfiguration"]["LogFilePrefix"] == "team-a/"
    sse = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert sse == {"KMSMasterKeyID": {"Fn::GetAtt": [key_id, "Arn"]}, "SSEAlgorithm": "aws:kms"}


def test_a_retiring_teams_bucket_stays_and_admits_nobody(spec):
    spec["teams"][0]["retiring"] = True
    storage = _plan(spec).team("team-a").storage
    assert storage is not None and storage.admitted == ()
    stack = _stack()
    TeamStorage(stack, "Storage", storage=storage)
    t = Template.from_stack(stack).to_json()
    (statements,) = [resolve(p["PolicyDocument"], t)["Statement"] for _, p in resources(t, "AWS::S3::BucketPolicy")
                     if "DenyReadOutsideTeam" in str(p)]
    bucket = f"arn:aws:s3:::{storage.bucket}"
    assert decision(statements, Request("s3:GetObject", f"{bucket}/x", SUBMITTER_A, TLS)) == "deny"


# --- Pod Identity trust ----------------------------------------------------------------------------------------------


def test_a_source_role_is_assumed_only_for_its_namespace_and_service_account(spec):
    plan = _plan(spec)
    t = _identity_template(plan)
    (trust,) = [resolve(p["AssumeRolePolicyDocument"], t)["Statement"] for _, p in resources(t, "AWS::IAM::Role")]
    tags = {"aws:SourceAccount": ACCOUNT, "aws:SourceArn": plan.cluster.eks_arn,
            "aws:RequestTag/eks-cluster-arn": plan.cluster.eks_arn,
            "aws:RequestTag/kubernetes-namespace": "hyperpod-ns-team-a",
            "aws:RequestTag/kubernetes-service-account": "trainer"}
    pods = "pods.eks.amazonaws.com"
    for action in ("sts:AssumeRole", "sts:TagSession"):
        assert decision(trust, Request(action, "*", pods, tags)) == "allow", action
    for key, other in (("aws:RequestTag/kubernetes-namespace", "hyperpod-ns-team-b"),
                       ("aws:RequestTag/kubernetes-service-account", "default"),
                       ("aws:RequestTag/eks-cluster-arn", "arn:aws:eks:us-west-2:111111111111:cluster/ml-eks"),
                       ("aws:SourceArn", "arn:aws:eks:us-east-1:111111111111:cluster/other"),
                       ("aws:SourceAccount", "999999999999")):
        assert decision(trust, Request("sts:AssumeRole", "*", pods, {**tags, key: other})) == "implicit", key
    untagged = {k: v for k, v in tags.items() if not k.startswith("aws:RequestTag/")}
    assert decision(trust, Request("sts:AssumeRole", "*", pods, untagged)) == "implicit"


# --- node image registries -------------------------------------------------------------------------------------------


def _pull_statements(image_registries):
    stack = _stack()
    execution_role(stack, "Role", cluster_name="ml", cluster_arn="arn:aws:eks:us-east-1:111111111111:cluster/x",
                   image_registries=image_registries)
    t = Template.from_stack(stack).to_json()
    return _policy_statements(t, "AWS::IAM::Policy")


def test_without_image_registries_the_nodes_pull_from_every_repository_of_the_region():
    statements = _pull_statements(None)
    for account in ("111111111111", "602401143452"):
        arn = f"arn:aws:ecr:us-east-1:{account}:repository/anything"
        assert decision(statements, Request("ecr:BatchGetImage", arn, context={"aws:ResourceAccount": account})) == \
            "allow"


def test_image_registries_limit_the_spec_accounts_repositories_and_keep_aws_owned_ones(base):
    base["cluster"]["imageRegistries"] = ["team-a/", "arn:aws:ecr:us-east-1:222222222222:repository/models"]
    plan = _plan(base)
    statements = _pull_statements(plan.cluster.image_registries)

    def pull(account: str, name: str) -> str:
        arn = f"arn:aws:ecr:us-east-1:{account}:repository/{name}"
        return decision(statements, Request("ecr:BatchGetImage", arn, context={"aws:ResourceAccount": account}))

    assert pull("111111111111", "team-a/trainer") == "allow"
    assert pull("111111111111", "team-b/trainer") == "implicit"
    assert pull("111111111111", "team-a-other/trainer") == "implicit"  # the prefix ends at its '/'
    assert pull("222222222222", "models") == "allow"
    assert pull("222222222222", "other") == "implicit"  # a consumer account: only what is listed
    assert pull("602401143452", "eks/coredns") == "allow"  # an AWS-owned add-on registry
