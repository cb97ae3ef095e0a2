"""The public constructs in a user's own app: they add their stacks and change nothing else of it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import minimal_app


def _user_app(tmp_path):
    """A user's app: its own cdk.json flags (one the library sets otherwise), and a stack of its own."""
    import aws_cdk as cdk
    from aws_cdk import aws_sns as sns

    app = minimal_app(outdir=str(tmp_path), context={"@aws-cdk/aws-iam:minimizePolicies": False,
                                                     "my-team:setting": "kept"})
    mine = cdk.Stack(app, "MyPlatform")
    sns.Topic(mine, "Announcements")  # fails cdk-nag's AwsSolutions-SNS3: the user's rules, not the library's
    return app, mine


def test_the_public_names_are_importable_without_starting_node():
    import subprocess
    import sys

    code = ("import sys, hyperpod_gov; assert 'aws_cdk' not in sys.modules and 'jsii' not in sys.modules; "
            "print(hyperpod_gov.__version__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    from hyperpod_gov import __version__
    from hyperpod_gov._version import __version__ as source

    assert out.stdout.strip() == __version__ == source


def test_a_user_app_synthesizes_its_own_stack_beside_the_governance_with_the_clis_templates(tmp_path, startup,
                                                                                              startup_spec):
    import aws_cdk as cdk

    from hyperpod_gov import HyperPodGovernance

    app, _ = _user_app(tmp_path)
    before = dict(app.node.get_all_context())
    gov = HyperPodGovernance(app, "Gov", spec=startup_spec)
    after_mine = cdk.Stack(app, "MyPlatformLater")  # created after the governance too
    assert dict(app.node.get_all_context()) == before  # no context set on the user's App
    assembly = app.synth()  # cdk-nag on: the user's topic is not the library's finding
    names = {s.stack_name for s in assembly.stacks}
    assert names == {"MyPlatform", "MyPlatformLater", *startup.templates}
    assert [s.stack_name for s in gov.stacks] == [s.stack_name for s in gov.stacks if s.stack_name in startup.templates]
    for stack in gov.stacks:  # the stack's artifact and template file are the CLI's
        assert stack.artifact_id == stack.stack_name
        template = json.loads((tmp_path / f"{stack.stack_name}.template.json").read_text())
        assert template == startup.templates[stack.stack_name], stack.stack_name
    assert after_mine.node.try_get_context("@aws-cdk/aws-iam:minimizePolicies") is False  # the user's flag, kept
    assert gov.stacks[0].node.try_get_context("@aws-cdk/aws-iam:minimizePolicies") is True  # the library's
    report = json.loads((tmp_path / "validation-report.json").read_text()) if (
        tmp_path / "validation-report.json").exists() else {"pluginReports": []}
    assert not [v for r in report["pluginReports"] for v in r.get("violations", [])]


def test_cdk_nag_reports_a_finding_in_the_governance_stacks_and_not_the_users(tmp_path, startup_spec):
    from aws_cdk import aws_sns as sns

    from hyperpod_gov import HyperPodGovernance

    app, _ = _user_app(tmp_path)
    gov = HyperPodGovernance(app, "Gov", spec=startup_spec)
    sns.Topic(gov.stack("startup-monitoring"), "Unencrypted")  # a finding inside the governance's own stacks
    with pytest.raises(Exception, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    paths = [c["constructPath"] for r in report["pluginReports"] for v in r["violations"]
             for c in v["violatingConstructs"]]
    assert paths and all(p.startswith("startup-monitoring/Unencrypted") for p in paths), paths


def test_without_nag_no_plugin_is_registered(tmp_path, startup_spec):
    from aws_cdk import aws_sns as sns

    from hyperpod_gov import HyperPodGovernance

    app, _ = _user_app(tmp_path)
    gov = HyperPodGovernance(app, "Gov", spec=startup_spec, nag=False)
    sns.Topic(gov.stack("startup-monitoring"), "Unencrypted")
    app.synth()  # nothing checks it


def test_team_stacks_depend_on_the_consumer_and_access_stacks(enterprise_spec, tmp_path):
    """`cdk deploy --all` follows the README's order because the stacks say so (manifest.json)."""
    from hyperpod_gov import HyperPodGovernance

    app = minimal_app(outdir=str(tmp_path))
    gov = HyperPodGovernance(app, "Gov", spec=enterprise_spec, nag=False)
    plan = gov.plan
    for stack in gov.stacks:
        if stack.stack_name.startswith("acme-ml-teams-"):
            deps = {d.stack_name for d in stack.dependencies}
            assert {c.name for c in plan.stacks.consumers} <= deps, stack.stack_name
            assert {a.name for a in plan.stacks.access} <= deps, stack.stack_name
        if "-studio-" in stack.stack_name:
            assert "acme-ml-capacity" in {d.stack_name for d in stack.dependencies}


def test_a_spec_error_is_raised_with_every_issue_and_no_stack_is_added(startup_spec):
    from hyperpod_gov import HyperPodGovernance, SpecError

    app = minimal_app()
    broken = startup_spec.model_copy(update={"teams": startup_spec.teams + startup_spec.teams[:1]})  # one twice
    with pytest.raises(SpecError) as raised:
        HyperPodGovernance(app, "Gov", spec=broken)
    assert "teams" in raised.value.render()
    assert [c.node.id for c in app.node.children if c.node.id != "Tree"] in ([], ["Gov"])


def test_an_environment_the_spec_does_not_list_is_an_error(startup_spec):
    from hyperpod_gov import HyperPodGovernance, SpecError

    with pytest.raises(SpecError, match="environment"):
        HyperPodGovernance(minimal_app(), "Gov", spec=startup_spec, environment="staging")


def test_the_scope_must_be_an_app_or_a_stage(startup_spec):
    import aws_cdk as cdk

    from hyperpod_gov import HyperPodGovernance

    stack = cdk.Stack(minimal_app(), "Holder")
    with pytest.raises(TypeError, match="cdk.App or a cdk.Stage"):
        HyperPodGovernance(stack, "Gov", spec=startup_spec)


def test_a_stage_holds_the_same_stacks_for_a_pipeline(startup_spec, tmp_path):
    from hyperpod_gov import HyperPodGovernanceStage

    app = minimal_app(outdir=str(tmp_path))
    stage = HyperPodGovernanceStage(app, "Prod", spec=startup_spec, nag=False)
    assembly = app.synth().get_nested_assembly(stage.artifact_id)
    assert {s.stack_name for s in assembly.stacks} == {s.stack_name for s in stage.stacks}
    assert "startup-capacity" in {s.stack_name for s in stage.stacks}


# --- vpc= ---------------------------------------------------------------------------------------------------------

def _from_app_spec(cidr="10.20.0.0/16"):
    from hyperpod_gov.spec import parse_spec
    from hyperpod_gov.spec.loader import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["cluster"]["vpc"] = {"fromApp": True, "cidr": cidr, "createEndpoints": False}
    return parse_spec(data, today=TODAY)


def test_from_app_without_a_vpc_is_refused_with_the_fix():
    from hyperpod_gov import HyperPodGovernance, SpecError

    with pytest.raises(SpecError, match=r"cluster.vpc.fromApp: says the CDK app gives the VPC"):
        HyperPodGovernance(minimal_app(), "Gov", spec=_from_app_spec())


def test_a_vpc_without_from_app_is_refused(startup_spec):
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2

    from hyperpod_gov import HyperPodGovernance, SpecError

    app = minimal_app()
    vpc = ec2.Vpc.from_vpc_attributes(cdk.Stack(app, "Net"), "Vpc", vpc_id="vpc-1", availability_zones=["us-east-1a"])
    with pytest.raises(SpecError, match="cluster.vpc.fromApp: is not set"):
        HyperPodGovernance(app, "Gov", spec=startup_spec, vpc=vpc)


def test_a_cidr_other_than_the_vpcs_is_refused():
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2

    from hyperpod_gov import HyperPodGovernance, SpecError

    app = minimal_app()
    network = cdk.Stack(app, "Net", env=cdk.Environment(account="444444444444", region="us-east-1"))
    vpc = ec2.Vpc(network, "Vpc", ip_addresses=ec2.IpAddresses.cidr("10.30.0.0/16"),
                  availability_zones=["us-east-1a", "us-east-1b"])
    with pytest.raises(SpecError, match=r"cluster.vpc.cidr: is not the CIDR of the VPC given as vpc= \(10.30.0.0/16\)"):
        HyperPodGovernance(app, "Gov", spec=_from_app_spec(), vpc=vpc)


def test_the_cli_refuses_a_from_app_spec_it_has_no_vpc_for(tmp_path, capsys):
    import yaml

    from hyperpod_gov.cli import main
    from hyperpod_gov.spec.loader import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["cluster"]["vpc"] = {"fromApp": True, "cidr": "10.20.0.0/16", "createEndpoints": False}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    assert main(["validate", str(spec)]) == 0  # the spec is valid: only synth needs the app's VPC
    capsys.readouterr()
    assert main(["synth", str(spec), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "cluster.vpc.fromApp: says the CDK app gives the VPC" in err and "Traceback" not in err


@pytest.mark.parametrize("vpc, message", [
    ({"fromApp": True, "createEndpoints": False}, "sets fromApp but does not give cidr"),
    ({"fromApp": True, "cidr": "10.20.0.0/16"}, "sets fromApp but does not give createEndpoints"),
    ({"fromApp": True, "vpcId": "vpc-0123456789abcdef0", "cidr": "10.20.0.0/16", "createEndpoints": False},
     "sets fromApp with vpcId or privateSubnetIds"),
])
def test_from_app_takes_a_cidr_and_an_endpoint_choice_and_no_vpc_id(vpc, message):
    from hyperpod_gov.spec import SpecError, parse_spec
    from hyperpod_gov.spec.loader import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["cluster"]["vpc"] = vpc
    with pytest.raises(SpecError) as raised:
        parse_spec(data, today=TODAY)
    assert message in raised.value.render()


def test_the_reference_app_imports_the_public_api_only():
    """app.py and stacks/ are written against `hyperpod_gov`'s public names, as a user's app is."""
    import ast

    from tests.conftest import ROOT

    reached = []
    for path in [ROOT / "app.py", *sorted((ROOT / "stacks").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hyperpod_gov."):
                reached.append(f"{path.name}: from {node.module}")
            if isinstance(node, ast.Import):
                reached += [f"{path.name}: import {a.name}" for a in node.names if a.name.startswith("hyperpod_gov.")]
    assert reached == []
    import hyperpod_gov

    assert set(hyperpod_gov.__all__) >= {"HyperPodGovernance", "HyperPodGovernanceStage", "load_spec", "SpecError"}
