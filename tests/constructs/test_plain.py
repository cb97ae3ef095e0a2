"""Plain-data resources in one CfnInclude (``hyperpod_gov.constructs.plain``): the logical ids CDK would give
them, the templates the L1 constructs render, the path metadata the CDK CLI asks for."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cw
from constructs import Construct

from hyperpod_gov.constructs import TeamAccessEntry
from hyperpod_gov.constructs.access import team_access_entries
from tests.constructs import cdk_builds
from hyperpod_gov.constructs import plain
from hyperpod_gov.constructs.plain import PATH_METADATA_CONTEXT, Fragment, get_att, join, logical_id
from hyperpod_gov.plan import build_plan
from tests.contracts.helpers import plan_of
from tests.synth_helpers import minimal_app

PATHS = [
    ["Alarm"],
    ["Resource"],
    ["team-a", "Monitoring", "Alarms", "quota-not-honoured", "Resource"],
    ["team-a", "Monitoring", "Dashboard", "Resource", "Resource"],
    ["Topic", "Default"],
    ["Default", "Outer", "Default", "Inner"],
    ["Outer", "OuterInner", "Inner", "InnerMost"],  # an id ending the previous one is left out of the human part
    ["x" * 200, "y" * 100, "Resource"],  # the human part is cut at 240 characters
    ["z" * 260],  # one id longer than 255: hashed
    ["arn:aws:iam::111111111111:role/Team-Viewer", "Resource"],
    ["a.b_c-d", "e f"],
]


def _nest(stack: cdk.Stack, components: list[str]) -> Construct:
    scope: Construct = stack
    for c in components[:-1]:
        scope = scope.node.try_find_child(c) or Construct(scope, c)
    return scope


def test_logical_ids_are_the_ones_cdk_gives_at_the_same_paths():
    stack = cdk.Stack(minimal_app(), "S")
    for i, components in enumerate(PATHS):
        parent = Construct(stack, f"P{i}")
        element = cdk.CfnResource(_nest(parent, components) if len(components) > 1 else parent,
                                  components[-1], type="AWS::SNS::Topic")
        ids = [c.replace("/", "--") for c in components]  # constructs' own spelling of a '/' in an id
        assert stack.resolve(stack.get_logical_id(element)) == logical_id([f"P{i}", *ids]), components
    with pytest.raises(ValueError):
        logical_id(["Default"])


def test_join_renders_as_cdk_renders_a_string_with_tokens():
    stack = cdk.Stack(minimal_app(), "S")
    alarm = cw.CfnAlarm(stack, "A", comparison_operator="GreaterThanThreshold", evaluation_periods=1, threshold=1,
                        metric_name="m", namespace="n", period=60, statistic="Sum")
    arn = get_att(stack.resolve(alarm.logical_id), "Arn")
    assert stack.resolve(f"[\"{alarm.attr_arn}\",\"{alarm.attr_arn}\"]") == join(["[\"", arn, "\",", "\"", arn, "\"]"])
    assert join(["a", "", "b"]) == "ab"


def _interactive():
    """A team whose submitters get the HyperPod spaces access policies (nested members: AccessScope)."""
    from tests.plan.test_access_entries import interactive
    return plan_of(interactive())


@pytest.mark.parametrize("path_metadata", [False, True])
@pytest.mark.parametrize("spec", ["startup", "interactive"])
def test_included_access_entries_render_as_the_l1_construct_does(startup_spec, spec, path_metadata):
    """Byte for byte: the template of many entries in one include, and of one TeamAccessEntry (a wrapper of the
    same emitter) per principal, equals aws-cdk-lib's CfnAccessEntry per principal at the same paths, with the CDK
    CLI's path metadata (the construct paths) too."""
    plan = build_plan(startup_spec) if spec == "startup" else _interactive()
    if spec == "interactive":
        assert any(p.access_policies for p in plan.principals)
    context = {PATH_METADATA_CONTEXT: True} if path_metadata else {}
    templates = []
    for how in ("aws-cdk-lib", "included", "wrapped"):
        app = minimal_app(context=context)
        stack = cdk.Stack(app, "acme-access")
        cluster = cdk.Fn.import_value("ClusterName")  # a token, as the capacity stack's cluster name is
        if how == "included":
            team_access_entries(stack, "AccessEntries", cluster_name=cluster, accesses=plan.principals)
        else:
            for access in plan.principals:
                build = cdk_builds.access_entry if how == "aws-cdk-lib" else TeamAccessEntry
                build(stack, access.key, cluster_name=cluster, access=access)
        templates.append(app.synth().get_stack_by_name("acme-access").template)
    assert len(plan.principals) >= 2
    for template in templates[1:]:
        assert template == templates[0]
        assert list(template["Resources"]) == list(templates[0]["Resources"])  # the order too
    if path_metadata:
        assert all(r["Metadata"]["aws:cdk:path"].startswith("acme-access/")
                   for t in templates for r in t["Resources"].values() if r["Type"] == "AWS::EKS::AccessEntry")


def test_a_fragment_names_two_resources_at_one_logical_id_as_an_error():
    stack = cdk.Stack(minimal_app(), "S")
    fragment = Fragment(Construct(stack, "T"))
    fragment.add(["A", "Resource"], "AWS::SNS::Topic", {})
    with pytest.raises(ValueError, match="two resources"):
        fragment.add(["A", "Resource"], "AWS::SNS::Topic", {})
    assert Fragment(Construct(stack, "Empty")).include("Resources") is None


def test_references_inside_a_fragment_and_tokens_from_outside_resolve():
    app = minimal_app()
    stack = cdk.Stack(app, "S")
    topic = cdk.aws_sns.CfnTopic(stack, "Topic")
    scope = Construct(stack, "T")
    fragment = Fragment(scope)
    alarm = fragment.add(["Alarm", "Resource"], "AWS::CloudWatch::Alarm", {
        "ComparisonOperator": "GreaterThanThreshold", "EvaluationPeriods": 1, "Threshold": 1, "MetricName": "m",
        "Namespace": "n", "Period": 60, "Statistic": "Sum", "AlarmActions": [topic.attr_topic_arn]})
    fragment.add(["Board", "Resource"], "AWS::CloudWatch::Dashboard", {
        "DashboardBody": join(["{\"alarms\":[\"", get_att(alarm, "Arn"), "\"]}"])})
    include = fragment.include("Resources")
    resources = app.synth().get_stack_by_name("S").template["Resources"]
    assert resources[alarm]["Properties"]["AlarmActions"] == [{"Fn::GetAtt": ["Topic", "TopicArn"]}]
    assert resources[logical_id(["T", "Board", "Resource"])]["Properties"]["DashboardBody"] == {
        "Fn::Join": ["", ["{\"alarms\":[\"", {"Fn::GetAtt": [alarm, "Arn"]}, "\"]}"]]}
    assert isinstance(include.get_resource(alarm), cw.CfnAlarm)  # the L1 class, as cdk-nag and tags see it


def _long_texts_stack(monkeypatch, threshold: int) -> tuple[dict, list[dict]]:
    """A fragment with long and short texts in every place one can be; its template and the parameters each
    ``CfnInclude`` was given, with long texts from ``threshold`` characters."""
    monkeypatch.setattr(plain, "LONG_TEXT", threshold)
    given: list[dict] = []

    def recording(*args, **kwargs):
        given.append(kwargs.get("parameters") or {})
        return real(*args, **kwargs)

    real = plain.cfn_inc.CfnInclude
    monkeypatch.setattr(plain.cfn_inc, "CfnInclude", recording)
    app = minimal_app()
    stack = cdk.Stack(app, "S")
    topic = cdk.aws_sns.CfnTopic(stack, "Topic")
    fragment = Fragment(Construct(stack, "T"))
    text, short = "x" * 300, "y" * 255
    with_token = f"{topic.attr_topic_arn}{text}"  # a deploy-time value inside a long text resolves all the same
    alarm = fragment.add(["Alarm", "Resource"], "AWS::CloudWatch::Alarm", {
        "ComparisonOperator": "GreaterThanThreshold", "EvaluationPeriods": 1, "Threshold": 1, "MetricName": "m",
        "Namespace": "n", "Period": 60, "Statistic": "Sum", "AlarmDescription": text})
    fragment.add(["Thing", "Resource"], "Custom::Thing", {
        "Manifest": text, "Short": short, "List": [text, short], "Nested": {"Text": with_token},
        "Joined": join([text, get_att(alarm, "Arn"), text]), "Sub": {"Fn::Sub": "${AWS::Region}" + text},
        "Select": {"Fn::Select": [0, [text]]}})
    fragment.include("Resources")
    monkeypatch.undo()
    return app.synth().get_stack_by_name("S").template, given


def test_long_texts_reach_the_include_as_parameters_and_render_in_place(monkeypatch):
    """Texts of ``LONG_TEXT`` characters or more go to ``CfnInclude`` as parameter values, through jsii, rather than
    through its YAML parser; the template is the one with every text in the fragment and holds no parameter. The
    texts of an intrinsic function stay in the fragment, but for the parts of ``Fn::Join`` (``Fn::Sub`` reads the
    references in its text; a parameter's value is not parsed)."""
    moved, given = _long_texts_stack(monkeypatch, plain.LONG_TEXT)
    assert list(moved["Parameters"]) == ["BootstrapVersion"]  # CDK's own
    values = sorted(given[0].values())
    assert len(values) == 6 and all(len(v) >= 256 for v in values)  # description, manifest, list, nested, 2 joined
    kept, nothing = _long_texts_stack(monkeypatch, 10**9)
    assert nothing == [{}]
    assert json.dumps(moved, sort_keys=True) == json.dumps(kept, sort_keys=True)
    assert json.dumps(moved) == json.dumps(kept)  # the same order, too
    thing = moved["Resources"][logical_id(["T", "Thing", "Resource"])]["Properties"]
    assert thing["Sub"] == {"Fn::Sub": "${AWS::Region}" + "x" * 300}
    assert thing["Nested"]["Text"] == {"Fn::Join": ["", [{"Fn::GetAtt": ["Topic", "TopicArn"]}, "x" * 300]]}


def test_a_fragment_with_the_long_text_parameters_name_is_an_error():
    stack = cdk.Stack(minimal_app(), "S")
    fragment = Fragment(Construct(stack, "T"))
    fragment.add(["A", "Resource"], "AWS::SNS::Topic", {"DisplayName": "x" * 300,
                                                         "TopicName": {"Ref": f"{plain.TEXT_PARAMETER}0"}})
    with pytest.raises(ValueError, match="kept for its long texts"):
        fragment.include("Resources")


@pytest.mark.parametrize("path_metadata", [False, True])
def test_plain_identities_render_as_workload_identity_roles_do(startup_spec, path_metadata):
    """Byte for byte, with and without a target role to assume: plain_identity in a team's fragment, and a
    WorkloadIdentityRole (a wrapper of it), render as aws-cdk-lib's Role, its default policy and
    CfnPodIdentityAssociation at the same paths; an identity with grants is left to the L2 role."""
    from hyperpod_gov.constructs import WorkloadIdentityRole
    from hyperpod_gov.constructs.identity import plain_identity
    from tests.scale import many_teams_spec

    plans = [build_plan(startup_spec), plan_of(many_teams_spec(2))]
    identities = [(plan, i) for plan in plans for i in plan.identities]
    assert any(i.target_role_arn for _, i in identities) and any(not i.target_role_arn for _, i in identities)
    context = {PATH_METADATA_CONTEXT: True} if path_metadata else {}
    templates = []
    for how in ("aws-cdk-lib", "plain", "wrapped"):
        app = minimal_app(context=context)
        stack = cdk.Stack(app, "acme-teams")
        cluster = cdk.Fn.import_value("ClusterName")
        for n, (plan, identity) in enumerate(identities):
            team = Construct(stack, f"{identity.team}-{n}")
            below = f"Identity-{identity.service_account}"
            kwargs = dict(cluster_name=cluster, identity=identity, account=plan.account,
                          cluster_arn=plan.cluster.eks_arn)
            if how == "plain":
                fragment = Fragment(team, stack=stack, components=[f"{identity.team}-{n}"])
                assert plain_identity(fragment, [below], **kwargs)
                fragment.include("Plain")
            elif how == "wrapped":
                WorkloadIdentityRole(team, below, **kwargs)
            else:
                cdk_builds.identity_role(team, below, **kwargs)
        templates.append(app.synth().get_stack_by_name("acme-teams").template)
    for template in templates[1:]:
        assert template == templates[0]
        assert list(template["Resources"]) == list(templates[0]["Resources"])


def test_an_identity_with_grants_is_not_plain(enterprise_spec):
    from hyperpod_gov.constructs.identity import plain_identity

    plan = build_plan(enterprise_spec)
    granted = next(i for i in plan.identities if not i.grants.empty)
    fragment = Fragment(Construct(cdk.Stack(minimal_app(), "S"), "T"))
    assert not plain_identity(fragment, ["I"], cluster_name="c", identity=granted, account=plan.account,
                              cluster_arn=plan.cluster.eks_arn)
    assert fragment.resources == {}


def test_team_monitoring_gives_its_included_alarms_and_dashboard_as_l1_objects(startup_spec):
    from hyperpod_gov.constructs.monitoring import AlarmTopics, TeamAlarms, TeamMonitoring

    monitoring = build_plan(startup_spec).monitoring
    stack = cdk.Stack(minimal_app(), "S")
    topics = AlarmTopics(stack, "Topics", topics=monitoring.topics)
    watch = monitoring.teams[0]
    team = TeamMonitoring(stack, "Team", watch=watch, topic_arns=topics.topic_arns, region=monitoring.region)
    alone = TeamAlarms(stack, "Alarms", watch=watch, topic_arns=topics.topic_arns)
    with pytest.raises(ValueError, match="neither topic_arns nor topics"):
        TeamAlarms(stack, "NoTopics", watch=watch)
    kinds = {a.kind for a in watch.alarms}
    assert set(team.alarms) == set(alone.alarms) == kinds
    assert all(isinstance(a, cw.CfnAlarm) for a in [*team.alarms.values(), *alone.alarms.values()])
    assert isinstance(team.dashboard, cw.CfnDashboard)
    assert stack.resolve(team.alarms[watch.alarms[0].kind].alarm_name) == watch.alarms[0].name


def test_the_wrapping_constructs_give_their_included_resources_as_l1_objects(startup_spec, enterprise_spec):
    """Each construct that wraps an emitter exposes what it included as the L1 class (the escape hatch), named
    and typed as the resource it is; a WorkloadIdentityRole with grants is aws-cdk-lib's Role."""
    from aws_cdk import aws_eks_v2 as eks, aws_iam as iam, aws_sns as sns

    from hyperpod_gov.constructs import AppliedManifests, TeamQuota, WorkloadIdentityRole
    from hyperpod_gov.constructs.monitoring import AlarmTopics
    from hyperpod_gov.constructs.task_governance import GovernedCluster

    plan, granted_plan = build_plan(startup_spec), build_plan(enterprise_spec)
    stack = cdk.Stack(minimal_app(), "S")
    access = plan.principals[0]
    entry = TeamAccessEntry(stack, "Entry", cluster_name="c", access=access)
    assert entry.resource.cfn_resource_type == "AWS::EKS::AccessEntry"  # an L1 class of it (CfnInclude picks which)
    assert stack.resolve(entry.resource.principal_arn) == access.principal_arn
    assert stack.resolve(entry.resource.logical_id) == logical_id(["Entry", "Resource"])

    team = plan.tenants[0]
    for backend, type_ in (("native", "AWS::SageMaker::ComputeQuota"), ("custom-resource", "Custom::ComputeQuota")):
        quota = TeamQuota(stack, f"Quota-{backend}", team=team, cluster=GovernedCluster("arn", "c", backend))
        assert quota.resource.cfn_resource_type == type_

    topics = AlarmTopics(stack, "Topics", topics=plan.monitoring.topics)
    assert set(topics.topics) == {t.key for t in plan.monitoring.topics}
    assert all(isinstance(t, sns.CfnTopic) for t in topics.topics.values())
    assert {k: stack.resolve(v) for k, v in topics.topic_arns.items()} == {
        k: {"Ref": stack.resolve(t.logical_id)} for k, t in topics.topics.items()}

    plain_one = next(i for i in plan.identities if i.grants.empty)
    granted = next(i for i in granted_plan.identities if not i.grants.empty)
    kwargs = dict(cluster_name="c", account=plan.account, cluster_arn=plan.cluster.eks_arn)
    plain_role = WorkloadIdentityRole(stack, "Plain", identity=plain_one, **kwargs)
    team_key = cdk.aws_kms.Key.from_key_arn(stack, "TeamKey", "arn:aws:kms:us-east-1:111111111111:key/k")
    l2_role = WorkloadIdentityRole(stack, "Granted", identity=granted, team_key=team_key, **kwargs)
    assert plain_role.role is None and isinstance(l2_role.role, iam.Role)
    for role in (plain_role, l2_role):
        assert isinstance(role.role_resource, iam.CfnRole)
        assert role.association.cfn_resource_type == "AWS::EKS::PodIdentityAssociation"
    assert stack.resolve(plain_role.role_resource.role_name) == plain_one.source_role_name

    provider = eks.KubectlProvider.from_kubectl_provider_attributes(stack, "Kubectl", service_token="arn:kubectl")
    cluster = eks.Cluster.from_cluster_attributes(stack, "Cluster", cluster_name="c", kubectl_provider=provider)
    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}]
    applied = AppliedManifests(stack, "Applied", cluster=cluster, manifest=objects)
    assert isinstance(applied.resource, cdk.CfnResource)
    assert applied.resource.cfn_resource_type == "Custom::AWSCDK-EKS-KubernetesResource"
    tokens = [{"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": cdk.Fn.import_value("X")}}]
    assert isinstance(AppliedManifests(stack, "Tokens", cluster=cluster, manifest=tokens).resource,
                      eks.KubernetesManifest)
