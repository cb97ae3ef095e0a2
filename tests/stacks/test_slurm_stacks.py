"""What synth emits for a Slurm cluster (docs/slurm-stacks.md): the capacity stack alone, the HyperPod cluster with
Orchestrator.Slurm and each group's SlurmConfig, no EKS resource, the FSx file system, the lifecycle scripts with
the governance files uploaded (and written under slurm/), cfn-lint and cdk-nag clean, deterministic."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.slurm.render import files
from hyperpod_gov.spec import load_spec, parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import cfn_lint, minimal_app, resources, snapshot_parts, synthesize
from tests.table_rows import unreached
from tests.test_app_quality import KEPT_WARNINGS

EXAMPLES_SLURM = ("startup-slurm", "enterprise-slurm")


@pytest.fixture(scope="module")
def slurm_synth(tmp_path_factory):
    """Both Slurm examples synthesized once for this module (cdk-nag runs as part of it)."""
    out = {}
    for name in EXAMPLES_SLURM:
        spec = load_spec(EXAMPLES / f"{name}.yaml", today=TODAY)
        out[name] = synthesize(spec, tmp_path_factory.mktemp(name))
    return out


@pytest.mark.parametrize("name", EXAMPLES_SLURM)
def test_every_planned_table_row_reaches_the_templates(slurm_synth, name):
    """Each field-table row the Slurm examples plan a value for is in the templates (``tests/table_rows.py``)."""
    synthesized = slurm_synth[name]
    assert unreached(build_plan(synthesized.spec), synthesized.templates) == {}


def _capacity(synthesized) -> dict:
    return synthesized.template("capacity")


def _cluster(template: dict) -> dict:
    (found,) = [p for _, p in resources(template, "AWS::SageMaker::Cluster")]
    return found


# --- the stacks --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES_SLURM)
def test_a_slurm_spec_has_the_capacity_stack_only(slurm_synth, example):
    synthesized = slurm_synth[example]
    assert sorted(synthesized.templates) == [f"{synthesized.spec.name}-capacity"]
    stacks = build_plan(synthesized.spec).stacks
    assert stacks.governance is None and stacks.monitoring is None
    assert stacks.all_names == (f"{synthesized.spec.name}-capacity",)


@pytest.mark.parametrize("example", EXAMPLES_SLURM)
def test_templates_match_snapshot(slurm_synth, example, snapshot_json):
    for name, part in snapshot_parts(slurm_synth[example].templates, {}).items():
        assert part == snapshot_json(name=name), name


# --- the cluster -------------------------------------------------------------------------------------------------


def test_the_cluster_has_the_slurm_orchestrator_with_the_specs_strategy_and_database(slurm_synth):
    enterprise = _cluster(_capacity(slurm_synth["enterprise-slurm"]))
    assert enterprise["Orchestrator"] == {"Slurm": {
        "SlurmConfigStrategy": "Merge",
        "AccountingDatabase": {"Endpoint": "slurm-acct.cluster-c1a2b3c4d5e6.us-east-1.rds.amazonaws.com",
                               "SecretArn": "arn:aws:secretsmanager:us-east-1:111111111111:secret:slurm-acct-AbCdEf",
                               "Port": 3306}}}
    assert enterprise["NodeProvisioningMode"] == "Continuous"
    startup = _cluster(_capacity(slurm_synth["startup-slurm"]))
    assert startup["Orchestrator"] == {"Slurm": {"SlurmConfigStrategy": "Managed"}}  # the default, no database


def test_each_group_carries_its_node_type_and_a_compute_groups_partition(slurm_synth):
    groups = {g["InstanceGroupName"]: g for g in _cluster(_capacity(slurm_synth["enterprise-slurm"]))["InstanceGroups"]}
    assert {name: g["SlurmConfig"] for name, g in groups.items()} == {
        "accelerated-worker": {"NodeType": "Compute", "PartitionNames": ["p5"]},
        "controller": {"NodeType": "Controller"},
        "login": {"NodeType": "Login"},
        "system": {"NodeType": "Compute", "PartitionNames": ["cpu"]},
    }
    assert all("KubernetesConfig" not in g for g in groups.values())
    assert groups["accelerated-worker"]["InstanceCount"] == 10
    assert groups["accelerated-worker"]["InstanceStorageConfigs"] == [{"EbsVolumeConfig": {"VolumeSizeInGB": 500}}]
    assert {g["LifeCycleConfig"]["OnCreate"] for g in groups.values()} == {"on_create.sh"}


@pytest.mark.parametrize("example", EXAMPLES_SLURM)
def test_no_eks_resource_add_on_chart_or_endpoint(slurm_synth, example):
    template = _capacity(slurm_synth[example])
    kinds = {r["Type"] for r in template["Resources"].values()}
    assert not {k for k in kinds if k.startswith(("AWS::EKS::", "Custom::AWSCDK-EKS"))}, kinds
    assert not {k for k in kinds if "Kubectl" in k or "TaskGovernance" in k or k == "AWS::SageMaker::ClusterPolicy"}
    assert "Eks" not in _cluster(template)["Orchestrator"]
    services = json.dumps([p["ServiceName"] for _, p in resources(template, "AWS::EC2::VPCEndpoint")])
    assert ".eks" not in services and ".eks-auth" not in services
    assert ".sagemaker.api" in services and ".ssm" in services  # the endpoints that apply stay


def test_the_execution_role_has_no_eks_node_permissions(slurm_synth):
    template = _capacity(slurm_synth["enterprise-slurm"])
    policies = json.dumps([p for _, p in resources(template, "AWS::IAM::Policy")
                           if "ExecutionRole" in json.dumps(p["Roles"])])
    assert "ecr:BatchGetImage" in policies  # jobs pull containers
    for action in ("ec2:CreateNetworkInterface", "eks-auth:AssumeRoleForPodIdentity"):
        assert action not in policies


def test_the_nodes_admit_only_each_other_and_lustre_from_the_file_system(slurm_synth):
    template = _capacity(slurm_synth["startup-slurm"])
    (nodes,) = [lid for lid, _ in resources(template, "AWS::EC2::SecurityGroup") if lid.startswith("HyperPodNode")]
    sources = set()
    for _, rule in resources(template, "AWS::EC2::SecurityGroupIngress"):
        if rule["GroupId"] == {"Fn::GetAtt": [nodes, "GroupId"]}:
            sources.add(rule["SourceSecurityGroupId"]["Fn::GetAtt"][0])
    (fsx_sg,) = [lid for lid, _ in resources(template, "AWS::EC2::SecurityGroup") if lid.startswith("SharedStorage")]
    assert sources == {nodes, fsx_sg}


def test_the_file_system_is_created_without_the_eks_csi_driver(slurm_synth):
    template = _capacity(slurm_synth["enterprise-slurm"])
    (fs,) = [p for _, p in resources(template, "AWS::FSx::FileSystem")]
    assert fs["StorageCapacity"] == 4800 and fs["LustreConfiguration"]["PerUnitStorageThroughput"] == 250
    assert not list(resources(template, "AWS::EKS::Addon"))


# --- the lifecycle scripts and the governance files -------------------------------------------------------------


def _uploaded(synthesized) -> dict[str, str]:
    """Every object the lifecycle bucket receives (key -> text), read from the cloud assembly's assets: the
    deployment's sources, in its SourceObjectKeys order."""
    template = _capacity(synthesized)
    (deploy,) = [p for _, p in resources(template, "Custom::CDKBucketDeployment")]
    assembly = synthesized.out_dir / "cdk.out"
    assets = json.loads(next(assembly.glob("*capacity.assets.json")).read_text())["files"]
    out = {}
    for key in deploy["SourceObjectKeys"]:
        digest = key.removesuffix(".zip")
        path = assembly / assets[digest]["source"]["path"]
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            out[file.relative_to(path).as_posix()] = file.read_text()
    return out


@pytest.mark.parametrize("example", EXAMPLES_SLURM)
def test_the_governance_files_are_uploaded_with_the_lifecycle_scripts(slurm_synth, example):
    synthesized = slurm_synth[example]
    rendered = files(build_plan(synthesized.spec))
    assert {"apply.sh", "accounting.sh", "posix.sh"} <= set(rendered)
    uploaded = _uploaded(synthesized)
    assert {k.removeprefix("slurm/"): v for k, v in uploaded.items() if k.startswith("slurm/")} == rendered
    assert {"on_create.sh", "node_type.py", "setup_accounting.sh", "provisioning_parameters.json"} <= set(uploaded)
    assert "slurm/apply.sh" in uploaded["on_create.sh"]


def _parameters(synthesized) -> dict:
    """provisioning_parameters.json as the deployment writes it: each marker replaced with its value as a JSON
    string (here the attribute it names, ``<logical id>.<attribute>``)."""
    params = _uploaded(synthesized)["provisioning_parameters.json"]
    (deploy,) = [p for _, p in resources(_capacity(synthesized), "Custom::CDKBucketDeployment")]
    for markers in deploy["SourceMarkers"]:
        for marker, value in markers.items():
            (_, [_, attribute, _]) = value["Fn::Join"]
            params = params.replace(marker, json.dumps(".".join(attribute["Fn::GetAtt"])))
    return json.loads(params)


def test_the_provisioning_parameters_name_the_groups_and_the_file_system(slurm_synth):
    synthesized = slurm_synth["enterprise-slurm"]
    (fs,) = [lid for lid, _ in resources(_capacity(synthesized), "AWS::FSx::FileSystem")]
    data = _parameters(synthesized)
    assert data["fsx_dns_name"] == f"{fs}.DNSName" and data["fsx_mountname"] == f"{fs}.LustreMountName"
    assert data["controller_group"] == "controller" and data["login_group"] == "login"
    assert data["worker_groups"] == [{"instance_group_name": "accelerated-worker", "partition_name": "p5"},
                                     {"instance_group_name": "system", "partition_name": "cpu"}]
    assert data["accounting_database"] == "external" and data["fsx_mount_dir"] == "/fsx"
    startup = _parameters(slurm_synth["startup-slurm"])
    assert startup["accounting_database"] == "controller" and "login_group" not in startup


@pytest.mark.parametrize("example", EXAMPLES_SLURM)
def test_synth_writes_the_governance_files_under_slurm_and_no_kubernetes_objects(slurm_synth, example):
    synthesized = slurm_synth[example]
    out = synthesized.out_dir
    written = {p.relative_to(out / "slurm").as_posix(): p.read_text()
               for p in (out / "slurm").rglob("*") if p.is_file()}
    assert written == files(build_plan(synthesized.spec))
    assert (out / "slurm" / "apply.sh").stat().st_mode & 0o111
    assert not (out / "k8s").exists() and not (out / "iam").exists()
    assert sorted(p.name for p in (out / "contracts").glob("*.md")) == sorted(
        f"{t.name}.md" for t in synthesized.spec.teams)


def test_a_slurm_synth_into_an_eks_output_removes_the_kubernetes_objects_and_stale_files(tmp_path):
    from hyperpod_gov.stacks.app import synth

    spec = load_spec(EXAMPLES / "startup-slurm.yaml", today=TODAY)
    (tmp_path / "k8s" / "teams").mkdir(parents=True)
    (tmp_path / "k8s" / "cluster.yaml").write_text("{}\n")
    (tmp_path / "k8s" / "teams" / "chatbot.yaml").write_text("{}\n")
    (tmp_path / "slurm" / "slurm.conf.d").mkdir(parents=True)
    (tmp_path / "slurm" / "slurm.conf.d" / "old.conf").write_text("# from an earlier spec\n")
    synth(build_plan(spec), tmp_path, nag=False)
    assert not (tmp_path / "k8s").exists()
    assert not (tmp_path / "slurm" / "slurm.conf.d" / "old.conf").exists()


def test_a_controller_with_its_own_lifecycle_scripts_is_warned_about(tmp_path):
    data = read_yaml(EXAMPLES / "startup-slurm.yaml")
    data["cluster"]["instanceGroups"][0]["lifecycle"] = {"sourceS3Uri": "s3://acme-lifecycle/slurm/",
                                                         "onCreate": "on_create.sh"}
    synthesized = synthesize(parse_spec(data, today=TODAY), tmp_path, nag=False)  # the construct's warning
    (warning,) = [w for w in synthesized.warnings if "slurmControllerOwnLifecycle" in w]
    assert "cluster.instanceGroups[0].lifecycle" in warning and "slurm/apply.sh" in warning


def test_keys_only_the_eks_stacks_read_are_warned_about(slurm_synth, tmp_path):
    data = read_yaml(EXAMPLES / "startup-slurm.yaml")
    data["monitoring"] = {"platformEmail": "platform@example.com"}
    synthesized = synthesize(parse_spec(data, today=TODAY), tmp_path, nag=False)  # the construct's warning
    (warning,) = [w for w in synthesized.warnings if "slurmKeysWithoutEffect" in w]
    assert "monitoring.platformEmail (platform@example.com)" in warning
    assert not [w for w in slurm_synth["startup-slurm"].warnings if "slurmKeysWithoutEffect" in w]


# --- quality -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES_SLURM)
def test_every_slurm_template_passes_cfn_lint(slurm_synth, example):
    synthesized = slurm_synth[example]
    for path in synthesized.template_files():
        matches = cfn_lint(Path(path), synthesized.spec.accounts.capacity.region)
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
        assert not {m.rule.id for m in matches} - set(KEPT_WARNINGS), [str(m) for m in matches]


def test_synth_is_deterministic_and_reordering_teams_changes_no_logical_id(slurm_synth, tmp_path):
    """The spec synthesized again with its teams and instance groups in reverse order: the same templates and Slurm
    files, byte for byte (one synth for both properties: a second synth of the spec as written proved no more)."""
    data = read_yaml(EXAMPLES / "enterprise-slurm.yaml")
    data["teams"].reverse()
    data["cluster"]["instanceGroups"].reverse()
    reordered = synthesize(parse_spec(data, today=TODAY), tmp_path / "reordered")
    first = slurm_synth["enterprise-slurm"]
    assert sorted(p.name for p in reordered.template_files()) == sorted(p.name for p in first.template_files())
    for path in first.template_files():  # the same bytes, file by file
        assert (reordered.out_dir / "cdk.out" / path.name).read_bytes() == path.read_bytes(), path.name
    written = sorted(p.relative_to(first.out_dir) for p in (first.out_dir / "slurm").rglob("*") if p.is_file())
    assert written and written == sorted(p.relative_to(reordered.out_dir)
                                         for p in (reordered.out_dir / "slurm").rglob("*") if p.is_file())
    for relative in written:
        assert (reordered.out_dir / relative).read_bytes() == (first.out_dir / relative).read_bytes(), relative
    assert files(build_plan(reordered.spec)) == files(build_plan(first.spec))


def test_the_pipeline_deploys_the_slurm_capacity_stack_alone(tmp_path):
    import aws_cdk as cdk

    from tests.synth_helpers import build_pipeline_app_for

    spec = load_spec(EXAMPLES / "enterprise-slurm.yaml", today=TODAY)
    # the stages' layout only: cdk-nag and CDK's template check (the slurm templates' own tests run both) are off
    app = minimal_app(outdir=str(tmp_path), analytics_reporting=False)
    build_pipeline_app_for(spec, spec_path="examples/enterprise-slurm.yaml", app=app, nag=False).synth()
    (stage,) = sorted(tmp_path.glob("assembly-Deploy"))
    (template,) = stage.glob("*.template.json")
    assert "acmemlslurmcapacity" in template.name
    assert list(resources(json.loads(template.read_text()), "AWS::SageMaker::Cluster"))
