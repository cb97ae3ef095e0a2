"""The operators' add-ons as synthesized: pinned, after the nodes and the Pod Identity agent, with their roles
(trust limited to this cluster) and Pod Identity associations; in the governance stack on an existing cluster."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import BASE, EXAMPLES, TODAY
from tests.security.iam_eval import aws_request, evaluate
from tests.synth_helpers import cfn_lint, resources, synthesize
from tests.test_app_quality import KEPT_WARNINGS

TRAINING = "amazon-sagemaker-hyperpod-training-operator"
TRUST = {
    "StringEquals": {"aws:SourceAccount": "111111111111"},
    "ArnEquals": {"aws:SourceArn": "arn:aws:eks:us-east-1:111111111111:cluster/ml-eks"},
}


@pytest.fixture(scope="module")
def all_operators(tmp_path_factory):
    data = copy.deepcopy(BASE)
    data["cluster"]["operators"] = ["training", "inference", "spaces"]
    # team-a serves models from a granted prefix; team-b is granted a bucket but may not serve (no inference).
    contract = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
                "dataClassification": "internal", "reviewBy": "2027-06-30"}
    data["teams"][0]["contract"] = {**contract, "approvedWorkloads": ["training", "inference"]}
    data["teams"][0]["workloadIdentities"].append(
        {"serviceAccount": "server", "grants": {"s3": [{"bucket": "team-a-models", "prefix": "llm/"}]}})
    data["teams"][1]["workloadIdentities"] = [
        {"serviceAccount": "trainer", "grants": {"s3": [{"bucket": "team-b-data"}]}}]
    # A shared file system too: one FSx CSI driver (the inference operator's) serves both (HPG-D008).
    data["cluster"]["sharedStorage"] = {"fsxLustre": {"storageCapacityGiB": 1200, "perUnitStorageThroughput": 125,
                                                      "csiDriverVersion": "v1.6.0-eksbuild.1"}}
    return synthesize(parse_spec(data, today=TODAY), tmp_path_factory.mktemp("operators"))


def _addons(template) -> dict[str, tuple[str, dict]]:
    return {p["AddonName"]: (lid, p) for lid, p in resources(template, "AWS::EKS::Addon")}


def _depends(template, logical_id) -> set[str]:
    depends = template["Resources"][logical_id].get("DependsOn", [])
    return set([depends] if isinstance(depends, str) else depends)


def _role(template, ref) -> dict:
    return template["Resources"][ref["Fn::GetAtt"][0]]["Properties"]


def test_the_enterprise_example_installs_the_operators_its_teams_run_on_pinned(enterprise):
    # operators: [training, inference, spaces]: its teams approve inference and experimentation (HPG-D009). The
    # default, [training] alone, is test_operator_spec.py's test_the_default_is_the_training_operator_only.
    found = _addons(enterprise.template("capacity"))
    assert found[TRAINING][1]["AddonVersion"] == "v1.0.1-eksbuild.1"
    assert found["cert-manager"][1]["AddonVersion"] == "v1.18.2-eksbuild.2"
    assert found["amazon-sagemaker-spaces"][1]["AddonVersion"] == "v0.2.1-eksbuild.1"
    assert found["aws-ebs-csi-driver"][1]["AddonVersion"] == "v1.48.0-eksbuild.2"
    assert found["amazon-sagemaker-hyperpod-inference"][1]["AddonVersion"] == "v1.0.0-eksbuild.1"


def test_operator_addons_wait_for_the_nodes_the_pod_identity_agent_and_cert_manager(all_operators):
    t = all_operators.template("capacity")
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    found = _addons(t)
    agent = found["eks-pod-identity-agent"][0]
    for name in ("cert-manager", TRAINING, "aws-ebs-csi-driver", "amazon-sagemaker-spaces"):
        assert {hyperpod, agent} <= _depends(t, found[name][0]), name
    assert found["cert-manager"][0] in _depends(t, found[TRAINING][0])
    assert {found["cert-manager"][0], found["aws-ebs-csi-driver"][0]} <= _depends(t, found["amazon-sagemaker-spaces"][0])


def test_training_operator_role_trusts_pod_identity_of_this_cluster_only(all_operators):
    t = all_operators.template("capacity")
    _, addon = _addons(t)[TRAINING]
    (assoc,) = addon["PodIdentityAssociations"]
    assert assoc["ServiceAccount"] == "hp-training-operator-controller-manager"
    role = _role(t, assoc["RoleArn"])
    (statement,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == TRUST
    assert [json.dumps(p) for p in role["ManagedPolicyArns"]] == [json.dumps({"Fn::Join": ["", [
        "arn:", {"Ref": "AWS::Partition"}, ":iam::aws:policy/AmazonSageMakerHyperPodTrainingOperatorAccess"]]})]


def test_spaces_controller_and_ebs_csi_roles(all_operators):
    t = all_operators.template("capacity")
    found = _addons(t)
    (spaces,) = found["amazon-sagemaker-spaces"][1]["PodIdentityAssociations"]
    assert spaces["ServiceAccount"] == "jupyter-k8s-controller-manager"
    assert _role(t, spaces["RoleArn"])["AssumeRolePolicyDocument"]["Statement"][0]["Condition"] == TRUST
    (ebs,) = found["aws-ebs-csi-driver"][1]["PodIdentityAssociations"]
    assert ebs["ServiceAccount"] == "ebs-csi-controller-sa"
    role_id = ebs["RoleArn"]["Fn::GetAtt"][0]
    (policy,) = [p for _, p in resources(t, "AWS::IAM::Policy") if {"Ref": role_id} in p["Roles"]]
    by_action = {json.dumps(s["Action"]): s["Resource"] for s in policy["PolicyDocument"]["Statement"]}
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    # volumes attach on this HyperPod cluster only, not cluster/*
    assert by_action[json.dumps(["sagemaker:AttachClusterNodeVolume", "sagemaker:DetachClusterNodeVolume"])] == {
        "Fn::GetAtt": [hyperpod, "ClusterArn"]}
    assert by_action[json.dumps("eks:DescribeCluster")] == "arn:aws:eks:us-east-1:111111111111:cluster/ml-eks"


def test_operator_templates_pass_cfn_lint(all_operators):
    for path in all_operators.template_files():
        matches = cfn_lint(Path(path), "us-east-1")
        assert not [str(m) for m in matches if m.rule.id not in KEPT_WARNINGS], path.name


def test_existing_cluster_gets_the_listed_operators_from_the_governance_stack(tmp_path):
    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["cluster"]["existing"]["hyperPodClusterArn"] = "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh"
    data["cluster"]["operators"] = ["training"]
    synthesized = synthesize(parse_spec(data, today=TODAY), tmp_path, nag=False)  # the add-ons' properties
    t = synthesized.template("governance")
    found = _addons(t)
    assert found[TRAINING][1]["AddonVersion"] == "v1.0.1-eksbuild.1"
    assert found[TRAINING][1]["ClusterName"] == synthesized.spec.cluster.existing.eks_cluster_name
    assert found["cert-manager"][0] in _depends(t, found[TRAINING][0])


# --- cluster.operators: inference (IRSA roles through the cluster's OIDC provider) -----------------------------

INFERENCE = "amazon-sagemaker-hyperpod-inference"


def _render(value) -> str:
    """A deploy-time string with each reference shown as <logical id[.attribute]>, the OIDC issuer (the provider
    ARN's part after ``:oidc-provider/``) as <issuer:provider id>."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(_render(p) for p in parts)
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        return "<{}.{}>".format(*value["Fn::GetAtt"])
    index, (split,) = value["Fn::Select"][0], [value["Fn::Select"][1]["Fn::Split"]]
    assert (index, split[0]) == (1, ":oidc-provider/"), value
    return f"<issuer:{split[1]['Ref']}>"


def _provider(template) -> str:
    (lid, props), = resources(template, "AWS::IAM::OIDCProvider")
    return lid


def _irsa(template, role_id) -> tuple[dict, list[dict]]:
    """The role's web-identity statement's conditions (rendered) and its other statements."""
    statements = template["Resources"][role_id]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    (web,) = [s for s in statements if s["Action"] == "sts:AssumeRoleWithWebIdentity"]
    assert web["Principal"] == {"Federated": {"Ref": _provider(template)}}
    assert list(web["Condition"]) == ["StringEquals"]
    cfn_json = web["Condition"]["StringEquals"]["Fn::GetAtt"]
    assert cfn_json[1] == "Value"
    value = json.loads(_render(template["Resources"][cfn_json[0]]["Properties"]["Value"]))
    return value, [s for s in statements if s is not web]


def test_the_cluster_oidc_provider_trusts_sts_for_this_eks_cluster(all_operators):
    t = all_operators.template("capacity")
    (_, props), = resources(t, "AWS::IAM::OIDCProvider")
    (eks_id, _), = resources(t, "AWS::EKS::Cluster")
    assert props["Url"] == {"Fn::GetAtt": [eks_id, "OpenIdConnectIssuerUrl"]}
    assert props["ClientIdList"] == ["sts.amazonaws.com"]
    assert "ThumbprintList" not in props  # IAM retrieves the issuer's CA thumbprint itself


@pytest.mark.parametrize("addon, via, subject", [
    (INFERENCE, "executionRoleArn", "hyperpod-inference-system:hyperpod-inference-controller-manager"),
    (INFERENCE, "alb", "hyperpod-inference-system:aws-load-balancer-controller"),
    (INFERENCE, "keda", "hyperpod-inference-system:keda-operator"),
    ("aws-mountpoint-s3-csi-driver", "ServiceAccountRoleArn", "kube-system:s3-csi-driver-sa"),
    ("aws-fsx-csi-driver", "ServiceAccountRoleArn", "kube-system:fsx-csi-controller-sa"),
])
def test_irsa_roles_trust_one_service_account_of_this_cluster(all_operators, addon, via, subject):
    t = all_operators.template("capacity")
    _, props = _addons(t)[addon]
    if via == "ServiceAccountRoleArn":
        ref = props[via]
    else:
        config = props["ConfigurationValues"]
        rendered = json.loads(_render(config))
        arn = {"executionRoleArn": rendered["executionRoleArn"], "alb": rendered["alb"]["serviceAccount"]["roleArn"],
               "keda": rendered["keda"]["auth"]["aws"]["irsa"]["roleArn"]}[via]
        ref = {"Fn::GetAtt": arn.strip("<>").split(".")}
    issuer = f"<issuer:{_provider(t)}>"
    conditions, others = _irsa(t, ref["Fn::GetAtt"][0])
    assert conditions == {f"{issuer}:sub": f"system:serviceaccount:{subject}", f"{issuer}:aud": "sts.amazonaws.com"}
    if via == "executionRoleArn":  # the setup page's execution role is also SageMaker's, for this account only
        assert others == [{"Action": "sts:AssumeRole", "Effect": "Allow",
                           "Principal": {"Service": "sagemaker.amazonaws.com"},
                           "Condition": {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}},
                                         "ArnLike": {"aws:SourceArn": {"Fn::Join": ["", [
                                             "arn:", {"Ref": "AWS::Partition"}, ":sagemaker:", {"Ref": "AWS::Region"},
                                             ":", {"Ref": "AWS::AccountId"}, ":*"]]}}}}]
    else:
        assert others == []


def test_inference_addon_is_configured_with_its_roles_bucket_and_cluster(all_operators):
    t = all_operators.template("capacity")
    _, props = _addons(t)[INFERENCE]
    config = json.loads(_render(props["ConfigurationValues"]))
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    (bucket_id, _), = [(lid, p) for lid, p in resources(t, "AWS::S3::Bucket")
                       if p.get("BucketName", "").startswith("hyperpod-tls-")]
    assert config["tlsCertificateS3Bucket"] == f"<{bucket_id}>"
    assert config["hyperpodClusterArn"] == f"<{hyperpod}.ClusterArn>"
    assert config["alb"]["serviceAccount"]["create"] is True
    assert props["AddonVersion"] == "v1.0.0-eksbuild.1"
    assert "PodIdentityAssociations" not in props


def test_inference_addon_waits_for_nodes_cert_manager_csi_drivers_and_metrics_server(all_operators):
    t = all_operators.template("capacity")
    found = _addons(t)
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    assert {k: found[k][1]["AddonVersion"] for k in ("aws-mountpoint-s3-csi-driver", "aws-fsx-csi-driver",
                                                     "metrics-server")} == {
        "aws-mountpoint-s3-csi-driver": "v1.14.1-eksbuild.1", "aws-fsx-csi-driver": "v1.6.0-eksbuild.1",
        "metrics-server": "v0.7.2-eksbuild.4"}
    prerequisites = {found[k][0] for k in ("cert-manager", "aws-mountpoint-s3-csi-driver", "aws-fsx-csi-driver",
                                           "metrics-server")}
    assert prerequisites | {hyperpod} <= _depends(t, found[INFERENCE][0])
    for name in ("aws-mountpoint-s3-csi-driver", "aws-fsx-csi-driver", "metrics-server"):
        assert hyperpod in _depends(t, found[name][0]), name


def test_tls_bucket_is_named_encrypted_private_tls_only_and_logged(all_operators):
    t = all_operators.template("capacity")
    (bucket_id, bucket), = [(lid, p) for lid, p in resources(t, "AWS::S3::Bucket")
                            if p.get("BucketName", "").startswith("hyperpod-tls-")]
    assert bucket["BucketName"] == "hyperpod-tls-acme-111111111111-us-east-1"
    assert bucket["BucketEncryption"] == {"ServerSideEncryptionConfiguration": [
        {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "BlockPublicPolicy": True, "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    logs = bucket["LoggingConfiguration"]
    assert logs["LogFilePrefix"] == "tls-bucket/" and "Ref" in logs["DestinationBucketName"]
    (policy,) = [p for _, p in resources(t, "AWS::S3::BucketPolicy") if p["Bucket"] == {"Ref": bucket_id}]
    (deny,) = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} and deny["Action"] == "s3:*"


def _grants(statements: list[dict]) -> set[tuple[str, str, str, str]]:
    def listed(v):
        return [v] if isinstance(v, str) else v
    return {(s["Effect"], a, r, json.dumps(s.get("Condition"), sort_keys=True))
            for s in statements for a in listed(s["Action"]) for r in listed(s["Resource"])}


def test_inference_roles_permissions(all_operators):
    t = all_operators.template("capacity")
    found = _addons(t)
    config = json.loads(_render(found[INFERENCE][1]["ConfigurationValues"]))

    def statements(arn: str) -> list[dict]:
        role_id = arn.strip("<>").split(".")[0]
        return [s for _, p in resources(t, "AWS::IAM::Policy") if {"Ref": role_id} in p["Roles"]
                for s in p["PolicyDocument"]["Statement"]]

    execution = statements(config["executionRoleArn"])
    (tls,) = execution
    assert sorted(tls["Action"]) == ["s3:DeleteObject", "s3:GetObject", "s3:PutObject", "s3:PutObjectTagging"]
    assert _render(tls["Resource"]).endswith(".Arn>/*")
    keda = statements(config["keda"]["auth"]["aws"]["irsa"]["roleArn"])
    assert sorted(a for s in keda for a in s["Action"]) == sorted([
        "aps:GetLabels", "aps:GetMetricMetadata", "aps:GetSeries", "aps:QueryMetrics",
        "cloudwatch:GetMetricData", "cloudwatch:GetMetricStatistics", "cloudwatch:ListMetrics"])
    alb = statements(config["alb"]["serviceAccount"]["roleArn"])
    shipped = json.loads((Path(__file__).resolve().parents[2] / "hyperpod_gov" / "assets" /
                          "aws-load-balancer-controller-iam-policy-v2.13.0.json").read_text())
    assert _grants(alb) == _grants(shipped["Statement"])  # CDK merges statements; the grants are the file's
    mountpoint = statements(_render(found["aws-mountpoint-s3-csi-driver"][1]["ServiceAccountRoleArn"]))
    assert sorted(a for s in mountpoint for a in listed(s["Action"])) == ["s3:GetObject", "s3:ListBucket"]
    assert all(s["Condition"] == {"StringEquals": {"aws:ResourceAccount": "111111111111"}} for s in mountpoint)


def listed(value) -> list:
    return value if isinstance(value, list) else [value]


MOUNTPOINT_READS = [
    ("s3:GetObject", "arn:aws:s3:::team-a-models/llm/mistral/model.safetensors", "111111111111", "Allow"),
    ("s3:ListBucket", "arn:aws:s3:::team-a-models", "111111111111", "Allow"),
    # outside the granted prefix, a bucket granted to a team that may not serve, any other bucket of the account
    ("s3:GetObject", "arn:aws:s3:::team-a-models/secrets/key.pem", "111111111111", "ImplicitDeny"),
    ("s3:GetObject", "arn:aws:s3:::team-b-data/anything", "111111111111", "ImplicitDeny"),
    ("s3:ListBucket", "arn:aws:s3:::team-b-data", "111111111111", "ImplicitDeny"),
    ("s3:GetObject", "arn:aws:s3:::acme-payroll/2026/december.csv", "111111111111", "ImplicitDeny"),
    ("s3:ListBucket", "arn:aws:s3:::acme-payroll", "111111111111", "ImplicitDeny"),
    # a bucket of that name in another account
    ("s3:GetObject", "arn:aws:s3:::team-a-models/llm/model.safetensors", "999999999999", "ImplicitDeny"),
    ("s3:PutObject", "arn:aws:s3:::team-a-models/llm/model.safetensors", "111111111111", "ImplicitDeny"),
]


@pytest.mark.parametrize("action,resource,account,expected", MOUNTPOINT_READS)
def test_the_mountpoint_role_reads_only_the_model_prefixes_of_inference_teams(all_operators, action, resource,
                                                                               account, expected):
    t = all_operators.template("capacity")
    role_id = _render(_addons(t)["aws-mountpoint-s3-csi-driver"][1]["ServiceAccountRoleArn"]).strip("<>").split(".")[0]
    policy = {"Statement": [s for _, p in resources(t, "AWS::IAM::Policy") if {"Ref": role_id} in p["Roles"]
                            for s in p["PolicyDocument"]["Statement"]]}
    assert not t["Resources"][role_id]["Properties"].get("ManagedPolicyArns")  # no managed policy widens it
    request = aws_request(action, resource, principal="arn:aws:sts::111111111111:assumed-role/mp/s",
                          resource_account=account)
    assert evaluate(policy, request) == expected


def test_private_subnets_are_tagged_for_internal_load_balancers(all_operators):
    # The new VPC's private subnets carry the tag the load balancer controller picks internal subnets by (CDK's
    # Vpc adds it to every private subnet).
    t = all_operators.template("capacity")
    subnets = list(resources(t, "AWS::EC2::Subnet"))
    tagged = {lid for lid, p in subnets if {"Key": "kubernetes.io/role/internal-elb", "Value": "1"} in p["Tags"]}
    private = {lid for lid, p in subnets if {"Key": "aws-cdk:subnet-type", "Value": "Private"} in p["Tags"]}
    assert private and tagged == private


def test_fsx_csi_addon_is_created_once_per_scope():
    # Another feature that needs the FSx CSI driver calls the same function: one add-on, one role.
    from aws_cdk import Environment, Stack, aws_eks_v2 as eks
    from aws_cdk.assertions import Template

    from hyperpod_gov.constructs.operators import fsx_csi_addon
    from tests.synth_helpers import minimal_app

    stack = Stack(minimal_app(), "Fsx", env=Environment(account="111111111111", region="us-east-1"))
    cluster = eks.Cluster(stack, "Eks", version=eks.KubernetesVersion.of("1.33"))
    arn = "arn:aws:eks:us-east-1:111111111111:cluster/ml-eks"
    first = fsx_csi_addon(stack, cluster, "v1.6.0-eksbuild.1", account="111111111111", eks_arn=arn)
    assert fsx_csi_addon(stack, cluster, "v1.6.0-eksbuild.1", account="111111111111", eks_arn=arn) is first
    template = Template.from_stack(stack).to_json()
    assert [p["AddonVersion"] for _, p in resources(template, "AWS::EKS::Addon")] == ["v1.6.0-eksbuild.1"]
    assert len(list(resources(template, "AWS::IAM::OIDCProvider"))) == 1


def test_one_fsx_csi_driver_serves_the_inference_operator_and_the_shared_file_system(all_operators):
    capacity = all_operators.template("capacity")
    drivers = [p for _, p in resources(capacity, "AWS::EKS::Addon") if p["AddonName"] == "aws-fsx-csi-driver"]
    assert [d["AddonVersion"] for d in drivers] == ["v1.6.0-eksbuild.1"]
    assert list(resources(capacity, "AWS::FSx::FileSystem"))


def test_two_fsx_csi_driver_versions_are_refused():
    from hyperpod_gov.spec import SpecError

    data = copy.deepcopy(BASE)
    data["cluster"]["operators"] = ["inference"]
    data["cluster"]["sharedStorage"] = {"fsxLustre": {"storageCapacityGiB": 1200, "perUnitStorageThroughput": 125}}
    with pytest.raises(SpecError, match=r"HPG-D008 cluster.sharedStorage.fsxLustre.csiDriverVersion: differs from "
                                        r"cluster.addonVersions.fsxCsiDriver"):
        parse_spec(data, today=TODAY)
