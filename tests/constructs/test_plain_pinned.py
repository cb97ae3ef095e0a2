"""The speed layer's reliance on aws-cdk-lib, pinned (issue 54): tests that fail on the aws-cdk-lib upgrade that
changes what ``hyperpod_gov.constructs.plain`` copies from it.

- every resource kind a fragment emits gets, at every kind of construct path, the logical id the construct it
  stands in for gets there (``Default``, ``Resource``, an id ending the previous one, non-alphanumerics, one id
  alone, over-long paths);
- ``makeUniqueId``'s constants, read from the installed aws-cdk-lib's own source, are the ones ``plain`` copies.

docs/synth-performance.md ("What the speed layer relies on") lists the versions this was verified on. The
templates rendered byte for byte are compared in tests/constructs/test_plain.py, test_plain_teams.py and
test_plain_render.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from functools import cache
from pathlib import Path
from typing import Any

import aws_cdk
import aws_cdk as cdk
import pytest
from aws_cdk import aws_cloudwatch as cw, aws_eks_v2 as eks, aws_kms as kms
from constructs import Construct

from hyperpod_gov.constructs.access import team_access_entries
from hyperpod_gov.constructs.identity import plain_identity
from hyperpod_gov.constructs.manifests import KUBECTL_BARRIER, plain_manifest, plain_object_value
from hyperpod_gov.constructs.monitoring import plain_topics, team_monitoring
from hyperpod_gov.constructs import plain
from hyperpod_gov.constructs.plain import PATH_METADATA, PATH_METADATA_CONTEXT, Fragment, logical_id
from hyperpod_gov.constructs.task_governance import GovernedCluster, plain_quota
from hyperpod_gov.constructs.task_governance_provider import QUOTA_RESOURCE_TYPE
from hyperpod_gov.plan import build_plan
from hyperpod_gov.stacks.governance import team_outputs
from tests.constructs import cdk_builds
from tests.contracts.helpers import plan_of
from tests.scale import many_teams_spec
from tests.synth_helpers import minimal_app

KUBECTL = "arn:aws:lambda:us-east-1:111111111111:function:kubectl"
KEY = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"
HYPERPOD = "arn:aws:sagemaker:us-east-1:111111111111:cluster/abc123"
TOPIC = "arn:aws:sns:us-east-1:111111111111:owners"
MANIFEST = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}]
STACK = "acme-teams"

# The scopes (construct ids below the stack) every kind is emitted under.
SCOPES = [
    [],  # the stack itself: the outputs' paths are one id alone
    ["team-a.b_c"],  # non-alphanumerics, left out of the human part
    ["Default", "ml"],  # a hidden id
    ["Resource", "vision"],  # an id hidden from the human part but in the hash
    ["TeamMonitoring", "Monitoring"],  # an id that ends the previous one: left out of the human part
    ["Outer", "x" * 250],  # a human part over 240 characters, cut
]
SINGLE_OUTPUT = "Single-Output"  # one id alone: its letters and digits
LONG_OUTPUT = "o" * 260  # one id alone over 255 characters: hashed


def _parts(startup_spec) -> dict[str, Any]:
    """What each scope gets: principals with access entries, an identity that assumes a target role, a team,
    its watch (alarms and a dashboard), the owners' topics."""
    startup, two = build_plan(startup_spec), plan_of(many_teams_spec(2))
    identity = next(i for p in (startup, two) for i in p.identities if i.target_role_arn and i.grants.empty)
    plan_of_identity = startup if identity in startup.identities else two
    watch = next(w for w in startup.monitoring.teams if w.alarms and w.dashboard)
    team = next(t for t in startup.tenants if t.name == watch.team)
    return dict(startup=startup, principals=startup.principals[:2], identity=identity,
                identity_plan=plan_of_identity, team=team, watch=watch, topics=startup.monitoring.topics)


def _nest(stack: cdk.Stack, components: list[str]) -> Construct:
    scope: Construct = stack
    for c in components:
        scope = scope.node.try_find_child(c) or Construct(scope, c)
    return scope


def _app() -> tuple[cdk.App, cdk.Stack, eks.ICluster]:
    app = minimal_app(context={PATH_METADATA_CONTEXT: True})
    stack = cdk.Stack(app, STACK)
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(stack, "Kubectl", service_token=KUBECTL)
    cluster = eks.Cluster.from_cluster_attributes(stack, "Cluster", cluster_name="ml-eks", kubectl_provider=provider)
    return app, stack, cluster


def _real(parts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Every kind built with the aws-cdk-lib classes the fragments stand in for (``cdk_builds``: not the
    library's constructs, which are wrappers over the fragments), under each scope: the template, and the outputs'
    logical ids as CDK allocates them by path."""
    app, stack, cluster = _app()
    key = kms.Key.from_key_arn(stack, "Key", KEY)
    team, watch, identity, plan = parts["team"], parts["watch"], parts["identity"], parts["identity_plan"]
    outputs: dict[str, str] = {}
    for components in SCOPES:
        s = _nest(stack, components)
        for access in parts["principals"]:  # eks.CfnAccessEntry at <key>/Resource
            cdk_builds.access_entry(s, access.key, cluster_name="ml-eks", access=access)
        cdk_builds.topics(s, "AlarmTopics", plans=parts["topics"], key=key)  # sns.Topic, its policy, subscriptions
        cdk_builds.quota(s, "Quota", team=team, cluster_arn=HYPERPOD)  # CfnResource of AWS::SageMaker::ComputeQuota
        cdk_builds.quota(s, "QuotaCR", team=team, cluster_arn=HYPERPOD, service_token=KUBECTL)  # CustomResource
        eks.KubernetesObjectValue(s, "Namespace", cluster=cluster, object_type="namespace", object_name="ns",
                                  json_path=".metadata.name")
        cdk_builds.manifest(s, "Manifests", cluster=cluster, objects=MANIFEST)  # a KubernetesManifest "Resource"
        cdk_builds.identity_role(s, f"Identity-{identity.service_account}", cluster_name="ml-eks",
                                 identity=identity, account=plan.account,
                                 cluster_arn=plan.cluster.eks_arn)  # iam.Role + DefaultPolicy + association
        alarms = Construct(Construct(s, "Monitoring"), "Alarms")
        for a in watch.alarms:  # the L2 alarm the plain alarms replaced
            cw.Alarm(alarms, a.kind, metric=cw.Metric(namespace="n", metric_name="m"), threshold=1,
                     evaluation_periods=1)
        cw.Dashboard(Construct(s.node.find_child("Monitoring"), "Dashboard"), "Resource")  # TeamDashboard's
        out = Construct(s, "Outputs")
        for id in ("Namespace", "LocalQueue", "PriorityClasses"):
            output = cdk.CfnOutput(out, id, value="v")
            outputs[stack.resolve(output.logical_id)] = output.node.path
    for id in (SINGLE_OUTPUT, LONG_OUTPUT):  # one id alone
        output = cdk.CfnOutput(stack, id, value="v")
        outputs[stack.resolve(output.logical_id)] = output.node.path
    return app.synth().get_stack_by_name(STACK).template, outputs


def _plain(parts: dict[str, Any]) -> dict[str, Any]:
    """Every kind emitted by the fragment functions under each scope: the template."""
    app, stack, _ = _app()
    native = GovernedCluster(HYPERPOD, "ml-eks", "native")
    team, watch, identity, plan = parts["team"], parts["watch"], parts["identity"], parts["identity_plan"]
    for n, components in enumerate(SCOPES):
        s = _nest(stack, components)
        team_access_entries(s, "AccessEntries", cluster_name="ml-eks", accesses=parts["principals"])
        fragment = Fragment(s, stack=stack, components=components)
        plain_topics(fragment, ["AlarmTopics"], topics=parts["topics"], key_arn=KEY)
        plain_quota(fragment, ["Quota"], team=team, cluster=native, service_token=None)
        plain_quota(fragment, ["QuotaCR"], team=team, cluster=GovernedCluster(HYPERPOD, "ml-eks", "custom-resource"),
                    service_token=KUBECTL)
        plain_object_value(fragment, ["Namespace"], service_token=KUBECTL, cluster_name="ml-eks",
                           object_type="namespace", object_name="ns", json_path=".metadata.name",
                           timeout_seconds=300)
        assert plain_manifest(fragment, ["Manifests"], service_token=KUBECTL, cluster_name="ml-eks",
                              manifest=MANIFEST)
        assert plain_identity(fragment, [f"Identity-{identity.service_account}"], cluster_name="ml-eks",
                              identity=identity, account=plan.account, cluster_arn=plan.cluster.eks_arn)
        team_monitoring(fragment, ["Monitoring"], watch=watch, topics={},
                        topic_arns={a.topic: TOPIC for a in watch.alarms})
        team_outputs(fragment, ["Outputs"], parts["startup"], team)
        fragment.include(f"Plain{n}")
    ones = Fragment(stack, stack=stack, components=[])
    for id in (SINGLE_OUTPUT, LONG_OUTPUT):
        ones.add_output([id], "v")
    ones.include("Ones")
    return app.synth().get_stack_by_name(STACK).template


@pytest.fixture(scope="module")
def templates(startup_spec) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    parts = _parts(startup_spec)
    real, outputs = _real(parts)
    return real, outputs, _plain(parts)


def _below_stack(path: str) -> list[str]:
    assert path.startswith(f"{STACK}/"), path
    return path[len(STACK) + 1:].split("/")


def _by_path(template: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Construct path (path metadata) -> (logical id, type) of the template's resources."""
    return {r["Metadata"][PATH_METADATA]: (logical, r["Type"]) for logical, r in template["Resources"].items()}


def test_the_real_constructs_ids_are_plain_logical_id_of_their_paths(templates):
    """Every resource and output the constructs make (of each kind a fragment emits, under each scope) is at
    ``plain.logical_id`` of its construct path: CDK's ``allocateLogicalId``/``makeUniqueId`` as copied."""
    real, outputs, _ = templates
    checked = 0
    for path, (logical, type_) in _by_path(real).items():
        assert logical == logical_id(_below_stack(path)), (path, type_)
        checked += 1
    for logical, path in outputs.items():
        assert logical == logical_id(_below_stack(path)), path
    assert checked >= len(SCOPES) * 12 and len(outputs) == len(SCOPES) * 3 + 2
    assert logical_id(_below_stack(f"{STACK}/{LONG_OUTPUT}")) != LONG_OUTPUT  # hashed: it was checked too
    long_human = [lg for lg in real["Resources"] if lg.startswith("Outerxxx")]
    assert long_human and all(len(lg) == plain.MAX_HUMAN_LEN + 8 for lg in long_human)


KINDS = sorted({"AWS::EKS::AccessEntry", "AWS::SNS::Topic", "AWS::SNS::TopicPolicy", "AWS::SNS::Subscription",
                "AWS::SageMaker::ComputeQuota", QUOTA_RESOURCE_TYPE, "Custom::AWSCDK-EKS-KubernetesObjectValue",
                "Custom::AWSCDK-EKS-KubernetesResource", "AWS::IAM::Role", "AWS::IAM::Policy",
                "AWS::EKS::PodIdentityAssociation", "AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard"})


def test_every_kind_a_fragment_emits_is_at_the_id_and_path_the_construct_has(templates):
    """The fragments' resources: the same logical ids, types and path metadata as the constructs', under every
    scope; the outputs the same logical ids."""
    real, _, emitted = templates
    real_paths, plain_paths = _by_path(real), _by_path(emitted)
    assert {t for _, t in plain_paths.values()} == set(KINDS)
    for kind in KINDS:
        want = {p: v for p, v in real_paths.items() if v[1] == kind}
        got = {p: v for p, v in plain_paths.items() if v[1] == kind}
        assert got == want, kind
    assert sorted(emitted["Outputs"]) == sorted(real["Outputs"])


# Compared property by property here; alarms and dashboards (built above with other inputs than the fragments') in
# test_plain_render.py.
SAME_INPUTS = [k for k in KINDS if k not in ("AWS::CloudWatch::Alarm", "AWS::CloudWatch::Dashboard")]


def test_every_kind_a_fragment_emits_renders_as_aws_cdk_lib_does(templates):
    """Given the same inputs, each resource the fragments emit is, in full (properties, dependencies, policies, path
    metadata), the one aws-cdk-lib's class renders at that path."""
    real, _, emitted = templates
    compared = 0
    for logical, resource in emitted["Resources"].items():
        if resource["Type"] in SAME_INPUTS:
            assert resource == real["Resources"][logical], (logical, resource["Type"])
            compared += 1
    assert compared >= len(SCOPES) * 12


def test_logical_id_covers_each_kind_of_path():
    """Hand-checked ids (the md5 of the path joined with '/', 8 hex digits upper case)."""
    def h(path: str) -> str:
        return hashlib.md5(path.encode()).hexdigest()[:8].upper()

    assert logical_id(["Topic"]) == "Topic"
    assert logical_id(["a-b.c"]) == "abc"  # one id alone: its letters and digits, no hash
    assert logical_id(["Default", "Topic", "Default"]) == "Topic"
    assert logical_id(["A", "Resource"]) == "A" + h("A/Resource")
    assert logical_id(["AB", "B", "C"]) == "ABC" + h("AB/B/C")  # B ends AB: left out of the human part
    assert logical_id(["z" * 256]) == "z" * 240 + h("z" * 256)
    assert logical_id(["x" * 200, "y" * 100]) == ("x" * 200 + "y" * 40) + h("x" * 200 + "/" + "y" * 100)


# -- aws-cdk-lib's own source ----------------------------------------------------------------------------------

JSII = Path(aws_cdk.__file__).parent / "_jsii"


@cache
def _cdk_source(member: str) -> str:
    """A file of the installed aws-cdk-lib's jsii bundle (aws_cdk/_jsii/aws-cdk-lib@<version>.jsii.tgz)."""
    (tgz,) = JSII.glob("aws-cdk-lib@*.jsii.tgz")
    with tarfile.open(tgz, "r:gz") as tar:
        f = tar.extractfile(f"package/{member}")
        assert f is not None, member
        return f.read().decode()


def _installed_version() -> str:
    (tgz,) = JSII.glob("aws-cdk-lib@*.jsii.tgz")
    return tgz.name[len("aws-cdk-lib@"):-len(".jsii.tgz")]


def _constant(source: str, name: str) -> str:
    found = re.search(rf"\b{name}=(\"[^\"]*\"|\d+)", source)
    assert found, f"aws-cdk-lib {_installed_version()}: makeUniqueId's {name} is gone from uniqueid.js"
    return found.group(1).strip('"')


@pytest.mark.parametrize("name, copied", [
    ("HIDDEN_ID", plain.HIDDEN_ID),
    ("HIDDEN_FROM_HUMAN_ID", plain.HIDDEN_FROM_HUMAN_ID),
    ("MAX_HUMAN_LEN", str(plain.MAX_HUMAN_LEN)),
    ("MAX_ID_LEN", str(plain.MAX_ID_LEN)),
    ("HASH_LEN", "8"),  # logical_id's [:8]
    ("PATH_SEP", "/"),  # logical_id's "/".join
])
def test_make_unique_id_constants_are_the_ones_plain_copies(name, copied):
    value = _constant(_cdk_source("core/lib/private/uniqueid.js"), name)
    assert value == copied, (f"aws-cdk-lib {_installed_version()} changed makeUniqueId's {name} to {value!r}; "
                             f"hyperpod_gov/constructs/plain.py copies {copied!r}")


# The steps of makeUniqueId that logical_id re-does, as aws-cdk-lib 2.275.0's minified uniqueid.js writes them.
STEPS = {
    "drops the hidden id": "components=components.filter(x=>x!==HIDDEN_ID)",
    "one id alone is its letters and digits": "if(components.length===1){const candidate=removeNonAlphanumeric("
                                              "components[0]);if(candidate.length<=MAX_ID_LEN)return candidate}",
    "the human part": "removeDupes(components).filter(x=>x!==HIDDEN_FROM_HUMAN_ID).map(removeNonAlphanumeric)"
                      ".join(\"\").slice(0,MAX_HUMAN_LEN)+hash",
    "the hash: md5 of the path, upper case": "md5hash)(path.join(PATH_SEP)).slice(0,HASH_LEN).toUpperCase()",
    "non-alphanumerics": "s.replace(/[^A-Za-z0-9]/g,\"\")",
    "repeats: an id ending the previous one": "(ret.length===0||!ret[ret.length-1].endsWith(component))"
                                              "&&ret.push(component)",
}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_make_unique_id_steps_are_the_ones_plain_re_does(step):
    assert STEPS[step] in _cdk_source("core/lib/private/uniqueid.js"), (
        f"aws-cdk-lib {_installed_version()}: makeUniqueId no longer reads {STEPS[step]!r} ({step}); compare "
        "core/lib/private/uniqueid.js with hyperpod_gov/constructs/plain.py's logical_id")


# What AppliedManifests copies from KubernetesManifest besides its resource: on a Cluster (not an imported one) it
# comes after the cluster's kubectl barrier, a child of the cluster named KUBECTL_BARRIER.
BARRIER = [
    ("aws-eks-v2/lib/k8s-manifest.js", "provider=kubectl_provider_1().KubectlProvider.getKubectlProvider(this,"
                                       "props.cluster)"),
    ("aws-eks-v2/lib/kubectl-provider.js", "return cluster instanceof cluster_1().Cluster&&cluster."
                                           "_dependOnKubectlBarrier(scope),cluster.kubectlProvider"),
    ("aws-eks-v2/lib/cluster.js", "_dependOnKubectlBarrier(resource){resource.node.addDependency(this."
                                  "_kubectlReadyBarrier)}"),
    ("aws-eks-v2/lib/cluster.js", f"this._kubectlReadyBarrier=new(core_1()).CfnResource(this,\"{KUBECTL_BARRIER}\""),
]


@pytest.mark.parametrize("member, step", BARRIER)
def test_a_kubernetes_manifest_depends_on_the_kubectl_barrier_as_applied_manifests_copies(member, step):
    assert step in _cdk_source(member), (
        f"aws-cdk-lib {_installed_version()}: {member} no longer reads {step!r}; compare KubernetesManifest's "
        "dependencies with hyperpod_gov/constructs/manifests.py's AppliedManifests")


def test_stack_allocates_logical_ids_with_make_unique_id_of_the_path_below_it():
    stack_js = _cdk_source("core/lib/stack.js")
    assert ("pathComponents=scopes.slice(stackIndex+1).map(x=>x.node.id);return(0,uniqueid_1().makeUniqueId)"
            "(pathComponents)") in stack_js, (
        f"aws-cdk-lib {_installed_version()}: Stack.allocateLogicalId no longer is makeUniqueId of the ids below "
        "the stack")
    assert "createHash(\"md5\")" in _cdk_source("core/lib/private/md5.js"), "md5hash is no longer node's md5"


def test_the_installed_versions_are_the_ones_this_section_names():
    """docs/synth-performance.md ("What the speed layer relies on") names the versions the layer was verified on:
    the aws-cdk-lib whose jsii bundle is installed and jsii (both pinned by constraints.txt), and the Node.js major
    of package.json. An upgrade fails here until the section is checked again and names it."""
    import importlib.metadata

    root = Path(__file__).resolve().parents[2]
    docs = (root / "docs" / "synth-performance.md").read_text()
    section = docs[docs.index("## What the speed layer relies on"):]
    section = section[:section.index("\n## ")]
    constraints = (root / "constraints.txt").read_text().splitlines()
    for package, version in (("aws-cdk-lib", _installed_version()), ("jsii", importlib.metadata.version("jsii"))):
        assert f"{package}=={version}" in constraints, package
        assert f"**{package} {version}**" in section, f"the docs name another {package} than the installed {version}"
    node = json.loads((root / "package.json").read_text())["devDependencies"]["node"]
    assert f"**Node.js {node.split('.')[0]}**" in section and f"({node}, `package.json`)" in section, node
