"""The capacity stack: fine-grained assertions on the properties that matter."""

from __future__ import annotations

import ipaddress
import json

import pytest

from tests.synth_helpers import minimal_app, resources


def one(template, type_):
    found = list(resources(template, type_))
    assert len(found) == 1, [i for i, _ in found]
    return found[0][1]


def addons(template) -> dict[str, dict]:
    return {p["AddonName"]: p for _, p in resources(template, "AWS::EKS::Addon")}


def test_enterprise_api_endpoint_is_private(enterprise):
    vpc_config = one(enterprise.template("capacity"), "AWS::EKS::Cluster")["ResourcesVpcConfig"]
    assert vpc_config["EndpointPrivateAccess"] is True
    assert vpc_config["EndpointPublicAccess"] is False
    assert "PublicAccessCidrs" not in vpc_config


def test_startup_public_endpoint_is_limited_to_admin_cidrs(startup):
    vpc_config = one(startup.template("capacity"), "AWS::EKS::Cluster")["ResourcesVpcConfig"]
    assert vpc_config["EndpointPublicAccess"] is True
    assert vpc_config["PublicAccessCidrs"] == ["203.0.113.0/24"]


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_cluster_authentication_encryption_and_logging(example, request):
    t = request.getfixturevalue(example).template("capacity")
    cluster = one(t, "AWS::EKS::Cluster")
    assert cluster["AccessConfig"]["AuthenticationMode"] == "API"  # no aws-auth ConfigMap as a second way in
    assert cluster["Version"] == "1.33"
    key_ref = cluster["EncryptionConfig"][0]["Provider"]["KeyArn"]["Fn::GetAtt"][0]
    assert cluster["EncryptionConfig"][0]["Resources"] == ["secrets"]
    key = t["Resources"][key_ref]
    assert key["Type"] == "AWS::KMS::Key" and key["Properties"]["EnableKeyRotation"] is True
    enabled = {e["Type"] for e in cluster["Logging"]["ClusterLogging"]["EnabledTypes"]}
    assert enabled == {"api", "audit", "authenticator", "controllerManager", "scheduler"}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_vpc_cni_enforces_network_policies_in_strict_mode(example, request):
    cni = addons(request.getfixturevalue(example).template("capacity"))["vpc-cni"]
    # strict: a new pod has no traffic until its policies are in place (no default-allow window at start)
    assert json.loads(cni["ConfigurationValues"]) == {"enableNetworkPolicy": "true",
                                                      "env": {"NETWORK_POLICY_ENFORCING_MODE": "strict"}}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_core_addons_are_installed(example, request):
    names = set(addons(request.getfixturevalue(example).template("capacity")))
    assert {"vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent", "amazon-cloudwatch-observability"} <= names


def _version(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.lstrip("v").split("-")[0].split("."))


def test_observability_addon_collects_kueue_metrics_with_its_own_role(enterprise):
    t = enterprise.template("capacity")
    obs = addons(t)["amazon-cloudwatch-observability"]
    assert _version(obs["AddonVersion"]) >= (2, 4, 0)
    kubernetes = json.loads(obs["ConfigurationValues"])["agent"]["config"]["logs"]["metrics_collected"]["kubernetes"]
    assert kubernetes == {"kueue_container_insights": True, "enhanced_container_insights": True}
    (assoc,) = obs["PodIdentityAssociations"]
    assert assoc["ServiceAccount"] == "cloudwatch-agent"
    role = t["Resources"][assoc["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
    assert [json.dumps(p) for p in role["ManagedPolicyArns"]] == [
        json.dumps({"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":iam::aws:policy/CloudWatchAgentServerPolicy"]]})
    ]
    statement = role["AssumeRolePolicyDocument"]["Statement"][0]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == {
        "StringEquals": {"aws:SourceAccount": "111111111111"},
        "ArnEquals": {"aws:SourceArn": "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks"},
    }


def _helm_charts(template) -> list[dict]:
    return [p for _, p in resources(template, "Custom::AWSCDK-EKS-HelmChart")]


def test_task_governance_mode_installs_the_addon_and_not_kueue(enterprise):
    t = enterprise.template("capacity")
    tg = addons(t)["amazon-sagemaker-hyperpod-taskgovernance"]
    assert tg["AddonVersion"] == "v1.6.0-eksbuild.1"
    assert [c["Release"] for c in _helm_charts(t)] == ["hyperpod-dependencies"]


def test_kueue_mode_installs_the_kueue_chart_and_not_the_addon(startup):
    t = startup.template("capacity")
    assert "amazon-sagemaker-hyperpod-taskgovernance" not in addons(t)
    (kueue,) = [c for c in _helm_charts(t) if c["Release"] == "kueue"]
    assert kueue["Repository"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert kueue["Version"].startswith("0.19.")
    config = json.loads(json.loads(kueue["Values"])["managerConfig"]["controllerManagerConfigYaml"])
    assert config["fairSharing"]["enable"] is True


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_instance_groups_match_the_spec(example, request):
    synthesized = request.getfixturevalue(example)
    cluster = one(synthesized.template("capacity"), "AWS::SageMaker::Cluster")
    assert cluster["NodeRecovery"] == "Automatic"
    assert "ClusterArn" in cluster["Orchestrator"]["Eks"]
    groups = {g["InstanceGroupName"]: g for g in cluster["InstanceGroups"]}
    assert set(groups) == {g.name for g in synthesized.spec.cluster.instance_groups}
    for spec_group in synthesized.spec.cluster.instance_groups:
        g = groups[spec_group.name]
        assert (g["InstanceType"], g["InstanceCount"]) == (spec_group.instance_type, spec_group.count)
        assert g["LifeCycleConfig"]["OnCreate"] == "on_create.sh"
        if spec_group.volume_size_gb:
            assert g["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": spec_group.volume_size_gb}}]
        if spec_group.instance_type.startswith("ml.m5"):
            assert "OnStartDeepHealthChecks" not in g
        else:
            assert g["OnStartDeepHealthChecks"] == ["InstanceStress", "InstanceConnectivity"]


def test_hyperpod_waits_for_the_dependencies_chart_and_the_cni(enterprise):
    t = enterprise.template("capacity")
    (cluster_id, _), = resources(t, "AWS::SageMaker::Cluster")
    depends = set(t["Resources"][cluster_id]["DependsOn"])
    helm = {i for i, p in resources(t, "Custom::AWSCDK-EKS-HelmChart") if p["Release"] == "hyperpod-dependencies"}
    cni = {i for i, p in resources(t, "AWS::EKS::Addon") if p["AddonName"] == "vpc-cni"}
    assert helm <= depends and cni <= depends


def test_lifecycle_bucket_is_sagemaker_prefixed_encrypted_private_and_tls_only(enterprise):
    t = enterprise.template("capacity")
    buckets = dict(resources(t, "AWS::S3::Bucket"))
    # the lifecycle bucket (the other named one: the inference operator's TLS bucket, hyperpod-tls-...)
    (bucket_id, bucket), = [(i, b) for i, b in buckets.items() if str(b.get("BucketName")).startswith("sagemaker-")]
    assert bucket["BucketName"] == "sagemaker-acme-ml-111111111111-us-east-1"
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]["ServerSideEncryptionByDefault"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    policy = next(p for _, p in resources(t, "AWS::S3::BucketPolicy") if p["Bucket"] == {"Ref": bucket_id})
    deny = [s for s in policy["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
    assert any(s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in deny)
    cluster = one(t, "AWS::SageMaker::Cluster")
    uri = cluster["InstanceGroups"][0]["LifeCycleConfig"]["SourceS3Uri"]
    assert json.dumps(uri).count(bucket_id) == 1


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_no_security_group_allows_ingress_from_anywhere(example, request):
    t = request.getfixturevalue(example).template("capacity")
    rules = [r for _, sg in resources(t, "AWS::EC2::SecurityGroup") for r in sg.get("SecurityGroupIngress", [])]
    rules += [p for _, p in resources(t, "AWS::EC2::SecurityGroupIngress")]
    assert rules
    for rule in rules:
        if "CidrIp" in rule:
            assert ipaddress.ip_network(rule["CidrIp"]).prefixlen > 0, rule
        assert rule.get("CidrIpv6") not in ("::/0",), rule


def test_interface_endpoints_are_private_and_open_to_the_vpc_on_443_only(enterprise):
    t = enterprise.template("capacity")
    endpoints = [p for _, p in resources(t, "AWS::EC2::VPCEndpoint")]
    services = sorted(json.dumps(p["ServiceName"]).split(".")[-1].strip('"]}') for p in endpoints)
    # 10 AWS APIs, S3 as a gateway and as an interface endpoint, KMS and Secrets Manager (the example's identities
    # name keys and secrets: plan.derive_cluster.data_endpoints)
    assert len(endpoints) == 14
    for p in endpoints:
        if p.get("VpcEndpointType") == "Interface":
            assert p["PrivateDnsEnabled"] is True
    sg = next(sg for i, sg in resources(t, "AWS::EC2::SecurityGroup") if i.startswith("NetworkEndpointSecurityGroup"))
    assert sg["SecurityGroupIngress"] == [
        {"CidrIp": "10.192.0.0/16", "Description": "HTTPS from the VPC", "FromPort": 443, "IpProtocol": "tcp",
         "ToPort": 443}
    ]
    assert "s3" in " ".join(services)


def test_pods_reach_s3_on_vpc_addresses_that_their_network_policies_allow(enterprise):
    """S3 behind the gateway endpoint answers on public addresses, which the teams' default-deny egress blocks;
    the interface endpoint answers every resolver in the VPC with VPC addresses (allowed on 443)."""
    t = enterprise.template("capacity")
    s3 = [p for _, p in resources(t, "AWS::EC2::VPCEndpoint") if json.dumps(p["ServiceName"]).rstrip('"]}').endswith(".s3")]
    by_type = {p["VpcEndpointType"]: p for p in s3}
    assert set(by_type) == {"Gateway", "Interface"}
    interface = by_type["Interface"]
    assert interface["PrivateDnsEnabled"] is True
    assert interface["DnsOptions"] == {"PrivateDnsOnlyForInboundResolverEndpoint": "AllResolvers"}
    from hyperpod_gov.charts import render
    from hyperpod_gov.plan import build_plan

    plan = build_plan(enterprise.spec)
    for objects in render(plan).teams.values():
        allow = next(o for o in objects if o["metadata"]["name"] == "allow-vpc-https")
        assert allow["spec"]["egress"] == [{"to": [{"ipBlock": {"cidr": plan.network.cidr}}],
                                            "ports": [{"protocol": "TCP", "port": 443}]}]


def test_vpc_has_flow_logs(enterprise):
    flow = one(enterprise.template("capacity"), "AWS::EC2::FlowLog")
    assert flow["TrafficType"] == "ALL" and flow["ResourceType"] == "VPC"


def test_only_spec_admins_and_the_deployer_get_cluster_admin(enterprise):
    t = enterprise.template("capacity")
    admins = []
    for _, entry in resources(t, "AWS::EKS::AccessEntry"):
        policies = [p["PolicyArn"] for p in entry.get("AccessPolicies", [])]
        if any("AmazonEKSClusterAdminPolicy" in json.dumps(p) for p in policies):
            admins.append(entry["PrincipalArn"])
    literal = sorted(a for a in admins if isinstance(a, str))
    assert literal == sorted(enterprise.spec.cluster.admins)
    # The one non-literal admin is the kubectl handler's role, the deployment machinery itself.
    others = [a for a in admins if not isinstance(a, str)]
    assert len(others) == 1 and "KubectlProvider" in json.dumps(others)


def test_missing_dependencies_chart_is_a_warning_with_a_stable_id(startup, enterprise):
    assert any("hyperpod-gov:dependenciesChartMissing" in w or "dependenciesChart is not set" in w
               for w in startup.warnings)
    assert not any("dependenciesChart" in w for w in enterprise.warnings)


def test_kubectl_handler_runs_inside_the_vpc_for_the_private_endpoint(enterprise):
    t = enterprise.template("capacity")
    handlers = [p for i, p in resources(t, "AWS::Lambda::Function") if i.startswith("EksKubectlProviderHandler")]
    (handler,) = handlers
    subnets = json.dumps(handler["VpcConfig"]["SubnetIds"])
    assert "PrivateSubnet" in subnets and "PublicSubnet" not in subnets


def test_hyperpod_waits_for_the_lifecycle_scripts_to_be_uploaded(enterprise):
    """Instances run on_create.sh from S3 as they boot: the cluster must not exist before the upload finishes."""
    t = enterprise.template("capacity")
    (cluster_id, _), = resources(t, "AWS::SageMaker::Cluster")
    uploads = [i for i, _ in resources(t, "Custom::CDKBucketDeployment")]
    assert len(uploads) == 1
    assert uploads[0] in t["Resources"][cluster_id]["DependsOn"]


def test_flow_logs_are_encrypted_with_a_key_only_this_accounts_log_groups_use(enterprise):
    t = enterprise.template("capacity")
    (group,) = [p for _, p in resources(t, "AWS::Logs::LogGroup") if p.get("RetentionInDays") == 365
                and "KmsKeyId" in p]
    key = t["Resources"][group["KmsKeyId"]["Fn::GetAtt"][0]]["Properties"]
    assert key["EnableKeyRotation"] is True
    (logs,) = [s for s in key["KeyPolicy"]["Statement"] if s.get("Sid") == "CloudWatchLogsOfThisAccount"]
    assert ":log-group:*" in json.dumps(logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"])


def test_execution_role_network_interfaces_are_limited_to_the_clusters_vpc(enterprise):
    t = enterprise.template("capacity")
    statements = [s for _, p in resources(t, "AWS::IAM::Policy") for s in p["PolicyDocument"]["Statement"]
                  if s.get("Sid") == "ManageNodeNetworkInterfaces"]
    assert statements and all("ec2:Vpc" in s.get("Condition", {}).get("ArnEquals", {}) for s in statements)


@pytest.mark.parametrize("version", ["1.30", "1.34"])
def test_the_kubectl_layer_follows_the_clusters_kubernetes_version(version):
    """kubectl supports one minor version of skew: the handler's layer must be built for the cluster's version."""
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from hyperpod_gov.constructs.eks import kubectl_layer

    stack = cdk.Stack(minimal_app())
    kubectl_layer(stack, "Layer", version)
    (layer,) = Template.from_stack(stack).find_resources("AWS::Lambda::LayerVersion").values()
    assert f"kubectl {version}" in layer["Properties"]["Description"]
