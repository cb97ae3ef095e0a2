"""The expected state: the plan in the APIs' member names, checked by hand against the enterprise example."""

from __future__ import annotations

import argparse
from types import SimpleNamespace
from typing import Any

import pytest

from hyperpod_gov.live import configure_drift, configure_import, expected_state, run_drift, run_import
from hyperpod_gov.live.aws import Caller, LiveError, boto3_clients
from hyperpod_gov.live.expected import ExpectedAccessEntry, ExpectedAddon, ExpectedPodIdentity
from tests.conftest import EXAMPLES

from .conftest import spec_and_plan


@pytest.fixture(scope="module")
def enterprise_expected():
    spec, plan = spec_and_plan(EXAMPLES / "enterprise.yaml")
    return expected_state(plan)


def test_speech_quota_is_what_the_spec_says(enterprise_expected):
    speech = next(q for q in enterprise_expected.quotas if q.team == "speech")
    assert (speech.name, speech.activation_state) == ("speech-quota", "Enabled")
    assert speech.config == {
        "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 25}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
        "PreemptTeamTasks": "Never",
    }
    assert speech.target == {"TeamName": "speech", "FairShareWeight": 50}


def test_a_dont_lend_team_sets_no_borrow_limit(enterprise_expected):
    fm = next(q for q in enterprise_expected.quotas if q.team == "foundation-models")
    assert fm.config["ResourceSharingConfig"] == {"Strategy": "DontLend"}


def test_the_cluster_policy_lists_the_priority_classes_by_name(enterprise_expected):
    policy = enterprise_expected.policy
    assert policy is not None and policy.name == "acme-ml-policy"
    assert policy.scheduler_config == {
        "PriorityClasses": [{"Name": "experimentation", "Weight": 20}, {"Name": "inference", "Weight": 100},
                            {"Name": "training", "Weight": 80}],
        "FairShare": "Enabled",
    }


def test_access_entries_admins_are_checked_for_presence_only(enterprise_expected):
    entries = {e.principal_arn: e for e in enterprise_expected.access_entries}
    assert entries["arn:aws:iam::111111111111:role/PlatformAdmin"] == ExpectedAccessEntry(
        "arn:aws:iam::111111111111:role/PlatformAdmin", None, ())
    assert entries["arn:aws:iam::111111111111:role/SpeechScientist"].groups == ("hyperpod-ns-speech-submitters",)
    # 5 teams x (viewer + submitter) + 1 admin + applied-research's Unified Studio project role (a submitter)
    assert entries["arn:aws:iam::111111111111:role/datazone_usr_role_5b3jcjsy4ar7zr_c1ncty2ag0mhmf"].groups == (
        "hyperpod-ns-applied-research-submitters",)
    assert len(entries) == 12


def test_pod_identities_and_addons(enterprise_expected):
    assert ExpectedPodIdentity(
        "speech", "hyperpod-ns-speech", "trainer", "arn:aws:iam::111111111111:role/acme-ml-speech-trainer",
        "arn:aws:iam::222222222222:role/speech-trainer-data") in enterprise_expected.pod_identities
    assert ExpectedAddon("amazon-sagemaker-hyperpod-taskgovernance", "v1.6.0-eksbuild.1") in enterprise_expected.addons
    assert ExpectedAddon("coredns", "v1.12.4-eksbuild.1") in enterprise_expected.addons  # pinned by default


def test_kueue_mode_expects_no_policy_no_quota_and_no_task_governance_addon():
    spec, plan = spec_and_plan(EXAMPLES / "startup.yaml")
    expected = expected_state(plan)
    assert (expected.mode, expected.policy, expected.quotas) == ("kueue", None, ())
    assert "amazon-sagemaker-hyperpod-taskgovernance" not in {a.name for a in expected.addons}
    assert (expected.cluster_name, expected.eks_cluster_name, expected.region) == (
        "gpu-cluster", "gpu-cluster-eks", "us-east-1")


def test_the_commands_register_on_a_subparser_as_the_cli_will():
    parser = argparse.ArgumentParser(prog="hyperpod-gov")
    sub = parser.add_subparsers(dest="command", required=True)
    configure_drift(sub.add_parser("drift"))
    configure_import(sub.add_parser("import"))
    args = parser.parse_args(["drift", "spec.yaml", "--format", "json", "--profile", "p", "--region", "eu-west-1"])
    assert (args.func, args.spec, args.format, args.profile, args.region) == (
        run_drift, "spec.yaml", "json", "p", "eu-west-1")
    args = parser.parse_args(["import", "--cluster-name", "c", "--out", "x.yaml"])
    assert (args.func, args.cluster_name, args.out, args.region, args.profile) == (run_import, "c", "x.yaml", None, None)


class _NoPaginator:
    """A stand-in client whose list call has no botocore paginator: the NextToken loop must follow the pages."""

    meta = SimpleNamespace(method_to_api_mapping={"list_things": "ListThings"})

    def __init__(self) -> None:
        self.tokens: list[Any] = []

    def can_paginate(self, method: str) -> bool:
        return False

    def list_things(self, **params: Any) -> dict[str, Any]:
        self.tokens.append(params.get("NextToken"))
        pages = {None: {"Things": [1, 2], "NextToken": "b"}, "b": {"Things": [3], "NextToken": "c"},
                 "c": {"Things": []}}
        return pages[params.get("NextToken")]


def test_list_calls_without_a_paginator_follow_next_token():
    client = _NoPaginator()
    assert list(Caller(client, "sagemaker").pages("list_things", "Things", Filter="x")) == [1, 2, 3]
    assert client.tokens == [None, "b", "c"]
    assert Caller(client, "sagemaker").action("list_things") == "sagemaker:ListThings"


def test_no_region_anywhere_is_named(tmp_path, monkeypatch):
    (tmp_path / "config").write_text("[default]\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    factory = boto3_clients()
    with pytest.raises(LiveError, match="no AWS region is configured; pass --region"):
        factory("sagemaker")
