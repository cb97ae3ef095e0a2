"""Unified Studio connections: their own stack in the domain's account, after the cluster, in the pipeline too."""

from __future__ import annotations

import json

from aws_cdk.assertions import Match, Template

from hyperpod_gov.plan import build_plan
from hyperpod_gov.stacks.studio import StudioConnectionsStack
from tests.synth_helpers import cfn_lint, minimal_app, resources

STUDIO = "acme-ml-studio-444444444444-us-east-1"
PROJECT_ROLE = "arn:aws:iam::111111111111:role/datazone_usr_role_5b3jcjsy4ar7zr_c1ncty2ag0mhmf"


def test_connection_has_the_hyperpod_properties_cfn_lint_accepts_and_nothing_else(enterprise_spec):
    plan = build_plan(enterprise_spec)
    (studio,) = plan.contracts.studio
    stack = StudioConnectionsStack(minimal_app(), studio.name, plan=plan, studio=studio)
    template = Template.from_stack(stack)
    template.resource_count_is("AWS::DataZone::Connection", 1)
    assert set(template.to_json()["Resources"]) == {"appliedresearchConnection8828FFB2"}
    template.has_resource_properties("AWS::DataZone::Connection", Match.exact({
        "DomainIdentifier": "dzd_4p9n6sw4qt9xgn",
        "ProjectIdentifier": "5b3jcjsy4ar7zr",
        "Name": "acme-ml-applied-research",
        "Description": "HyperPod cluster ml-cluster (acme-ml): namespace hyperpod-ns-applied-research",
        "AwsLocation": {"AwsAccountId": "111111111111", "AwsRegion": "us-east-1"},
        "Props": {"HyperPodProperties": {"ClusterName": "ml-cluster"}},
    }))
    assert (stack.account, stack.region) == ("444444444444", "us-east-1")


def test_studio_stack_deploys_in_the_domains_account_after_the_cluster_and_the_access_entries(enterprise):
    manifest = json.loads((enterprise.out_dir / "cdk.out" / "manifest.json").read_text())
    artifact = manifest["artifacts"][STUDIO]
    assert artifact["environment"] == "aws://444444444444/us-east-1"
    assert {"acme-ml-capacity", "acme-ml-access"} <= set(artifact["dependencies"])


def test_studio_template_is_cfn_lint_clean(enterprise):
    path = enterprise.out_dir / "cdk.out" / f"{STUDIO}.template.json"
    matches = cfn_lint(path, "us-east-1")
    assert not matches, [str(m) for m in matches]


def test_project_role_has_one_access_entry_onto_the_submitters_group_in_the_capacity_account(enterprise):
    entries = [p for _, p in resources(enterprise.template("access"), "AWS::EKS::AccessEntry")
               if p["PrincipalArn"] == PROJECT_ROLE]
    (entry,) = entries
    assert entry["KubernetesGroups"] == ["hyperpod-ns-applied-research-submitters"]
    assert entry["Type"] == "STANDARD" and "AccessPolicies" not in entry


def test_synth_writes_one_contract_page_per_team_beside_the_manifests(enterprise):
    pages = sorted(p.name for p in (enterprise.out_dir / "contracts").glob("*.md"))
    assert pages == ["applied-research.md", "foundation-models.md", "inference-platform.md", "recommendations.md",
                     "speech.md"]
    assert (enterprise.out_dir / "k8s").is_dir()
    assert "acme-ml-applied-research" in (enterprise.out_dir / "contracts" / "applied-research.md").read_text()


def test_pipeline_deploys_the_connections_after_the_cluster_and_the_access_entries(pipeline):
    (path,) = pipeline.glob("*-pipeline.template.json")
    (props,) = [p for _, p in resources(json.loads(path.read_text()), "AWS::CodePipeline::Pipeline")]
    actions = props["Stages"][-1]["Actions"]  # the environment's one stage: order comes from the dependencies
    run = {a["Configuration"]["StackName"]: a["RunOrder"] for a in actions
           if a["ActionTypeId"]["Category"] == "Deploy" and a["Configuration"].get("ActionMode") == "CHANGE_SET_EXECUTE"}
    assert run[STUDIO] > run["acme-ml-capacity"] and run[STUDIO] > run["acme-ml-access"]
    envs = {}
    for assembly in sorted(pipeline.glob("assembly-*")):
        manifest = json.loads((assembly / "manifest.json").read_text())
        for artifact in manifest["artifacts"].values():
            if artifact["type"] == "aws:cloudformation:stack":
                envs[artifact["properties"]["stackName"]] = artifact["environment"]
    assert envs[STUDIO] == "aws://444444444444/us-east-1"


def test_access_role_goes_to_the_connections_aws_location_and_region_defaults_to_the_capacity_region():
    from tests.contracts.helpers import connected, plan_of

    data = connected()
    data["teams"][0]["contract"]["unifiedStudio"]["accessRoleArn"] = "arn:aws:iam::111111111111:role/studio-access"
    plan = plan_of(data)
    (studio,) = plan.contracts.studio
    template = Template.from_stack(StudioConnectionsStack(minimal_app(), studio.name, plan=plan, studio=studio))
    template.has_resource_properties("AWS::DataZone::Connection", {
        "AwsLocation": {"AwsAccountId": "111111111111", "AwsRegion": "us-east-1",
                        "AccessRole": "arn:aws:iam::111111111111:role/studio-access"},
        "Name": "acme-team-a",
    })
