"""One spec, several environments (issue 22): the merge, the names, validation per environment, the CLI, and the
pipeline that deploys them in order with a read-only drift check and an approval between them."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.spec import SpecError
from hyperpod_gov.spec.environments import environment_data, merge
from hyperpod_gov.spec.loader import load_spec
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import minimal_app

# A staging account of its own, whose administrators (in the startup's account) the spec trusts.
STAGING = {"name": "staging", "accounts": {"capacity": {"id": "222222222222"}, "trusted": ["444444444444"]},
           "overrides": {"cluster": {"instanceGroups": [{"name": "gpu-worker", "count": 11}]},
                         "teams": [{"name": "chatbot", "remove": True}]}}


def _with_environments(tmp_path, example="startup", environments=(STAGING, {"name": "prod"})):
    data = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text())
    data["environments"] = list(environments)
    path = tmp_path / f"{example}-envs.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path, data


def test_merge_maps_by_key_named_lists_by_name_and_replaces_the_rest():
    base = {"a": {"x": 1, "y": 2}, "teams": [{"name": "t1", "q": 1}, {"name": "t2", "q": 2}], "cidrs": ["a", "b"]}
    override = {"a": {"y": 3, "x": None}, "teams": [{"name": "t2", "q": 5}, {"name": "t3", "q": 1},
                                                    {"name": "t1", "remove": True}], "cidrs": ["c"]}
    assert merge(base, override) == {"a": {"y": 3}, "teams": [{"name": "t2", "q": 5}, {"name": "t3", "q": 1}],
                                     "cidrs": ["c"]}
    assert base["a"] == {"x": 1, "y": 2}  # the base is not changed


def test_an_environment_is_the_base_with_its_accounts_and_overrides_named_after_it(tmp_path):
    _, data = _with_environments(tmp_path)
    staging = environment_data(data, "staging")
    assert staging["name"] == "startup-staging" and "environments" not in staging
    assert staging["accounts"]["capacity"] == {"id": "222222222222", "region": "us-east-1"}
    assert staging["accounts"]["trusted"] == ["444444444444"]
    assert [g["count"] for g in staging["cluster"]["instanceGroups"]] == [11]
    assert "chatbot" not in [t["name"] for t in staging["teams"]]
    assert environment_data(data, "prod")["teams"] == data["teams"]


def test_every_environment_is_validated_as_a_whole(tmp_path, capsys):
    # staging shrinks the group to 3 instances: the teams' quotas no longer fit.
    broken = copy.deepcopy(STAGING)
    broken["overrides"]["cluster"]["instanceGroups"][0]["count"] = 3
    path, _ = _with_environments(tmp_path, environments=(broken, {"name": "prod"}))
    assert main(["validate", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"{path} (environment staging): " in err and "quotas on ml.g5.2xlarge add up to" in err
    path, _ = _with_environments(tmp_path)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path} (environment staging: stacks startup-staging-*): valid (2 teams" in out
    assert f"{path} (environment prod: stacks startup-prod-*): valid (3 teams" in out


def test_names_and_lookups_are_checked(tmp_path, capsys):
    path, data = _with_environments(tmp_path)
    with pytest.raises(SpecError, match=r"has no environment named 'qa' \('qa'\); use one of staging, prod"):
        load_spec(path, environment="qa", today=TODAY)
    with pytest.raises(SpecError, match=r"makes the environment's name 'startup-a-very-long-environment' 31 "
                                        r"characters long"):
        environment_data(data | {"environments": [{"name": "a-very-long-environment"}]}, "a-very-long-environment")
    (tmp_path / "dup").mkdir()
    path2, _ = _with_environments(tmp_path / "dup", environments=({"name": "prod"}, {"name": "prod"}))
    assert main(["validate", str(path2)]) == 1
    assert "environments: names prod more than once" in capsys.readouterr().err
    # A spec with environments is deployed only as one of them.
    assert main(["explain", str(path)]) == 1
    assert "choose one with --environment NAME (cdk: -c environment=NAME)" in capsys.readouterr().err
    assert main(["explain", str(path), "--environment", "staging"]) == 0
    assert "Stacks: startup-staging-capacity" in capsys.readouterr().out


def test_the_enterprise_example_in_two_environments_gets_its_own_stack_names(tmp_path):
    from hyperpod_gov.plan import build_plan

    path, _ = _with_environments(tmp_path, "enterprise", ({"name": "staging"}, {"name": "prod"}))
    for env in ("staging", "prod"):
        plan = build_plan(load_spec(path, environment=env, today=TODAY))
        assert plan.stacks.capacity == f"acme-ml-{env}-capacity"
        assert all(n.startswith(f"acme-ml-{env}-") for n in plan.stacks.all_names)


def test_diff_compares_two_environments_of_one_spec(tmp_path, capsys):
    path, _ = _with_environments(tmp_path)
    assert main(["diff", str(path), "--environment", "staging", "--against", "prod", "--governance-only"]) == 0
    out = capsys.readouterr().out
    assert f"Governance changes ({path}: environment staging -> prod):" in out
    assert "  instance group gpu-worker instances: 11 -> 15" in out
    assert "  team chatbot added:" in out


def test_the_pipeline_deploys_the_environments_in_order_checked_and_approved(tmp_path):
    """staging approved, deployed (consumer accounts, capacity account, Studio in one stage), then a read-only
    drift check of staging; then prod, approved before anything of it deploys."""
    from stacks.pipeline import build_pipeline_app

    path, _ = _with_environments(tmp_path)
    out = tmp_path / "out"
    app = minimal_app(outdir=str(out), context={"pipelineRepository": "startup/gov", "pipelineConnectionArn":
                                            "arn:aws:codeconnections:us-east-1:444444444444:connection/abc-123"})
    build_pipeline_app(load_spec(path, today=TODAY), spec_path=str(path.relative_to(tmp_path)), app=app, nag=False)
    app.synth()
    template = json.loads(next(out.glob("*pipeline*.template.json")).read_text())
    (pipeline,) = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::CodePipeline::Pipeline"]
    names = [s["Name"] for s in pipeline["Stages"]]
    assert names[-2:] == ["staging", "prod"], names
    staging, prod = pipeline["Stages"][-2]["Actions"], pipeline["Stages"][-1]["Actions"]
    order = lambda actions, name: next(a["RunOrder"] for a in actions if a["Name"] == name)  # noqa: E731
    deploys = lambda actions: [a["RunOrder"] for a in actions if a["ActionTypeId"]["Category"] == "Deploy"]  # noqa
    assert order(staging, "Approve-staging") < min(deploys(staging)) <= max(deploys(staging)) < \
        order(staging, "Check-staging")
    assert order(prod, "Approve-prod") < min(deploys(prod))
    assert not [a for a in prod if a["Name"].startswith("Check-")]  # the last environment has no check after it
    builds = [json.loads(r["Properties"]["Source"]["BuildSpec"]) for r in template["Resources"].values()
              if r["Type"] == "AWS::CodeBuild::Project" and "drift" in r["Properties"]["Source"].get("BuildSpec", "")]
    (check,) = builds
    commands = check["phases"]["build"]["commands"]
    assert commands[-1] == (f"/tmp/hyperpod-gov/bin/hyperpod-gov drift {path.relative_to(tmp_path)} --environment "
                            "staging --profile check --region us-east-1 --no-kubernetes")
    assert "role/cdk-hnb659fds-lookup-role-222222222222-us-east-1" in commands[1]
    deployed = lambda actions: {a["Configuration"].get("StackName") for a in actions} - {None}  # noqa: E731
    assert "startup-staging-capacity" in deployed(staging) and "startup-prod-capacity" in deployed(prod)
    assert not any(n.startswith("startup-prod-") for n in deployed(staging))
