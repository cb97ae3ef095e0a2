"""cluster.sharedStorage in the templates: the FSx for Lustre file system, its key, its security group (Lustre
from the HyperPod nodes only), the FSx CSI driver add-on and its Pod Identity role, the team volumes filled with
the file system's attributes; cfn-lint clean, cdk-nag clean (synth fails on an unacknowledged finding)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.synth_helpers import cfn_lint, resources, synthesize


def storage_spec() -> dict:
    d = copy.deepcopy(BASE)
    d["cluster"]["instanceGroups"].append({"name": "b-reserved", "instanceType": "ml.g5.8xlarge", "count": 2,
                                           "dedicatedTo": "team-b"})
    d["teams"][1]["quota"] = [{"instanceType": "ml.g5.8xlarge", "count": 3}]
    d["cluster"]["sharedStorage"] = {"fsxLustre": {"storageCapacityGiB": 2400, "perUnitStorageThroughput": 250}}
    return d


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return synthesize(parse_spec(storage_spec(), today=TODAY), tmp_path_factory.mktemp("storage"))


def _one(template: dict, kind: str) -> tuple[str, dict]:
    (found,) = list(resources(template, kind))
    return found


def _lid(ref: dict) -> str:
    return ref.get("Ref") or ref["Fn::GetAtt"][0]


def test_the_file_system_is_lustre_in_the_first_private_subnet_encrypted_with_its_own_key(synth):
    cap = synth.template("capacity")
    lid, fs = _one(cap, "AWS::FSx::FileSystem")
    assert fs["FileSystemType"] == "LUSTRE" and fs["StorageCapacity"] == 2400
    assert fs["LustreConfiguration"]["DeploymentType"] == "PERSISTENT_2"
    assert fs["LustreConfiguration"]["PerUnitStorageThroughput"] == 250
    assert fs["SubnetIds"] == [{"Ref": "NetworkPrivateSubnet1Subnet80FBBF93"}]  # the first AZ's, always
    key = cap["Resources"][_lid(fs["KmsKeyId"])]
    assert key["Type"] == "AWS::KMS::Key" and key["Properties"]["EnableKeyRotation"] is True
    assert cap["Resources"][lid]["DeletionPolicy"] == "Retain"


def _rules(template: dict, sg_lid: str, kind: str) -> list[dict]:
    """Every ingress (or egress) rule of one security group, inline or as its own resource."""
    sg = template["Resources"][sg_lid]["Properties"]
    inline = sg.get("SecurityGroupIngress" if kind == "ingress" else "SecurityGroupEgress", [])
    own = [r for _, r in resources(template, "AWS::EC2::SecurityGroupIngress" if kind == "ingress"
                                   else "AWS::EC2::SecurityGroupEgress") if _lid(r["GroupId"]) == sg_lid]
    return inline + own


def test_the_file_systems_security_group_admits_lustre_from_the_nodes_and_itself_only(synth):
    cap = synth.template("capacity")
    _, fs = _one(cap, "AWS::FSx::FileSystem")
    (sg_ref,) = fs["SecurityGroupIds"]
    sg = _lid(sg_ref)
    nodes = next(lid for lid, _ in resources(cap, "AWS::EC2::SecurityGroup") if "NodeSecurityGroup" in lid)
    ingress = _rules(cap, sg, "ingress")
    got = sorted((_lid(r["SourceSecurityGroupId"]), r["IpProtocol"], r["FromPort"], r["ToPort"]) for r in ingress)
    assert got == sorted((peer, "tcp", lo, hi) for peer in (nodes, sg) for lo, hi in ((988, 988), (1018, 1023)))
    assert all("CidrIp" not in r for r in ingress)
    egress = _rules(cap, sg, "egress")
    assert sorted((_lid(r["DestinationSecurityGroupId"]), r["FromPort"], r["ToPort"]) for r in egress) == sorted(
        (peer, lo, hi) for peer in (nodes, sg) for lo, hi in ((988, 988), (1018, 1023)))
    # The nodes accept the file servers' Lustre connections back.
    back = [r for r in _rules(cap, nodes, "ingress") if "SourceSecurityGroupId" in r
            and _lid(r["SourceSecurityGroupId"]) == sg]
    assert sorted((r["FromPort"], r["ToPort"]) for r in back) == [(988, 988), (1018, 1023)]


def test_the_csi_driver_add_on_is_pinned_with_a_role_that_describes_this_file_system_only(synth):
    cap = synth.template("capacity")
    addon = next(r for _, r in resources(cap, "AWS::EKS::Addon") if r["AddonName"] == "aws-fsx-csi-driver")
    assert addon["AddonVersion"] == "v1.9.0-eksbuild.1"
    (association,) = addon["PodIdentityAssociations"]
    assert association["ServiceAccount"] == "fsx-csi-controller-sa"
    role_lid = _lid(association["RoleArn"])
    role = cap["Resources"][role_lid]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert "aws:SourceArn" in trust["Condition"]["ArnEquals"]
    assert "ManagedPolicyArns" not in role
    policies = [r for _, r in resources(cap, "AWS::IAM::Policy")
                if any(_lid(x) == role_lid for x in r["Roles"])]
    statements = [s for p in policies for s in p["PolicyDocument"]["Statement"]]
    fs_lid, _ = _one(cap, "AWS::FSx::FileSystem")
    assert statements == [{"Action": "fsx:DescribeFileSystems", "Effect": "Allow",
                           "Resource": {"Fn::GetAtt": [fs_lid, "ResourceARN"]}}]


def test_team_volumes_name_the_created_file_system(synth):
    text = json.dumps(synth.templates)
    assert "hyperpod-gov:fsx-lustre" not in text  # every placeholder filled
    volumes = [json.dumps(t) for name, t in synth.templates.items() if "teams" in name]
    assert sum(v.count("ExportsOutputFnGetAttSharedStorage") for v in volumes) >= 2
    assert any("LustreMountName" in v and "/team-a" in v for v in volumes)


def test_templates_pass_cfn_lint(synth):
    for path in synth.template_files():
        matches = cfn_lint(Path(path), "us-east-1")
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
