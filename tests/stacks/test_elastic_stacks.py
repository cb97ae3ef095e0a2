"""The elastic-capacity example (examples/elastic.yaml, issue 57) synthesized whole: cfn-lint passes with the kept
warnings only, cdk-nag's AwsSolutions findings are each acknowledged with a reason (synth fails otherwise), the
cluster carries every elastic member, and every region hyperpod-gov creates clusters in has them in its
CloudFormation schema (cfn-lint's: one schema for all of them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cfnlint
import pytest

from hyperpod_gov.plan.fields import leaf_members
from hyperpod_gov.spec.cluster_options import CLUSTER_REGIONS
from tests.synth_helpers import cfn_lint, resources

# cfn-lint warnings every app keeps (tests/test_app_quality.py's KEPT_WARNINGS, docs/synth.md)
KEPT_WARNINGS = {"W3005", "W3010"}
ELASTIC_GROUP_MEMBERS = {"InstanceRequirements", "MinInstanceCount", "CapacityRequirements", "ScheduledUpdateConfig",
                         "AutoPatchConfig"}


def _cluster(elastic) -> dict[str, Any]:
    (cluster,) = [p for _, p in resources(elastic.template("capacity"), "AWS::SageMaker::Cluster")]
    return cluster


def test_every_elastic_template_passes_cfn_lint(elastic):
    files = elastic.template_files()
    assert len(files) == len(elastic.templates)
    for path in files:
        matches = cfn_lint(Path(path), elastic.spec.accounts.capacity.region)
        assert not [str(m) for m in matches if m.rule.id not in KEPT_WARNINGS], path.name


def test_cdk_nag_findings_of_the_elastic_app_are_acknowledged_one_by_one_with_a_reason(elastic):
    acks = {}
    for path in (elastic.out_dir / "cdk.out").glob("*.metadata.json"):
        for construct, entries in json.loads(path.read_text()).items():
            for entry in entries:
                if entry["type"] == "aws:cdk:acknowledged-rules":
                    acks.update({(construct, k): v for k, v in entry["data"].items()})
    assert acks
    for (construct, rule), reason in acks.items():
        assert rule.startswith(("AwsSolutions::AwsSolutions-", "CloudFormation-Validate::")), rule
        if "IAM4" in rule or "IAM5" in rule:
            assert "[" in rule, f"{construct}: {rule} acknowledges a whole rule, not one finding"
        assert len(reason) > 40, (construct, rule, reason)
    # nothing about the autoscaling role needed acknowledging: it names no wildcard (tests/security/test_trust.py)
    assert not [k for k in acks if "Autoscaling" in k[0]], [k for k in acks if "Autoscaling" in k[0]]


def test_the_elastic_cluster_carries_every_elastic_member(elastic):
    cluster = _cluster(elastic)
    assert cluster["AutoScaling"] == {"Mode": "Enable", "AutoScalerType": "Karpenter"}
    assert "Fn::GetAtt" in cluster["ClusterRole"]
    assert (cluster["NodeProvisioningMode"], cluster["NodeRecovery"]) == ("Continuous", "Automatic")
    groups = {g["InstanceGroupName"]: g for g in cluster["InstanceGroups"]}
    assert set().union(*map(set, groups.values())) >= ELASTIC_GROUP_MEMBERS
    # AWS: an autoscaled group starts at 0 and runs no deep health checks; a flexible group names no InstanceType
    assert {n: g["InstanceCount"] for n, g in groups.items()} == {"burst": 0, "gpu-base": 6, "gpu-elastic": 0}
    assert "OnStartDeepHealthChecks" not in groups["gpu-elastic"] and "OnStartDeepHealthChecks" in groups["gpu-base"]
    assert "InstanceType" not in groups["burst"]
    assert groups["burst"]["InstanceRequirements"] == {"InstanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"]}


def _schemas() -> dict[str, str]:
    """Region -> the resource schema file cfn-lint maps its AWS::SageMaker::Cluster to."""
    base = Path(cfnlint.__file__).parent / "data" / "schemas" / "providers"
    out = {}
    for provider in sorted(base.glob("*.json")):
        ref = json.loads(provider.read_text()).get("AWS::SageMaker::Cluster")
        if ref:
            out[provider.stem] = ref
    return out


def _declared(schema: dict[str, Any], node: dict[str, Any], path: list[str]) -> bool:
    """Whether the member at ``path`` below ``node`` (a schema object) is declared, following $refs and lists."""
    while "$ref" in node or node.get("type") == "array":
        node = schema["definitions"][node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node["items"]
    if not path:
        return True
    props = node.get("properties") or {}
    return path[0] in props and _declared(schema, props[path[0]], path[1:])


@pytest.mark.parametrize("region", sorted(CLUSTER_REGIONS))
def test_every_region_hyperpod_gov_creates_clusters_in_declares_every_elastic_member(elastic, region):
    schemas = _schemas()
    assert len(set(schemas.values())) == 1, "the regions' schemas differ: docs/elastic.md says they are one"
    path = Path(cfnlint.__file__).parent / "data" / "schemas" / "resources" / f"{schemas[region]}.json"
    schema = json.loads(path.read_text())
    cluster = _cluster(elastic)
    members = [m for m in leaf_members({k: v for k, v in cluster.items() if k != "InstanceGroups"})
               if "Fn::" not in m and not m.startswith(("Tags", "VpcConfig", "Orchestrator"))]
    for group in cluster["InstanceGroups"]:
        members += [f"InstanceGroups.{m}" for m in leaf_members(group) if "Fn::" not in m]
    members = [m.split(".Fn::", 1)[0] for m in members]
    undeclared = sorted({m for m in members if not _declared(schema, {"properties": schema["properties"]},
                                                                   m.split("."))})
    assert undeclared == [], f"{region}: {undeclared}"
    assert {"AutoScaling", "ClusterRole", "NodeProvisioningMode"} <= set(schema["properties"])


def test_a_member_no_schema_declares_is_found():
    path = Path(cfnlint.__file__).parent / "data" / "schemas" / "resources" / f"{_schemas()['us-east-1']}.json"
    schema = json.loads(path.read_text())
    root = {"properties": schema["properties"]}
    assert _declared(schema, root, ["InstanceGroups", "AutoPatchConfig", "PatchingStrategy"])
    assert not _declared(schema, root, ["InstanceGroups", "AutoPatchConfig", "DrainPolicy"])  # API-only (botocore)
    assert not _declared(schema, root, ["InstanceGroups", "InstanceRequirements", "DesiredInstanceTypes"])
