"""The Kubernetes side of the worker credential (charts/multikueue_credential.py), with each dispatch member's
MultiKueue objects: one namespaced Role granting one verb set on named objects, bound to the group the function's
EKS access entry maps its role to."""

from __future__ import annotations

import pytest

from hyperpod_gov.plan.multikueue import WORKER_ACCOUNT
from hyperpod_gov.plan.multikueue_credential import COPIER_GROUP, MINTER_GROUP
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def objects():
    from hyperpod_gov import load_fleet
    from hyperpod_gov.fleet_construct import fleet_cluster_objects
    from hyperpod_gov.plan.fleet import build_fleet

    return fleet_cluster_objects(build_fleet(load_fleet(EXAMPLES / "fleet.yaml")))


def _named(objs, kind, name):
    (obj,) = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    return obj


@pytest.mark.parametrize("worker", ["use1-train", "usw2-train"])
def test_the_minter_may_only_create_tokens_for_the_one_multikueue_service_account(objects, worker):
    objs = objects[worker]
    role = _named(objs, "Role", "hyperpod-gov-multikueue-minter")
    assert role["metadata"]["namespace"] == "kueue-system"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["serviceaccounts/token"],
                              "resourceNames": [WORKER_ACCOUNT], "verbs": ["create"]}]
    # the service account named is the one the worker's MultiKueue objects create, in the same namespace
    account = _named(objs, "ServiceAccount", WORKER_ACCOUNT)
    assert account["metadata"]["namespace"] == role["metadata"]["namespace"]
    binding = _named(objs, "RoleBinding", "hyperpod-gov-multikueue-minter")
    assert binding["metadata"]["namespace"] == "kueue-system"
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "hyperpod-gov-multikueue-minter"}
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": MINTER_GROUP}]


def test_the_copier_may_only_apply_the_kubeconfig_secrets_kueue_reads(objects):
    objs = objects["use1-mgr"]
    role = _named(objs, "Role", "hyperpod-gov-multikueue-copier")
    locations = [o["spec"]["clusterSource"]["kubeConfig"]["location"] for o in objs if o["kind"] == "MultiKueueCluster"]
    (rule,) = role["rules"]
    assert rule["resources"] == ["secrets"] and rule["apiGroups"] == [""]
    assert rule["resourceNames"] == locations == ["use1-train-kubeconfig", "usw2-train-kubeconfig"]
    # server-side apply is a PATCH, authorized as create (of that name) when the Secret does not exist yet;
    # nothing reads a Secret
    assert sorted(rule["verbs"]) == ["create", "patch"]
    binding = _named(objs, "RoleBinding", "hyperpod-gov-multikueue-copier")
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": COPIER_GROUP}]


def test_only_dispatch_members_get_credential_objects(objects):
    assert set(objects) == {"use1-mgr", "use1-train", "usw2-train"}  # not use1-hpc (Slurm, not in dispatch)
    assert not any(o["kind"] == "Role" and "minter" in o["metadata"]["name"] for o in objects["use1-mgr"])
    assert not any(o["kind"] == "Role" and "copier" in o["metadata"]["name"] for o in objects["usw2-train"])


def test_no_chart_emits_the_kubeconfig_secret(objects):
    assert not any(o["kind"] == "Secret" for objs in objects.values() for o in objs)
