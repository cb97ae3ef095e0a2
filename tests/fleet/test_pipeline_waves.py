"""The fleet's delivery pipeline (stacks/pipeline_fleet.py): one wave per region, after its approval, each member a
stage of its own, the members' drift checks after every wave but the last; environments in the spec's order."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT
from tests.synth_helpers import minimal_app, resources

CONTEXT = {"pipelineRepository": "acme/gov",
           "pipelineConnectionArn": "arn:aws:codeconnections:us-east-1:111111111111:connection/abc-123"}


@pytest.fixture(scope="module")
def assembly(tmp_path_factory):
    from stacks.pipeline_fleet import add_fleet_pipeline

    out = tmp_path_factory.mktemp("fleet-pipeline")
    app = minimal_app(outdir=str(out), context=CONTEXT)
    add_fleet_pipeline(app, str(EXAMPLES / "fleet.yaml"), spec_path=str(ROOT / "examples" / "fleet.yaml"), nag=True)
    app.synth()
    return out


@pytest.fixture(scope="module")
def template(assembly):
    return json.loads((assembly / "acme-pipeline.template.json").read_text())


def _stages(template):
    ((_, pipeline),) = resources(template, "AWS::CodePipeline::Pipeline")
    return pipeline["Stages"]


def _in_order(stage):
    """The stage's action names by run order (one run order's actions sorted)."""
    return [a["Name"] for a in sorted(stage["Actions"], key=lambda a: (a.get("RunOrder", 1), a["Name"]))]


def test_one_wave_per_region_in_the_order_the_clusters_name_them(template):
    names = [s["Name"] for s in _stages(template)]
    # us-east-1 first (use1-train names it first), then us-west-2; CDK Pipelines names the CodePipeline stage of a
    # wave of one stage after that stage (its approval keeps the wave's name)
    assert names == ["Source", "Build", "UpdatePipeline", "Assets", "Deploy-us-east-1", "Deploy-usw2-train"]


def test_each_wave_deploys_its_regions_members_after_the_approval(template):
    east, west = _stages(template)[-2:]
    for stage, wave, clusters in ((east, "Deploy-us-east-1", ["use1-train", "use1-mgr", "use1-hpc"]),
                                  (west, "Deploy-us-west-2", ["usw2-train"])):
        actions = _in_order(stage)
        assert actions[0] == f"Approve-{wave}" and [a.get("RunOrder", 1) for a in stage["Actions"]].count(1) == 1
        stacks = {a["Configuration"]["StackName"] for a in stage["Actions"] if "StackName" in a.get(
            "Configuration", {})}
        assert {s.split("-")[1] + "-" + s.split("-")[2] for s in stacks} == set(clusters), stacks
        assert {f"acme-{c}-capacity" for c in clusters if c != "use1-hpc"} <= stacks


def test_the_members_drift_checks_follow_every_wave_but_the_last(template):
    east, west = _stages(template)[-2:]
    order = {a["Name"]: a.get("RunOrder", 1) for a in east["Actions"]}
    checks = [n for n in order if n.startswith("Check-")]
    assert sorted(checks) == ["Check-Deploy-use1-hpc", "Check-Deploy-use1-mgr", "Check-Deploy-use1-train"]
    deploys = [a.get("RunOrder", 1) for a in east["Actions"] if a["ActionTypeId"]["Category"] == "Deploy"]
    assert min(order[c] for c in checks) > max(deploys)
    assert not [a for a in west["Actions"] if a["Name"].startswith("Check-")]


def test_a_drift_check_writes_the_member_out_and_checks_it(template):
    specs = [json.loads(p["Source"]["BuildSpec"]) for _, p in resources(template, "AWS::CodeBuild::Project")
             if "BuildSpec" in p["Source"] and "fleet_member" in p["Source"]["BuildSpec"]]
    commands = [c for s in specs for c in s["phases"]["build"]["commands"]]
    assert ("/tmp/hyperpod-gov/bin/python -m stacks.fleet_member examples/fleet.yaml - use1-mgr "
            "examples/.fleet-member-use1-mgr.yaml") in commands
    assert ("/tmp/hyperpod-gov/bin/hyperpod-gov drift examples/.fleet-member-use1-mgr.yaml --profile check "
            "--region us-east-1 --no-kubernetes") in commands


def test_environments_deploy_in_order_each_in_its_region_waves(tmp_path):
    from stacks.pipeline_fleet import fleet_waves

    data = yaml.safe_load((EXAMPLES / "fleet.yaml").read_text())
    data["environments"] = [{"name": "stg"}, {"name": "prd"}]  # acme-stg-usw2-train: 19
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    waves = fleet_waves(minimal_app(), str(path), nag=False)
    assert [(w[0], [s.stage_name for s in w[3]]) for w in waves] == [
        ("stg-us-east-1", ["stg-use1-train", "stg-use1-mgr", "stg-use1-hpc"]),
        ("stg-us-west-2", ["stg-usw2-train"]),
        ("prd-us-east-1", ["prd-use1-train", "prd-use1-mgr", "prd-use1-hpc"]),
        ("prd-us-west-2", ["prd-usw2-train"]),
    ]


def test_the_member_file_is_the_member_load_fleet_validates(tmp_path):
    from hyperpod_gov.spec import load_spec
    from hyperpod_gov.spec.fleet import load_fleet
    from stacks.fleet_member import write_member

    out = EXAMPLES / ".fleet-member-test-usw2-train.yaml"
    try:
        write_member(str(EXAMPLES / "fleet.yaml"), None, "usw2-train", str(out))
        member = load_spec(out)
    finally:
        out.unlink(missing_ok=True)
    expected = load_fleet(EXAMPLES / "fleet.yaml").members["usw2-train"]
    assert member.name == expected.name == "acme-usw2-train"
    assert member.model_dump() == expected.model_dump()


def test_the_pipeline_checks_the_fleet_rules(tmp_path):
    from hyperpod_gov.spec import SpecError
    from stacks.pipeline_fleet import fleet_waves

    data = yaml.safe_load((EXAMPLES / "fleet.yaml").read_text())
    data["clusters"][2]["cluster"]["name"] = "acme-use1-train"  # HPG-F010: use1-mgr, also in us-east-1
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(SpecError) as raised:
        fleet_waves(minimal_app(), str(path), nag=False)
    assert [i.rule for i in raised.value.issues] == ["HPG-F010"]


def test_the_members_stages_carry_the_fleets_multikueue_objects(assembly):
    """As `synth FLEET` writes them: the manager's stacks apply its MultiKueueConfig, a worker's do not."""
    def text(cluster):
        return "".join(p.read_text() for p in (assembly / f"assembly-Deploy-{cluster}").glob("*.template.json"))

    assert "MultiKueueConfig" in text("use1-mgr")
    assert "MultiKueueConfig" not in text("use1-train")
