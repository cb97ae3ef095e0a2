"""A teams stack's plain data (``plain.Runs``): the owners' topics, the quota, the namespace wait and the applied
manifests render as aws-cdk-lib's classes they stand for (sns.Topic with its policy and subscription, CfnResource /
CustomResource of the quota, KubernetesObjectValue, KubernetesManifest; ``cdk_builds``), and as the library's
constructs that wrap the same emitters (AlarmTopics, TeamQuota, AppliedManifests), byte for byte and in the same
order; what cannot be plain is left to the construct."""

from __future__ import annotations

import json
import random
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk import aws_eks_v2 as eks, aws_kms as kms
from constructs import Construct

from hyperpod_gov.charts import render
from hyperpod_gov.constructs import AppliedManifests, TeamQuota
from hyperpod_gov.constructs.dashboard_widgets import _js_json, js_json
from hyperpod_gov.constructs.manifests import holds_tokens, plain_manifest, plain_object_value
from hyperpod_gov.constructs.monitoring import AlarmTopics, plain_topics
from hyperpod_gov.constructs.plain import PATH_METADATA_CONTEXT, Runs, logical_id
from hyperpod_gov.constructs.task_governance import QUOTA_UNKNOWN_TO_CDK, GovernedCluster, plain_quota
from hyperpod_gov.plan import build_plan
from tests.constructs import cdk_builds
from tests.synth_helpers import minimal_app

KUBECTL = "arn:aws:lambda:us-east-1:111111111111:function:kubectl"
KEY = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"
HYPERPOD = "arn:aws:sagemaker:us-east-1:111111111111:cluster/abc123"
# Objects that exercise the prune label's placement (no metadata, no labels, labels, no kind) and JavaScript's numbers and
# key order (a float that is whole, an array-index key after a named one).
ODD_OBJECTS = [
    {"apiVersion": "v1", "kind": "ConfigMap", "data": {"b": "x", "10": "y", "2": "z"}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque"},
    {"apiVersion": "x/v1", "kind": "Thing", "metadata": {"name": "t", "labels": {"a": "b"}},
     "spec": {"ratio": 0.5, "whole": 2.0, "tiny": 1e-7, "big": 1.5e21}},
    {"apiVersion": "v1", "note": "no kind: not labelled"},
]


def _app(path_metadata: bool) -> tuple[cdk.App, cdk.Stack, eks.ICluster]:
    app = minimal_app(context={PATH_METADATA_CONTEXT: True} if path_metadata else {})
    stack = cdk.Stack(app, "acme-teams")
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(stack, "Kubectl", service_token=KUBECTL)
    cluster = eks.Cluster.from_cluster_attributes(stack, "Cluster", cluster_name="ml-eks", kubectl_provider=provider)
    return app, stack, cluster


def _teams(startup_spec):
    plan = build_plan(startup_spec)
    manifests = render(plan)
    teams = [(team, manifests.teams[team.name]) for team in plan.tenants]
    teams[0] = (teams[0][0], [*teams[0][1], *ODD_OBJECTS])
    return plan, teams


@pytest.mark.parametrize("backend", ["native", "custom-resource"])
@pytest.mark.parametrize("path_metadata", [False, True])
def test_a_teams_plain_resources_render_as_the_constructs_do(startup_spec, backend, path_metadata):
    plan, teams = _teams(startup_spec)
    templates = []
    for how in ("aws-cdk-lib", "plain", "wrapped"):
        app, stack, cluster = _app(path_metadata)
        governed = GovernedCluster(HYPERPOD, "ml-eks", backend)
        provider = governed.provider(stack)
        key = kms.Key.from_key_arn(stack, "Key", KEY)
        if how == "plain":
            runs = Runs(stack, stack=stack, components=[])
            plain_topics(runs.fragment, ["AlarmTopics"], topics=plan.monitoring.topics, key_arn=key.key_arn)
            for team, manifest in teams:
                quota, native = plain_quota(runs.fragment, [team.name, "Quota"], team=team, cluster=governed,
                                            service_token=provider.service_token if provider else None)
                assert native == (backend == "native")
                if native:
                    runs.acknowledge(quota, QUOTA_UNKNOWN_TO_CDK)
                waiter = plain_object_value(runs.fragment, [team.name, "Namespace"], service_token=KUBECTL,
                                            cluster_name="ml-eks", object_type="namespace",
                                            object_name=team.namespace, json_path=".metadata.name",
                                            timeout_seconds=900, depends_on=[quota])
                assert plain_manifest(runs.fragment, [team.name, "Manifests"], service_token=KUBECTL,
                                      cluster_name="ml-eks", manifest=manifest, depends_on=[waiter])
            runs.flush()
        else:
            wrapped = how == "wrapped"
            if wrapped:
                AlarmTopics(stack, "AlarmTopics", topics=plan.monitoring.topics, key=key)
            else:
                cdk_builds.topics(stack, "AlarmTopics", plans=plan.monitoring.topics, key=key)
            for team, manifest in teams:
                scope = Construct(stack, team.name)
                quota: Construct = (
                    TeamQuota(scope, "Quota", team=team, cluster=governed) if wrapped else
                    cdk_builds.quota(scope, "Quota", team=team, cluster_arn=HYPERPOD,
                                     service_token=provider.service_token if provider else None))
                waiter = eks.KubernetesObjectValue(scope, "Namespace", cluster=cluster, object_type="namespace",
                                                   object_name=team.namespace, json_path=".metadata.name",
                                                   timeout=cdk.Duration.minutes(15))
                waiter.node.add_dependency(quota)
                applied = (AppliedManifests(scope, "Manifests", cluster=cluster, manifest=manifest) if wrapped else
                           cdk_builds.manifest(scope, "Manifests", cluster=cluster, objects=manifest))
                applied.node.add_dependency(waiter)
        templates.append(app.synth().get_stack_by_name("acme-teams").template)
    assert len(teams) >= 2 and plan.monitoring.topics
    for template in templates[1:]:
        assert template == templates[0]
        assert list(template["Resources"]) == list(templates[0]["Resources"])  # the order too


def test_js_json_orders_keys_and_numbers_as_javascript_does():
    assert js_json({"b": 1, "10": 2.0, "2": 0.5, "01": 3, "4294967295": 4}) == \
        '{"2":0.5,"10":2,"b":1,"01":3,"4294967295":4}'


def test_js_json_writes_with_python_s_encoder_only_what_it_writes_alike():
    """The C encoder's fast path and the JavaScript-order writer agree on everything the fast path takes, and
    the values it must not take (floats, index keys, subclasses) still come out as JavaScript writes them."""
    rng = random.Random(7)
    words = ["a", "b", "é", "\u2028", "x\"y", "tab\t", "0a", "-1", "z" * 30, "\ue000"]

    def value(depth):
        pick = rng.randrange(6 if depth < 4 else 3)
        if pick == 0:
            return rng.choice(words)
        if pick == 1:
            return rng.choice([0, -3, 2**40, True, False, None])
        if pick == 2:
            return rng.choice(words) + str(rng.randrange(100))
        if pick == 3:
            return [value(depth + 1) for _ in range(rng.randrange(4))]
        if pick == 4:
            return tuple(value(depth + 1) for _ in range(rng.randrange(3)))
        return {rng.choice(words): value(depth + 1) for _ in range(rng.randrange(5))}

    for _ in range(300):
        v = value(0)
        assert js_json(v) == _js_json(v)
    assert js_json({"w": [{"y": 1.0, "x": 1e-7}]}) == '{"w":[{"y":1,"x":1e-7}]}'
    assert js_json({"a": {"7": "x", "b": "y"}}) == '{"a":{"7":"x","b":"y"}}'
    assert js_json({"a": {"b": "y", "7": "x"}}) == '{"a":{"7":"x","b":"y"}}'

    class Count(int):
        def __repr__(self):
            return "Count"
    assert js_json([Count(3)]) == "[3]"


def test_a_manifest_holding_tokens_is_left_to_the_construct():
    app, stack, _ = _app(False)
    runs = Runs(stack, stack=stack, components=[])
    with_token = [{"apiVersion": "v1", "kind": "ConfigMap", "data": {"fs": cdk.Fn.import_value("FileSystemId")}}]
    assert holds_tokens(with_token) and not holds_tokens(ODD_OBJECTS)
    assert plain_manifest(runs.fragment, ["t", "Manifests"], service_token=KUBECTL, cluster_name="c",
                          manifest=with_token) is None
    assert runs.fragment.resources == {}


def test_a_dependency_on_an_earlier_run_is_added_once_both_are_included():
    """A construct between the namespace wait and the manifests splits the runs; the manifests still come after
    the wait, and the acknowledgement lands on the include that holds the quota."""
    app, stack, _ = _app(False)
    runs = Runs(stack, stack=stack, components=[])
    waiter = plain_object_value(runs.fragment, ["t", "Namespace"], service_token=KUBECTL, cluster_name="c",
                                object_type="namespace", object_name="ns", json_path=".metadata.name",
                                timeout_seconds=900)
    runs.acknowledge(waiter, [("CloudFormation-Validate::W0000", "a reason")])
    runs.flush()
    cdk.CfnResource(Construct(stack, "Between"), "Resource", type="AWS::SNS::Topic")
    manifest_id = plain_manifest(runs.fragment, ["t", "Manifests"], service_token=KUBECTL, cluster_name="c",
                                 manifest=[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}])
    assert manifest_id == logical_id(["t", "Manifests", "Resource", "Resource"])
    runs.depend(manifest_id, waiter)
    assert "DependsOn" not in runs.fragment.resources[manifest_id]  # not in this run: added once it is included
    runs.flush()
    assembly = app.synth()
    resources = assembly.get_stack_by_name("acme-teams").template["Resources"]
    assert resources[manifest_id]["DependsOn"] == [waiter]
    assert list(resources) == [waiter, logical_id(["Between", "Resource"]), manifest_id]
    metadata = json.loads((Path(assembly.directory) / "acme-teams.metadata.json").read_text())
    acknowledged = [(path, list(e["data"])) for path, entries in metadata.items() for e in entries
                    if e["type"] == "aws:cdk:acknowledged-rules"]
    assert acknowledged == [("/acme-teams/Plain", ["CloudFormation-Validate::W0000"])]
    with pytest.raises(ValueError, match="not in the run"):
        runs.depend("Nothing", waiter)
    alarm = runs.fragment.add(["t", "Alarm", "Resource"], "AWS::SNS::Topic", {})
    with pytest.raises(ValueError, match="no run"):
        runs.depend(alarm, "Missing")
