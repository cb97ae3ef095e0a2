"""What a data scientist runs, the Kubernetes API calls each command makes, and the generated RBAC.

Every command below is listed with the calls the HyperPod CLI's source makes (github.com/aws/sagemaker-hyperpod-cli,
paths under ``src/sagemaker/hyperpod/``) or kubectl makes. The RBAC of the synthesized manifests of
``examples/enterprise.yaml`` (every Role, ClusterRole and binding, charts/render.py) must allow exactly those to a
team member's groups in the team namespace, and deny the namespaced ones in every other team's namespace; what
it grants beyond them is listed in ``EXTRA`` with the reason. ``rbac_eval`` evaluates RBAC as the API server
does; its own tests are at the end.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from hyperpod_gov.plan.workloads import INFERENCE, INTERACTIVE, TRAINING, WORKLOAD_KINDS, kinds_for
from hyperpod_gov.charts.render import render
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.names import CLUSTER_VIEWERS_GROUP
from hyperpod_gov.spec import parse_spec
from tests.charts.rbac_eval import Authorizer, Request, rule_allows
from tests.conftest import EXAMPLES, TODAY

NS = "{ns}"  # the team namespace, filled in per team
OTHER = "{other}"  # another team's namespace
CQ = "{cq}"  # the team's ClusterQueue
J, P = "hello", "hello-pod-0"
HPJ = ("sagemaker.amazonaws.com", "hyperpodpytorchjobs")
# The training job kinds a team with approved training work may create (plan/workloads.py, charts/rbac.py).
JOBS = tuple((k.group, k.resource) for k in WORKLOAD_KINDS if TRAINING in k.approved_by)
# The inference operator's kinds (approved: inference) and HyperPod spaces' (approved: interactive).
INFERENCE_KINDS = tuple((k.group, k.resource) for k in WORKLOAD_KINDS if INFERENCE in k.approved_by)
SPACES_KINDS = tuple((k.group, k.resource) for k in WORKLOAD_KINDS if INTERACTIVE in k.approved_by)
VERSION = Request("get", url="/version")  # common/utils.py verify_kubernetes_version_compatibility: VersionApi.get_code


def ns(verb: str, group: str, resource: str, name: str = "", sub: str = "") -> Request:
    return Request(verb, group, resource, sub, name, NS)


def cl(verb: str, group: str, resource: str, name: str = "") -> Request:
    return Request(verb, group, resource, "", name, None)


@dataclass(frozen=True)
class Command:
    line: str
    source: str  # where the calls come from
    calls: tuple[Request, ...]  # what it needs, all allowed for a submitter
    refused: tuple[Request, ...] = ()  # calls it makes that members are refused on purpose (see the test)
    viewer: bool = False  # also run by a team viewer (read-only)


COMMANDS: tuple[Command, ...] = (
    Command("hyp set-cluster-context --cluster-name C --namespace NS",
            "cli/commands/cluster.py set_cluster_context; cli/clients/kubernetes_client.py set_context (kubeconfig "
            "file only; the AWS calls are DescribeCluster and eks:DescribeCluster)", (), viewer=True),
    Command("hyp (namespace discovery: a command run without a context namespace)",
            "cli/service/discover_namespaces.py; cli/service/get_namespaces.py list_namespace; "
            "cli/service/self_subject_access_review.py",
            (cl("list", "", "namespaces"), cl("create", "authorization.k8s.io", "selfsubjectaccessreviews")),
            viewer=True),
    Command("hyp list-cluster --namespace NS",
            "cli/commands/cluster.py rate_limited_operation; cli/clients/kubernetes_client.py "
            "list_node_with_temp_config, get_sagemaker_managed_namespace, get_cluster_queue",
            (cl("list", "", "nodes"), cl("get", "", "namespaces", NS), cl("get", "kueue.x-k8s.io", "clusterqueues", CQ)),
            # cli/service/list_pods.py list_pods_and_get_requested_resources_group_by_node_name (list_pod_for_all_namespaces)
            refused=(cl("list", "", "pods"),), viewer=True),
    Command("hyp create hyp-pytorch-job ...", "training/hyperpod_pytorch_job.py create (create_namespaced_custom_object)",
            (VERSION, ns("create", *HPJ))),
    Command("hyp list hyp-pytorch-job --namespace NS", "training/hyperpod_pytorch_job.py list",
            (VERSION, ns("list", *HPJ)), viewer=True),
    Command("hyp describe hyp-pytorch-job --job-name J", "training/hyperpod_pytorch_job.py get",
            (VERSION, ns("get", *HPJ, J)), viewer=True),
    Command("hyp list-pods hyp-pytorch-job --job-name J", "training/hyperpod_pytorch_job.py get, list_pods",
            (VERSION, ns("get", *HPJ, J), ns("list", "", "pods")), viewer=True),
    Command("hyp get-logs hyp-pytorch-job --job-name J --pod-name P",
            "training/hyperpod_pytorch_job.py get, get_logs_from_pod (read_namespaced_pod_log); on an error "
            "common/cli_decorators.py reads the pod, the namespace and the HyperPodPyTorchJob CRD",
            (VERSION, ns("get", *HPJ, J), ns("get", "", "pods", P, "log"), ns("get", "", "pods", P),
             cl("get", "", "namespaces", NS),
             cl("get", "apiextensions.k8s.io", "customresourcedefinitions", "hyperpodpytorchjobs.sagemaker.amazonaws.com")),
            viewer=True),
    Command("hyp delete hyp-pytorch-job --job-name J",
            "training/hyperpod_pytorch_job.py get, delete (also deletes ConfigMap training-config-J of recipe jobs, "
            "ignoring a refusal)", (VERSION, ns("get", *HPJ, J), ns("delete", *HPJ, J))),
    Command("kubectl get workloads -n NS", "kubectl", (ns("list", "kueue.x-k8s.io", "workloads"),), viewer=True),
    Command("kubectl describe workload W -n NS", "kubectl",
            (ns("get", "kueue.x-k8s.io", "workloads", "w"), ns("list", "", "events")), viewer=True),
    Command("kubectl get localqueues -n NS", "kubectl", (ns("list", "kueue.x-k8s.io", "localqueues"),), viewer=True),
    Command("kubectl get clusterqueue CQ", "kubectl", (cl("get", "kueue.x-k8s.io", "clusterqueues", CQ),), viewer=True),
    Command("kubectl get workloadpriorityclasses", "kubectl",
            (cl("list", "kueue.x-k8s.io", "workloadpriorityclasses"),), viewer=True),
    Command("kubectl get resourceflavors", "kubectl", (cl("list", "kueue.x-k8s.io", "resourceflavors"),), viewer=True),
    Command("kubectl get pods -n NS --watch", "kubectl", (ns("list", "", "pods"), ns("watch", "", "pods")),
            viewer=True),
    Command("kubectl logs P -n NS", "kubectl (reads the pod for its containers, then the log)",
            (ns("get", "", "pods", P), ns("get", "", "pods", P, "log")), viewer=True),
    Command("kubectl get events -n NS", "kubectl", (ns("list", "", "events"),), viewer=True),
    Command("kubectl get nodes", "kubectl", (cl("list", "", "nodes"),), viewer=True),
    Command("kubectl apply -f job.yaml (each job kind)",
            "kubectl apply: GET the object, then POST it (or PATCH an existing one)",
            tuple(r for g, res in JOBS for r in (ns("get", g, res, J), ns("create", g, res), ns("patch", g, res, J)))),
    Command("kubectl delete KIND J -n NS (each job kind)", "kubectl",
            tuple(ns("delete", g, res, J) for g, res in JOBS)),
    # hyp create/delete hyp-jumpstart-endpoint and hyp-custom-endpoint, hyp create/delete hyp-space make the same
    # namespaced create/get/delete calls on the operators' kinds as kubectl does.
    *(Command(f"kubectl apply -f {what}.yaml / kubectl delete (each {what} kind)",
              "kubectl apply: GET the object, then POST it (or PATCH an existing one); kubectl delete",
              tuple(r for g, res in kinds for r in (ns("get", g, res, J), ns("create", g, res),
                                                    ns("patch", g, res, J), ns("delete", g, res, J))))
      for what, kinds in (("inference", INFERENCE_KINDS), ("space", SPACES_KINDS))),
)

# Granted beyond the commands above, and why (verb, group, resource): the verbs kubectl uses on the same objects.
EXTRA = {
    "watch": "kubectl get --watch (and the HyperPod CLI's Python client) on anything it may list",
    "update": "kubectl replace / edit of a job",
    "list": "kubectl get <kind> of each job kind",
    "get": "kubectl get <kind> NAME of each object it may list",
}


def _fill(req: Request, team, other) -> Request:
    sub = {NS: team.namespace, OTHER: other.namespace, CQ: team.cluster_queue}
    return Request(req.verb, req.group, req.resource, req.subresource, sub.get(req.name, req.name),
                   sub.get(req.namespace, req.namespace) if req.namespace is not None else None, req.url)


def _load(mutate=None):
    data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
    if mutate:
        mutate(data)
    plan = build_plan(parse_spec(data, today=TODAY))
    return plan, Authorizer(render(plan).all())


@pytest.fixture(scope="module")
def enterprise_rbac():
    return _load()


def _teams(plan, command=None):
    """(team, another team) pairs; with ``command``, only teams approved for the workload kinds it touches."""
    teams = list(plan.tenants)
    pairs = [(t, teams[(i + 1) % len(teams)]) for i, t in enumerate(teams)]
    return [(t, o) for t, o in pairs if command is None or _approved(t, command)]


WORKLOAD_RESOURCES = {(k.group, k.resource) for k in WORKLOAD_KINDS}


def _approved(team, command) -> bool:
    mine = {(k.group, k.resource) for k in kinds_for(team)}
    return all((r.group, r.resource) in mine for r in command.calls if (r.group, r.resource) in WORKLOAD_RESOURCES)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.line)
def test_a_team_not_approved_for_a_kind_cannot_write_it(command, enterprise_rbac):
    """inference-platform (approved: inference) cannot create a HyperPodPyTorchJob; its writes are refused."""
    plan, authz = enterprise_rbac
    for team, other in (p for p in _teams(plan) if not _approved(p[0], command)):
        for req in (_fill(r, team, other) for r in command.calls):
            if (req.group, req.resource) in WORKLOAD_RESOURCES and req.verb in ("create", "patch", "delete"):
                assert not authz.allowed([team.submitters_group], req), f"{team.name}: {command.line}: {req}"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.line)
def test_a_submitter_may_make_every_call_of_the_command_in_the_team_namespace(command, enterprise_rbac):
    plan, authz = enterprise_rbac
    assert _teams(plan, command)
    for team, other in _teams(plan, command):
        for req in (_fill(r, team, other) for r in command.calls):
            assert authz.allowed([team.submitters_group], req), f"{team.name}: {command.line}: {req} refused"


@pytest.mark.parametrize("command", [c for c in COMMANDS if c.viewer], ids=lambda c: c.line)
def test_a_viewer_may_make_every_call_of_a_read_command(command, enterprise_rbac):
    plan, authz = enterprise_rbac
    for team, other in _teams(plan, command):
        for req in (_fill(r, team, other) for r in command.calls):
            assert authz.allowed([team.viewers_group], req), f"{team.name}: {command.line}: {req} refused"


def test_a_viewer_cannot_submit_or_delete(enterprise_rbac):
    plan, authz = enterprise_rbac
    for team, other in _teams(plan):
        for command in (c for c in COMMANDS if not c.viewer and _approved(team, c)):
            writes = [r for r in (_fill(r, team, other) for r in command.calls) if r.verb in ("create", "delete",
                                                                                              "patch")]
            assert writes and not any(authz.allowed([team.viewers_group], r) for r in writes), command.line


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.line)
def test_every_namespaced_call_is_refused_in_another_teams_namespace(command, enterprise_rbac):
    plan, authz = enterprise_rbac
    for team, other in _teams(plan):
        for req in (_fill(r, team, other) for r in command.calls):
            if req.namespace is None:
                continue
            elsewhere = Request(req.verb, req.group, req.resource, req.subresource, req.name, other.namespace)
            assert not authz.allowed([team.submitters_group, team.viewers_group], elsewhere), \
                f"{team.name}: {command.line}: {elsewhere} allowed"


def test_cluster_scoped_calls_name_only_the_teams_own_queue(enterprise_rbac):
    plan, authz = enterprise_rbac
    for team, other in _teams(plan):
        assert authz.allowed([team.submitters_group], cl("get", "kueue.x-k8s.io", "clusterqueues", team.cluster_queue))
        assert not authz.allowed([team.submitters_group],
                                 cl("get", "kueue.x-k8s.io", "clusterqueues", other.cluster_queue))


def test_members_cannot_list_every_namespaces_pods_so_list_cluster_needs_a_cluster_viewer(enterprise_rbac):
    """``hyp list-cluster`` lists the pods of all namespaces to count accelerators in use: granting it would
    show every team's pod specs to every member (AWS: "If users can see resources in all namespaces ... use Role
    and RoleBinding"). Members are refused; a cluster viewer may."""
    plan, authz = enterprise_rbac
    refused = [r for c in COMMANDS for r in c.refused]
    assert refused
    for team, other in _teams(plan):
        for req in refused:
            assert not authz.allowed([team.submitters_group, team.viewers_group], _fill(req, team, other))
    viewer_plan, viewer_authz = _load(_with_viewer)
    for req in refused:
        assert viewer_authz.allowed([CLUSTER_VIEWERS_GROUP], req)


def _granted(authz: Authorizer, groups, namespace: str) -> set[tuple[str, str, str, str]]:
    """(verb, group, resource, scope) every rule reachable by ``groups`` grants in ``namespace`` or cluster-wide."""
    out = set()
    for b in authz.bindings:
        if b["kind"] == "RoleBinding" and b["metadata"]["namespace"] != namespace:
            continue
        if not any(s.get("name") in groups for s in b.get("subjects") or []):
            continue
        role = authz._role(b)
        scope = "ns" if b["kind"] == "RoleBinding" else "cluster"
        for rule in (role or {}).get("rules") or []:
            for verb in rule["verbs"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        out.add((verb, group, resource, scope))
    return out


def test_the_rbac_grants_members_nothing_no_command_uses(enterprise_rbac):
    plan, authz = enterprise_rbac
    for team, other in _teams(plan):
        used = {(r.verb, r.group, f"{r.resource}/{r.subresource}" if r.subresource else r.resource)
                for c in COMMANDS for r in (_fill(x, team, other) for x in c.calls) if not r.url}
        used_resources = {(g, res) for _, g, res in used}
        for verb, group, resource, scope in sorted(_granted(authz, {team.viewers_group, team.submitters_group},
                                                            team.namespace)):
            if (verb, group, resource) in used:
                continue
            assert verb in EXTRA and (group, resource) in used_resources, \
                f"{team.name}: {verb} {resource}.{group or 'core'} ({scope}) is granted but no command uses it"


def test_opt_ins_are_not_granted_without_the_team_asking(enterprise_rbac):
    plan, authz = enterprise_rbac
    for team, _ in _teams(plan):
        groups = [team.submitters_group]
        exec_ = Request("create", "", "pods", "exec", P, team.namespace)
        assert authz.allowed(groups, exec_) is team.pod_exec
        if not team.write_secrets:
            assert not authz.allowed(groups, Request("get", "", "secrets", namespace=team.namespace))
        if not team.write_config_maps:
            assert not authz.allowed(groups, Request("delete", "", "configmaps", name=f"training-config-{J}",
                                                     namespace=team.namespace))


# --- cluster.viewers and cluster.memberClusterReads --------------------------------------------------------------

VIEWER = "arn:aws:iam::111111111111:role/Dashboard"


def _with_viewer(data):
    data["cluster"]["viewers"] = [VIEWER]


def test_a_cluster_viewer_reads_every_teams_jobs_and_queues_and_acts_on_nothing():
    plan, authz = _load(_with_viewer)
    assert next(p for p in plan.principals if p.principal_arn == VIEWER).groups == (CLUSTER_VIEWERS_GROUP,)
    g = [CLUSTER_VIEWERS_GROUP]
    for team in plan.tenants:
        for group, resource in (("", "pods"), ("", "events"), HPJ, ("batch", "jobs"),
                                ("kubeflow.org", "pytorchjobs"), ("kueue.x-k8s.io", "workloads"),
                                ("kueue.x-k8s.io", "localqueues")):
            assert authz.allowed(g, Request("list", group, resource, namespace=team.namespace)), resource
        assert authz.allowed(g, cl("get", "kueue.x-k8s.io", "clusterqueues", team.cluster_queue))
        for req in (ns("create", *HPJ), ns("delete", "batch", "jobs", J), ns("patch", "kueue.x-k8s.io", "workloads", "w"),
                    ns("get", "", "pods", P, "log"), ns("create", "", "pods", P, "exec"), ns("get", "", "secrets"),
                    ns("list", "", "configmaps")):
            assert not authz.allowed(g, _fill(req, team, team)), req


def test_nobody_but_cluster_viewers_and_admins_sees_every_teams_tasks_by_default(enterprise_rbac):
    """AWS: by default every Studio user sees jobs in all namespaces; restrict it by namespace. Without
    cluster.viewers no group of the spec may list pods or jobs at cluster scope."""
    plan, authz = enterprise_rbac
    everyone = {g for t in plan.tenants for g in (t.viewers_group, t.submitters_group)}
    for group, resource in (("", "pods"), ("", "events"), HPJ, ("batch", "jobs"), ("kueue.x-k8s.io", "workloads")):
        assert not authz.allowed(everyone, cl("list", group, resource))
    assert not any(o["kind"] == "ClusterRole" and o["metadata"]["name"] == "hyperpod-gov-cluster-viewer"
                   for o in render(plan).cluster)


def test_member_cluster_reads_off_leaves_members_their_namespaces_only():
    plan, authz = _load(lambda d: d["cluster"].update(memberClusterReads=False))
    for team, other in _teams(plan):
        assert not authz.allowed([team.submitters_group], cl("list", "", "nodes"))
        assert not authz.allowed([team.submitters_group], cl("list", "", "namespaces"))
        own = kinds_for(team)[0]  # the team still creates what it is approved for, in its namespace
        assert authz.allowed([team.submitters_group], _fill(ns("create", own.group, own.resource), team, other))


# --- the evaluator on known cases --------------------------------------------------------------------------------

ROLE = {"kind": "Role", "metadata": {"name": "r", "namespace": "a"},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list"]},
                  {"apiGroups": ["batch"], "resources": ["jobs"], "resourceNames": ["only"], "verbs": ["get", "delete"]}]}
CLUSTER_ROLE = {"kind": "ClusterRole", "metadata": {"name": "c"},
                "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]}


def _binding(kind, ref_kind, ref, group="g", namespace=None):
    meta = {"name": "b"} | ({"namespace": namespace} if namespace else {})
    return {"kind": kind, "metadata": meta, "roleRef": {"kind": ref_kind, "name": ref},
            "subjects": [{"kind": "Group", "name": group}]}


@pytest.mark.parametrize("objects, groups, req, expected", [
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"], Request("get", "", "pods", namespace="a"), True),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"], Request("get", "", "pods", namespace="b"), False),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["h"], Request("get", "", "pods", namespace="a"), False),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"], Request("get", "", "pods"), False),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("get", "", "pods", "log", "p", "a"), True),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("create", "", "pods", "exec", "p", "a"), False),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("get", "", "services", "", "", "a"), False),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("delete", "batch", "jobs", "", "only", "a"), True),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("delete", "batch", "jobs", "", "other", "a"), False),
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("list", "batch", "jobs", "", "", "a"), False),  # resourceNames never match a list
    ([ROLE, _binding("RoleBinding", "Role", "r", namespace="a")], ["g"],
     Request("get", "apps", "pods", "", "", "a"), False),  # wrong API group
    ([CLUSTER_ROLE, _binding("ClusterRoleBinding", "ClusterRole", "c")], ["g"], Request("list", "", "nodes"), True),
    ([CLUSTER_ROLE, _binding("RoleBinding", "ClusterRole", "c", namespace="a")], ["g"],
     Request("list", "", "nodes"), False),  # a RoleBinding never grants cluster-scoped requests
    ([ROLE, _binding("ClusterRoleBinding", "Role", "r")], ["g"], Request("get", "", "pods", namespace="a"), False),
    ([], [], Request("get", url="/version"), True),  # bootstrap: system:public-info-viewer
    ([], [], Request("get", url="/metrics"), False),
    ([], [], Request("create", "authorization.k8s.io", "selfsubjectaccessreviews"), True),  # system:basic-user
])
def test_the_evaluator_follows_kubernetes_rbac(objects, groups, req, expected):
    assert Authorizer(objects).allowed(groups, req) is expected


def test_wildcards_match_as_in_kubernetes():
    assert rule_allows({"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, Request("delete", "x", "y", "z"))
    assert rule_allows({"apiGroups": [""], "resources": ["*/log"], "verbs": ["get"]}, Request("get", "", "pods", "log"))
    assert not rule_allows({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}, Request("get", "", "pods", "log"))
    assert rule_allows({"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}, Request("get", url="/apis/batch/v1"))
