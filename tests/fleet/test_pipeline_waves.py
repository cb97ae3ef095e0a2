"""The fleet's delivery pipeline (stacks/pipeline_fleet.py): one wave per region, after its approval, each member a
stage of its own, the members' drift checks after every wave but the last; environments in the spec's order. With
monitoring.evidence, each member's evidence step after its own stage (the member written out of the fleet spec, and
its base out of the previous commit's, uploaded to the member's own bucket through its capacity account's deploy
role only); none without the key. Rings: tests/fleet/test_rings.py."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT
from tests.synth_helpers import cfn_lint, minimal_app, resources
from tests.test_app_quality import KEPT_WARNINGS

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


def test_without_monitoring_evidence_no_member_has_an_evidence_step_and_the_source_is_no_clone(template):
    assert "hyperpod-gov evidence" not in json.dumps(template)
    assert not [a for s in _stages(template) for a in s["Actions"] if "Evidence-" in a["Name"]]
    assert "OutputArtifactFormat" not in _stages(template)[0]["Actions"][0]["Configuration"]


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


MEMBERS = {"use1-train": "us-east-1", "usw2-train": "us-west-2", "use1-mgr": "us-east-1", "use1-hpc": "us-east-1"}
DEPLOY_ROLE = "arn:aws:iam::111111111111:role/cdk-hnb659fds-deploy-role-111111111111-{region}"


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """examples/fleet.yaml with monitoring.evidence, synthesized with cdk-nag (its findings fail the synth)."""
    from stacks.pipeline_fleet import add_fleet_pipeline

    folder = tmp_path_factory.mktemp("fleet-evidence")
    data = yaml.safe_load((EXAMPLES / "fleet.yaml").read_text())
    data["monitoring"] = {"evidence": {"bucket": "create"}}
    path = folder / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    out = folder / "cdk.out"
    app = minimal_app(outdir=str(out), context=CONTEXT)
    add_fleet_pipeline(app, str(path), spec_path=str(ROOT / "examples" / "fleet.yaml"), nag=True)
    app.synth()
    template_path = out / "acme-pipeline.template.json"
    return template_path, json.loads(template_path.read_text())


def _evidence_projects(template):
    """Each evidence build's commands and role policy statements, by cluster."""
    out = {}
    policies = {lid: p for lid, p in resources(template, "AWS::IAM::Policy")}
    for lid, project in resources(template, "AWS::CodeBuild::Project"):
        spec = project["Source"].get("BuildSpec")
        if not spec or "hyperpod-gov evidence" not in spec:
            continue
        commands = json.loads(spec)["phases"]["build"]["commands"]
        cluster = commands[1].split()[-2]  # python -m stacks.fleet_member FLEET ENV CLUSTER OUT
        role = project["ServiceRole"]["Fn::GetAtt"][0]
        statements = [s for p in policies.values() if {"Ref": role} in p["Roles"]
                      for s in p["PolicyDocument"]["Statement"]]
        out[cluster] = (commands, statements)
    return out


def test_every_member_gets_an_evidence_step_right_after_its_own_stage(synthesized):
    _, template = synthesized
    east, west = _stages(template)[-2:]
    for stage, clusters in ((east, ["use1-train", "use1-mgr", "use1-hpc"]), (west, ["usw2-train"])):
        order = {a["Name"]: a.get("RunOrder", 1) for a in stage["Actions"]}
        for cluster in clusters:
            prefix = "" if stage is west else f"Deploy-{cluster}."  # a one-stage wave's actions are not prefixed
            (step,) = [n for n in order if n == f"{prefix}Evidence-Deploy-{cluster}"]
            own = [r for n, r in order.items() if n.startswith(f"{prefix}acme-{cluster}-") and n.endswith(".Deploy")]
            assert own and order[step] > max(own), (cluster, order)
            checks = [r for n, r in order.items() if n.startswith("Check-")]
            assert not checks or order[step] < min(checks)  # the wave's drift checks come after every member's
    assert set(_evidence_projects(template)) == set(MEMBERS)


def test_the_step_writes_the_member_and_its_base_and_uploads_the_verified_record(synthesized):
    _, template = synthesized
    commands, _ = _evidence_projects(template)["use1-mgr"]
    assert commands[1] == ("/tmp/hyperpod-gov/bin/python -m stacks.fleet_member examples/fleet.yaml - use1-mgr "
                           "examples/.fleet-member-use1-mgr.yaml")
    assert "git show HEAD~1:examples/fleet.yaml > examples/.fleet-base.yaml 2>/dev/null || cp examples/fleet.yaml " \
           "examples/.fleet-base.yaml" in commands
    assert ("/tmp/hyperpod-gov/bin/python -m stacks.fleet_member examples/.fleet-base.yaml - use1-mgr "
            "examples/.fleet-member-use1-mgr-base.yaml || cp examples/.fleet-member-use1-mgr.yaml "
            "examples/.fleet-member-use1-mgr-base.yaml") in commands  # a cluster new in this commit: itself
    (run,) = [c for c in commands if "hyperpod-gov evidence examples/" in c]
    assert run.startswith("/tmp/hyperpod-gov/bin/hyperpod-gov evidence examples/.fleet-member-use1-mgr.yaml --base "
                          "examples/.fleet-member-use1-mgr-base.yaml --out /tmp/evidence && ")
    assert "evidence --verify /tmp/evidence && " in run
    assert 'aws s3 cp --recursive /tmp/evidence "s3://$EVIDENCE_BUCKET/Deploy/$(git rev-parse HEAD)/"' in run


def test_each_step_may_only_assume_its_members_deploy_role(synthesized):
    _, template = synthesized
    for cluster, (commands, statements) in _evidence_projects(template).items():
        role = DEPLOY_ROLE.format(region=MEMBERS[cluster])
        assert f"aws configure set profile.evidence.role_arn {role}" in commands
        assume = [s for s in statements if "sts:AssumeRole" in json.dumps(s["Action"])]
        assert [(s["Action"], s["Resource"]) for s in assume] == [("sts:AssumeRole", role)], cluster
        assert f"--region {MEMBERS[cluster]}" in commands[-1]


def test_the_bucket_is_the_members_output_and_the_source_a_clone(synthesized):
    _, template = synthesized
    text = json.dumps(template)
    assert text.count("EVIDENCE_BUCKET") >= len(MEMBERS) and "EvidenceBucketName" in text
    source = _stages(template)[0]["Actions"][0]["Configuration"]
    assert source.get("OutputArtifactFormat") == "CODEBUILD_CLONE_REF"


def test_the_evidence_steps_move_no_other_resource(synthesized, template):
    """The same fleet without the key: every logical id of its pipeline is in this one, which adds only the evidence
    builds, their roles and policies."""
    plain = template["Resources"]
    _, template = synthesized
    added = set(template["Resources"]) - set(plain)
    assert set(plain) <= set(template["Resources"])
    assert added and all("Evidence" in lid for lid in added), sorted(added)


def test_the_pipeline_template_passes_cfn_lint(synthesized):
    path, _ = synthesized
    matches = cfn_lint(path, "us-east-1")
    assert not [m for m in matches if m.rule.id.startswith("E")], [str(m) for m in matches]
    assert not {m.rule.id for m in matches} - set(KEPT_WARNINGS), [str(m) for m in matches]
