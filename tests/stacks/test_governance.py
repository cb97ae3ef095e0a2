"""Governance stacks: task-governance quotas, cluster policy, access entries, workload identities."""

from __future__ import annotations

import json

import pytest

from hyperpod_gov.charts.admission import PARAMS_NAMESPACE
from tests.synth_helpers import resources


def all_resources(synthesized, type_):
    return [(name, i, p) for name, t in sorted(synthesized.templates.items()) for i, p in resources(t, type_)]


def quotas(synthesized) -> dict[str, dict]:
    return {p["ComputeQuotaTarget"]["TeamName"]: p for _, _, p in all_resources(synthesized, "AWS::SageMaker::ComputeQuota")}


def test_cluster_policy_has_priority_classes_and_fair_share(enterprise):
    ((_, _, policy),) = all_resources(enterprise, "AWS::SageMaker::ClusterSchedulerConfig")
    assert policy["SchedulerConfig"]["FairShare"] == "Enabled"
    assert policy["SchedulerConfig"]["PriorityClasses"] == [
        {"Name": "experimentation", "Weight": 20}, {"Name": "inference", "Weight": 100}, {"Name": "training", "Weight": 80}
    ]
    assert "HyperPod" in json.dumps(policy["ClusterArn"])  # imported from the capacity stack


def test_enterprise_quotas_sum_to_80_gpus(enterprise):
    q = quotas(enterprise)
    owned = {team: p["ComputeQuotaConfig"]["ComputeQuotaResources"] for team, p in q.items()}
    assert owned == {
        "foundation-models": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 20}],
        "inference-platform": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 20}],
        "applied-research": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 5}],
        "recommendations": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 10}],
        "speech": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 25}],
    }
    assert sum(r[0]["Accelerators"] for r in owned.values()) == 80


def test_enterprise_teams_1_and_2_neither_lend_nor_borrow(enterprise):
    q = quotas(enterprise)
    for team in ("foundation-models", "inference-platform"):
        assert q[team]["ComputeQuotaConfig"]["ResourceSharingConfig"] == {"Strategy": "DontLend"}


def test_enterprise_borrow_limits_and_weights(enterprise):
    q = quotas(enterprise)
    sharing = {t: p["ComputeQuotaConfig"]["ResourceSharingConfig"] for t, p in q.items()}
    assert sharing["applied-research"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 150}  # 5 GPUs -> at most 7
    assert sharing["recommendations"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 100}
    assert sharing["speech"] == {"Strategy": "LendAndBorrow", "BorrowLimit": 50}
    weights = {t: p["ComputeQuotaTarget"]["FairShareWeight"] for t, p in q.items()}
    assert weights == {"foundation-models": 100, "inference-platform": 100, "applied-research": 100,
                       "recommendations": 75, "speech": 50}
    assert q["speech"]["ComputeQuotaConfig"]["PreemptTeamTasks"] == "Never"
    tags = {t["Key"]: t["Value"] for t in q["speech"]["Tags"]}
    assert tags["hyperpod-gov:cost-owner"] == "finance@example.com"
    assert tags["hyperpod-gov:review-by"] == "2027-06-30"


def test_kueue_mode_has_no_task_governance_resources(startup):
    assert not all_resources(startup, "AWS::SageMaker::ComputeQuota")
    assert not all_resources(startup, "AWS::SageMaker::ClusterSchedulerConfig")


def manifests_of(synthesized):
    return all_resources(synthesized, "Custom::AWSCDK-EKS-KubernetesResource")


def test_team_manifests_wait_for_the_namespace_hyperpod_creates_with_the_quota(enterprise):
    for name, template in enterprise.templates.items():
        for logical_id, props in resources(template, "Custom::AWSCDK-EKS-KubernetesResource"):
            objs = json.loads(props["Manifest"])
            # a team's manifest also holds its admission parameters, in the platform's namespace
            namespaces = {o["metadata"].get("namespace") for o in objs} - {None, PARAMS_NAMESPACE}
            if not {n for n in namespaces if n.startswith("hyperpod-ns-")}:
                continue  # cluster-wide objects (and the platform namespaces' policies), in the governance stack
            (ns,) = namespaces
            team = ns.removeprefix("hyperpod-ns-")
            depends = template["Resources"][logical_id].get("DependsOn", [])
            quota_ids = [i for i, p in resources(template, "AWS::SageMaker::ComputeQuota")
                         if p["ComputeQuotaTarget"]["TeamName"] == team]
            waiters = [i for i, p in resources(template, "Custom::AWSCDK-EKS-KubernetesObjectValue")
                       if p["ObjectName"] == ns and i in depends]
            assert len(quota_ids) == 1 and len(waiters) == 1, (name, team)
            waiter = template["Resources"][waiters[0]]
            assert waiter["Properties"]["ObjectType"] == "namespace"
            assert waiter["Properties"]["TimeoutSeconds"] == 900
            assert quota_ids[0] in waiter["DependsOn"], (name, team)


def test_access_entries_map_principals_to_groups_without_access_policies(enterprise):
    entries = {p["PrincipalArn"]: p for _, _, p in all_resources(enterprise, "AWS::EKS::AccessEntry")
               if isinstance(p["PrincipalArn"], str) and "KubernetesGroups" in p}
    speech_submitter = entries["arn:aws:iam::111111111111:role/SpeechScientist"]
    assert speech_submitter["KubernetesGroups"] == ["hyperpod-ns-speech-submitters"]
    assert speech_submitter["Type"] == "STANDARD"
    assert entries["arn:aws:iam::111111111111:role/SpeechViewer"]["KubernetesGroups"] == ["hyperpod-ns-speech-viewers"]
    team_principals = {a for t in enterprise.spec.teams for a in (*t.access.viewers, *t.access.submitters)}
    # A Unified Studio project role gets exactly a submitter's access to its team.
    project_role = "arn:aws:iam::111111111111:role/datazone_usr_role_5b3jcjsy4ar7zr_c1ncty2ag0mhmf"
    assert entries[project_role]["KubernetesGroups"] == ["hyperpod-ns-applied-research-submitters"]
    assert set(entries) == team_principals | {project_role}
    for entry in entries.values():
        assert "AccessPolicies" not in entry


def test_no_team_principal_gets_a_cluster_wide_access_policy(enterprise):
    team_principals = {a for t in enterprise.spec.teams for a in (*t.access.viewers, *t.access.submitters)}
    for _, _, entry in all_resources(enterprise, "AWS::EKS::AccessEntry"):
        if isinstance(entry["PrincipalArn"], str) and entry["PrincipalArn"] in team_principals:
            assert not entry.get("AccessPolicies"), entry


def test_workload_identities_trust_pod_identity_and_assume_only_their_target(enterprise):
    associations = all_resources(enterprise, "AWS::EKS::PodIdentityAssociation")
    def expected_target(w):
        if w.target_role is not None:
            account = next(c.id for c in enterprise.spec.accounts.consumers if c.name == w.target_role.account)
            return f":iam::{account}:role/{w.target_role.name}"
        return w.target_role_arn

    expected = {(f"hyperpod-ns-{t.name}", w.service_account): expected_target(w)
                for t in enterprise.spec.teams for w in t.workload_identities}
    found = {(p["Namespace"], p["ServiceAccount"]): p.get("TargetRoleArn") for _, _, p in associations}
    granted = {(f"hyperpod-ns-{t.name}", w.service_account) for t in enterprise.spec.teams
               for w in t.workload_identities if not w.grants.empty or t.storage.bucket}
    assert set(found) == set(expected)
    for key, target in expected.items():
        if target is None:
            assert found[key] is None, key
        else:
            assert target in json.dumps(found[key]), key
    for stack, _, assoc in associations:
        template = enterprise.templates[stack]
        role_id = assoc["RoleArn"]["Fn::GetAtt"][0]
        role = template["Resources"][role_id]["Properties"]
        (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
        # Only EKS Pod Identity of this cluster, in this account (the confused-deputy conditions AWS documents),
        # for this namespace and service account (the session tags Pod Identity sets).
        eks_arn = "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks"
        assert trust == {"Action": ["sts:AssumeRole", "sts:TagSession"], "Effect": "Allow",
                         "Principal": {"Service": "pods.eks.amazonaws.com"},
                         "Condition": {"ArnEquals": {"aws:SourceArn": eks_arn},
                                       "StringEquals": {"aws:SourceAccount": "111111111111",
                                                        "aws:RequestTag/eks-cluster-arn": eks_arn,
                                                        "aws:RequestTag/kubernetes-namespace": assoc["Namespace"],
                                                        "aws:RequestTag/kubernetes-service-account":
                                                            assoc["ServiceAccount"]}}}
        policies = [p for _, p in resources(template, "AWS::IAM::Policy")
                    if {"Ref": role_id} in p["Roles"]]
        if assoc.get("TargetRoleArn"):
            (policy,) = policies
            assert policy["PolicyDocument"]["Statement"] == [{
                "Action": ["sts:AssumeRole", "sts:TagSession"], "Effect": "Allow",
                "Resource": assoc["TargetRoleArn"], "Sid": "AssumeTargetRole"}]
        elif (assoc["Namespace"], assoc["ServiceAccount"]) in granted:
            (policy,) = policies  # its grants in the capacity account (tests/constructs/test_data.py)
            assert "AssumeTargetRole" not in json.dumps(policy)
        else:
            assert not policies and "ManagedPolicyArns" not in role


def test_k8s_manifests_are_written_for_gitops(enterprise):
    k8s = enterprise.out_dir / "k8s"
    assert (k8s / "cluster.yaml").exists()
    assert sorted(p.stem for p in (k8s / "teams").glob("*.yaml")) == sorted(t.name for t in enterprise.spec.teams)


def test_every_team_quota_is_enabled(enterprise):
    """A quota left Disabled would keep the team's namespace but let it run nothing under the quota."""
    quotas = [p for t in enterprise.templates.values() for _, p in resources(t, "AWS::SageMaker::ComputeQuota")]
    assert len(quotas) == len(enterprise.spec.teams)
    assert {p["ActivationState"] for p in quotas} == {"Enabled"}
