"""Delivery: consumer-account target roles, trust policies, and the multi-account pipeline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import cfn_lint, minimal_app, resources
from tests.test_app_quality import KEPT_WARNINGS

CAPACITY = "111111111111"


def consumer_roles(synthesized, consumer):
    return dict(resources(synthesized.template(f"consumer-{consumer}"), "AWS::IAM::Role"))


def test_consumer_stacks_live_in_their_accounts_and_regions(enterprise):
    manifest = json.loads((enterprise.out_dir / "cdk.out" / "manifest.json").read_text())
    envs = {name: a["environment"] for name, a in manifest["artifacts"].items()
            if a["type"] == "aws:cloudformation:stack"}
    assert envs["acme-ml-consumer-research-data"] == "aws://222222222222/us-east-1"
    assert envs["acme-ml-consumer-product-data"] == "aws://333333333333/us-east-1"
    # The Unified Studio connection lives in the domain's account (examples/enterprise.yaml: 444444444444).
    assert envs["acme-ml-studio-444444444444-us-east-1"] == "aws://444444444444/us-east-1"
    assert {v for k, v in envs.items() if "consumer" not in k and "-studio-" not in k} == \
        {f"aws://{CAPACITY}/us-east-1"}


def test_created_target_role_trusts_exactly_one_source_role_namespace_and_service_account(enterprise):
    (role,) = consumer_roles(enterprise, "research-data").values()
    assert role["RoleName"] == "speech-trainer-data"
    (statement,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Effect"] == "Allow"
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Principal"] == {"AWS": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                                                 f":iam::{CAPACITY}:root"]]}}
    assert statement["Condition"] == {"StringEquals": {
        "aws:PrincipalArn": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                               f":iam::{CAPACITY}:role/acme-ml-speech-trainer"]]},
        "aws:RequestTag/eks-cluster-name": "ml-cluster-eks",
        "aws:RequestTag/eks-cluster-arn": "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks",
        "aws:RequestTag/kubernetes-namespace": "hyperpod-ns-speech",
        "aws:RequestTag/kubernetes-service-account": "trainer",
    }}


def test_created_target_role_gets_only_the_data_access_the_spec_names(enterprise):
    template = enterprise.template("consumer-research-data")
    (policy,) = [p for _, p in resources(template, "AWS::IAM::Policy")]
    statements = policy["PolicyDocument"]["Statement"]
    rendered = [(s["Action"], json.dumps(s["Resource"]).split(":s3:::")[-1].split('"')[0] if "s3" in json.dumps(s)
                 else s["Resource"]) for s in statements]
    assert rendered == [
        (["s3:AbortMultipartUpload", "s3:DeleteObject", "s3:GetObject", "s3:PutObject"],
         "acme-research-audio/checkpoints/speech/*"),
        ("s3:ListBucket", "acme-research-audio"),
        ("s3:GetObject", "acme-research-audio/corpora/*"),
        ("s3:ListBucket", "acme-research-audio"),
        (["kms:Decrypt", "kms:GenerateDataKey"],
         "arn:aws:kms:us-east-1:222222222222:key/1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b"),
    ]
    lists = [s for s in statements if s["Action"] == "s3:ListBucket"]
    assert [s["Condition"] for s in lists] == [{"StringLike": {"s3:prefix": ["checkpoints/speech/*"]}},
                                               {"StringLike": {"s3:prefix": ["corpora/*"]}}]


def _trust_statements(synthesized):
    for name, template in synthesized.templates.items():
        for logical_id, role in resources(template, "AWS::IAM::Role"):
            for statement in role["AssumeRolePolicyDocument"]["Statement"]:
                yield name, logical_id, statement


def test_no_wildcard_principal_and_no_cross_account_assume_without_principal_arn(enterprise):
    statements = list(_trust_statements(enterprise))
    assert statements
    for name, logical_id, statement in statements:
        principal = statement["Principal"]
        assert principal != "*" and principal.get("AWS") != "*", (name, logical_id)
        if "AWS" in principal:
            assert "aws:PrincipalArn" in statement.get("Condition", {}).get("StringEquals", {}), (name, logical_id)


def test_source_roles_can_assume_only_their_own_target_role(enterprise):
    expected = {
        "acme-ml-speech-trainer": "role/speech-trainer-data",
        "acme-ml-recommendations-trainer": "role/recsys-trainer-clickstream",
        "acme-ml-foundation-models-pretrainer": "arn:aws:iam::222222222222:role/research-data-reader",
        "acme-ml-inference-platform-model-server": "arn:aws:iam::333333333333:role/product-models-reader",
    }
    found = {}
    for name, template in enterprise.templates.items():
        roles = dict(resources(template, "AWS::IAM::Role"))
        for _, policy in resources(template, "AWS::IAM::Policy"):
            for ref in policy["Roles"]:
                role = roles.get(ref.get("Ref"))
                if role and role.get("RoleName", "").startswith("acme-ml-"):
                    assumes = [s for s in policy["PolicyDocument"]["Statement"] if "sts" in json.dumps(s["Action"])]
                    if not assumes:  # a source role with grants only (tests/constructs/test_data.py)
                        continue
                    (statement,) = assumes
                    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
                    found[role["RoleName"]] = json.dumps(statement["Resource"])
    assert set(found) == set(expected)
    for role, target in expected.items():
        assert target in found[role], (role, found[role])


# --- spec rules for delivery -----------------------------------------------------------


def _enterprise_with(mutate):
    data = read_yaml(EXAMPLES / "enterprise.yaml")
    mutate(data)
    return data


def test_a_consumer_account_named_twice_is_an_error():
    from hyperpod_gov.spec import SpecError

    def twice(d):
        d["accounts"]["consumers"].append({"name": "research-again", "id": "222222222222", "region": "us-east-1"})

    with pytest.raises(SpecError) as info:
        parse_spec(_enterprise_with(twice), today=TODAY)
    assert "accounts.consumers[2].id: names the same account and region as accounts.consumers[0]" in str(info.value)


def test_a_target_role_in_an_undeclared_account_is_an_error():
    from hyperpod_gov.spec import SpecError

    def undeclared(d):
        d["teams"][4]["workloadIdentities"][0]["targetRole"]["account"] = "finance-data"

    with pytest.raises(SpecError) as info:
        parse_spec(_enterprise_with(undeclared), today=TODAY)
    assert ("teams[4].workloadIdentities[0].targetRole.account: is not a declared consumer account ('finance-data'); "
            "declare it under accounts.consumers") in str(info.value)


def test_target_role_and_target_role_arn_together_is_an_error():
    from hyperpod_gov.spec import SpecError

    def both(d):
        d["teams"][4]["workloadIdentities"][0]["targetRoleArn"] = "arn:aws:iam::222222222222:role/x"

    with pytest.raises(SpecError) as info:
        parse_spec(_enterprise_with(both), today=TODAY)
    assert "teams[4].workloadIdentities[0]: names both targetRoleArn and targetRole" in str(info.value)


# --- the pipeline ----------------------------------------------------------------------


def _pipeline_template(out: Path) -> dict:
    (path,) = out.glob("*-pipeline.template.json")
    return json.loads(path.read_text())


def _stages(out: Path) -> list[dict]:
    (props,) = [p for _, p in resources(_pipeline_template(out), "AWS::CodePipeline::Pipeline")]
    return props["Stages"]


def test_pipeline_runs_tests_then_an_approval_before_anything_of_the_environment_deploys(pipeline):
    stages = _stages(pipeline)
    assert [s["Name"] for s in stages][:3] == ["Source", "Build", "UpdatePipeline"]
    assert [s["Name"] for s in stages][-1] == "Deploy"  # one HyperPodGovernanceStage: the spec has no environments
    actions = stages[-1]["Actions"]
    approval = [a for a in actions if a["ActionTypeId"]["Category"] == "Approval"]
    deploys = [a for a in actions if a["ActionTypeId"]["Category"] == "Deploy"]
    assert len(approval) == 1 and deploys
    assert approval[0]["RunOrder"] < min(a["RunOrder"] for a in deploys)  # consumer accounts' roles included
    source = stages[0]["Actions"][0]["Configuration"]
    assert source["FullRepositoryId"] == "acme/ml-governance" and source["BranchName"] == "main"
    assert source["ConnectionArn"].startswith("arn:aws:codeconnections:us-east-1:111111111111:connection/")


def test_the_stage_deploys_consumer_roles_and_access_entries_before_teams_and_the_cluster_before_studio(pipeline):
    """Within the stage, CDK Pipelines orders the deploys by the stacks' dependencies (stacks.layout)."""
    actions = _stages(pipeline)[-1]["Actions"]
    deployed = {}
    for a in actions:
        if a["ActionTypeId"]["Category"] == "Deploy" and a["Configuration"].get("ActionMode") == "CHANGE_SET_EXECUTE":
            deployed[a["Configuration"]["StackName"]] = a["RunOrder"]
    teams = [v for k, v in deployed.items() if "-teams-" in k]
    consumers = [v for k, v in deployed.items() if "-consumer-" in k]
    access = [v for k, v in deployed.items() if k.endswith("-access") or "-access-" in k]
    studio = [v for k, v in deployed.items() if "-studio-" in k]
    assert teams and consumers and access and studio, deployed
    assert max(consumers + access) < min(teams)
    assert deployed["acme-ml-capacity"] < min(studio)


def test_synth_step_runs_the_readme_test_command_before_the_synth(pipeline):
    template = _pipeline_template(pipeline)
    specs = [json.loads(p["Source"]["BuildSpec"]) for _, p in resources(template, "AWS::CodeBuild::Project")
             if "BuildSpec" in p["Source"] and "dev.sh" in p["Source"]["BuildSpec"]]
    (buildspec,) = specs
    commands = buildspec["phases"]["build"]["commands"]
    assert commands == ["./dev.sh test", "./dev.sh cdk synth -c spec=examples/enterprise.yaml -c pipeline=true"]


def test_stage_accounts_match_the_spec_and_deploy_with_cross_account_roles(pipeline):
    envs = {}
    for assembly in sorted(pipeline.glob("assembly-*")):
        manifest = json.loads((assembly / "manifest.json").read_text())
        for artifact in manifest["artifacts"].values():
            if artifact["type"] == "aws:cloudformation:stack":
                envs[artifact["properties"]["stackName"]] = artifact["environment"]
    assert envs["acme-ml-consumer-research-data"] == "aws://222222222222/us-east-1"
    assert envs["acme-ml-consumer-product-data"] == "aws://333333333333/us-east-1"
    capacity = {v for k, v in envs.items() if "-consumer-" not in k and "-studio-" not in k}
    assert capacity == {f"aws://{CAPACITY}/us-east-1"}
    assert any(k.startswith("acme-ml-teams-") for k in envs)
    studio = {v for k, v in envs.items() if "-studio-" in k}
    assert studio == {"aws://444444444444/us-east-1"}
    roles = json.dumps(_stages(pipeline)[-1:])
    assert "cdk-hnb659fds-deploy-role-222222222222-us-east-1" in roles
    assert "cdk-hnb659fds-deploy-role-333333333333-us-east-1" in roles
    assert f"cdk-hnb659fds-deploy-role-{CAPACITY}-us-east-1" in roles


def test_pipeline_templates_pass_cfn_lint(pipeline):
    files = [pipeline / "acme-ml-pipeline.template.json", *sorted(pipeline.glob("assembly-*/*.template.json"))]
    assert len(files) > 3
    for path in files:
        matches = cfn_lint(path, "us-east-1")
        errors = [f"{m.rule.id} {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, (path.name, errors)
        assert not {m.rule.id for m in matches} - set(KEPT_WARNINGS), (path.name, [str(m) for m in matches])


def test_pipeline_without_a_repository_says_where_to_set_it(startup_spec):
    from hyperpod_gov.spec import SpecError
    from tests.synth_helpers import build_pipeline_app_for

    with pytest.raises(SpecError, match=r"deployment.pipeline.repository: is not set \(nothing \(null\)\); set it in "
                                        r"the spec or pass -c pipelineRepository=\.\.\."):
        build_pipeline_app_for(startup_spec, spec_path="examples/startup.yaml")


def test_pipeline_repository_can_come_from_cdk_context(startup_spec, tmp_path):
    import aws_cdk as cdk

    from tests.synth_helpers import build_pipeline_app_for

    # where the pipeline takes its repository from: cdk-nag and CDK's template check (the pipeline fixture's) are off
    app = minimal_app(outdir=str(tmp_path), context={
        "pipelineRepository": "startup/gov",
        "pipelineConnectionArn": "arn:aws:codeconnections:us-east-1:444444444444:connection/abc-123",
    })
    build_pipeline_app_for(startup_spec, spec_path="examples/startup.yaml", app=app, nag=False).synth()
    source = _stages(tmp_path)[0]["Actions"][0]["Configuration"]
    assert source["FullRepositoryId"] == "startup/gov"
    assert [s["Name"] for s in _stages(tmp_path)][-1] == "Deploy"
    # CodeBuild rebuilds the same app: the context values this synth took from the command line travel along.
    (buildspec,) = [json.loads(p["Source"]["BuildSpec"]) for _, p in resources(_pipeline_template(tmp_path),
                    "AWS::CodeBuild::Project") if "dev.sh" in p["Source"].get("BuildSpec", "")]
    assert buildspec["phases"]["build"]["commands"][-1] == (
        "./dev.sh cdk synth -c spec=examples/startup.yaml -c pipeline=true -c pipelineRepository=startup/gov "
        "-c pipelineConnectionArn=arn:aws:codeconnections:us-east-1:444444444444:connection/abc-123")


def test_the_pipeline_names_the_spec_by_its_path_in_the_repository(tmp_path):
    """An absolute path of the machine that ran `cdk synth` means nothing in CodeBuild's checkout."""
    from hyperpod_gov.spec import SpecError
    from stacks.pipeline import repository_path
    from tests.conftest import ROOT

    assert repository_path(str(ROOT / "examples" / "startup.yaml"), root=ROOT) == "examples/startup.yaml"
    assert repository_path("./examples/../examples/startup.yaml", root=ROOT) == "examples/startup.yaml"
    with pytest.raises(SpecError, match=r"\(pipeline\): the spec is outside the repository the pipeline builds"):
        repository_path(str(tmp_path / "spec.yaml"), root=ROOT)


def test_pipeline_stages_deploy_the_stacks_under_the_names_cdk_deploy_uses(pipeline, enterprise):
    """So a user can move between `cdk deploy` and the pipeline without renaming (replacing) a stack."""
    from hyperpod_gov.plan import build_plan

    plan = build_plan(enterprise.spec)
    names = set()
    for assembly in sorted(pipeline.glob("assembly-*")):
        manifest = json.loads((assembly / "manifest.json").read_text())
        names |= {a["properties"]["stackName"] for a in manifest["artifacts"].values()
                  if a["type"] == "aws:cloudformation:stack"}
    expected = set(plan.stacks.all_names) | set(plan.contracts.stack_names)
    assert names == expected
    assert names == set(enterprise.templates)  # what `cdk deploy --all` deploys


def test_pipeline_installs_the_pinned_cdk_cli_and_cdk_assets_never_latest(pipeline):
    from stacks.pipeline import toolchain_versions

    pins = toolchain_versions()
    specs = json.dumps([p["Source"]["BuildSpec"] for _, p in resources(_pipeline_template(pipeline),
                                                                         "AWS::CodeBuild::Project")])
    assert f"aws-cdk@{pins['cli']}" in specs  # self-mutation
    assert f"cdk-assets@{pins['cdk_assets']}" in specs  # asset publishing (the lifecycle scripts, handlers)
    assert "@latest" not in specs
