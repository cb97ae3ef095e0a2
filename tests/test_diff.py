"""`hyperpod-gov diff`: what a change does, in plain words, before the resource-level diff."""

from __future__ import annotations

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.diff import governance_diff
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY

ENTERPRISE = EXAMPLES / "enterprise.yaml"


def changed(tmp_path, mutate):
    data = read_yaml(ENTERPRISE)
    mutate(data)
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_changed_borrow_limit_is_named_in_plain_words(tmp_path, capsys):
    path = changed(tmp_path, lambda d: d["teams"][2]["sharing"].update(borrowLimitPercent=100))
    assert main(["diff", str(ENTERPRISE), str(path), "--governance-only"]) == 0
    out = capsys.readouterr().out
    assert ("team applied-research may borrow: up to 7 GPUs (ml.p5.48xlarge) (150%) -> "
            "up to 5 GPUs (ml.p5.48xlarge) (100%)") in out


def test_a_removed_and_an_added_team_are_named(tmp_path, capsys):
    def swap(d):
        removed = d["teams"].pop(1)  # inference-platform, 20 GPUs
        removed["name"] = "vision"
        removed["access"]["submitters"] = ["arn:aws:iam::111111111111:role/VisionScientist"]
        removed["access"]["viewers"] = []
        d["teams"].append(removed)

    path = changed(tmp_path, swap)
    assert main(["diff", str(ENTERPRISE), str(path), "--governance-only", "--fail"]) == 1
    out = capsys.readouterr().out
    assert "team inference-platform removed: its quota, access, workload identities and team objects are deleted" in out
    assert "team vision added: owns 20 GPUs (ml.p5.48xlarge); can lend nothing (DontLend)" in out
    assert "1 submitter(s)" in out


def test_people_quotas_and_priorities_are_compared():
    old = parse_spec(read_yaml(ENTERPRISE), today=TODAY)
    data = read_yaml(ENTERPRISE)
    data["teams"][4]["quota"][0]["accelerators"] = 20
    data["teams"][4]["access"]["submitters"].append("arn:aws:iam::111111111111:role/SpeechIntern")
    data["scheduler"]["priorityClasses"][2]["weight"] = 30
    lines = governance_diff(build_plan(old), build_plan(parse_spec(data, today=TODAY)))
    assert "team speech owns: 25 GPUs (ml.p5.48xlarge) -> 20 GPUs (ml.p5.48xlarge)" in lines
    assert "team speech may borrow: up to 12 GPUs (ml.p5.48xlarge) (50%) -> up to 10 GPUs (ml.p5.48xlarge) (50%)" in lines
    assert ("team speech can submit: + arn:aws:iam::111111111111:role/SpeechIntern (privilege: runs work on the "
            "team's quota)") in lines
    assert "priority class experimentation weight: 20 -> 30" in lines


def test_no_change_says_none(capsys):
    assert main(["diff", str(ENTERPRISE), str(ENTERPRISE), "--governance-only", "--fail"]) == 0
    assert "Governance changes" in capsys.readouterr().out


def test_resource_diff_follows_the_governance_diff(tmp_path, capsys):
    path = changed(tmp_path, lambda d: d["teams"][2]["sharing"].update(borrowLimitPercent=100))
    assert main(["diff", str(ENTERPRISE), str(path)]) == 0
    out = capsys.readouterr().out
    governance, resources = out.split("Resource changes")
    assert "applied-research may borrow" in governance
    changes = [line.strip() for line in resources.splitlines()[1:]]
    # The quota changes in place; the cluster and team dashboards draw the new borrowing limit. Nothing else moves.
    assert [c.split("/")[0] + " " + c.rsplit(" ", 1)[1] for c in changes] == [
        "~ acme-ml-monitoring (AWS::CloudWatch::Dashboard)",
        "~ acme-ml-teams-06 (AWS::CloudWatch::Dashboard)",
        "~ acme-ml-teams-06 (AWS::SageMaker::ComputeQuota)",
    ], changes
    assert changes[2].startswith("~ acme-ml-teams-06/appliedresearchQuota")


def test_pausing_and_resuming_a_team_say_what_happens_to_its_work():
    old = build_plan(parse_spec(read_yaml(ENTERPRISE), today=TODAY))
    data = read_yaml(ENTERPRISE)
    data["teams"][4]["active"] = False
    paused = build_plan(parse_spec(data, today=TODAY))
    lines = governance_diff(old, paused)
    assert lines == ["team speech paused: nothing new of the team is admitted (ComputeQuota ActivationState: "
                     "Disabled; kueue mode: ClusterQueue stopPolicy: Hold); work already admitted keeps running "
                     "until it ends; its queued work waits; its namespace, access and objects stay"]
    assert governance_diff(paused, old) == ["team speech resumed: its queued work is admitted again, within its quota"]


def test_partitions_and_vcpu_quotas_are_compared():
    from tests.plan.test_allocations import allocation_spec

    old_data = allocation_spec()
    new_data = allocation_spec()
    new_data["teams"][0]["quota"][0]["partitions"]["count"] = 28
    new_data["teams"][1]["quota"][2].update(vcpu=4, memoryGib=16)
    lines = governance_diff(build_plan(parse_spec(old_data, today=TODAY)),
                            build_plan(parse_spec(new_data, today=TODAY)))
    assert "team team-a owns: 56 x mig-1g.10gb (ml.p5.48xlarge) -> 28 x mig-1g.10gb (ml.p5.48xlarge)" in lines
    assert ("team team-b owns: 2 GPUs (ml.g5.8xlarge), 8 vCPU + 32 GiB (ml.m5.2xlarge), 28 x mig-1g.10gb "
            "(ml.p5.48xlarge) -> 2 GPUs (ml.g5.8xlarge), 4 vCPU + 16 GiB (ml.m5.2xlarge), 28 x mig-1g.10gb "
            "(ml.p5.48xlarge)") in lines


def _diff(mutate) -> list[str]:
    old = parse_spec(read_yaml(ENTERPRISE), today=TODAY)
    data = read_yaml(ENTERPRISE)
    mutate(data)
    return governance_diff(build_plan(old), build_plan(parse_spec(data, today=TODAY)))


def _team(data, name):
    return next(t for t in data["teams"] if t["name"] == name)


KMS = "arn:aws:kms:us-east-1:222222222222:key/99999999-5f60-4718-8a9b-0c1d2e3f4a5b"
PRIVILEGE_CHANGES = [
    ("a new cluster admin", lambda d: d["cluster"]["admins"].append("arn:aws:iam::111111111111:role/Intern"),
     "cluster admins: + arn:aws:iam::111111111111:role/Intern (privilege: cluster-admin in every namespace)"),
    ("a public endpoint", lambda d: d["cluster"].update(endpointAccess="public-and-private",
                                                        adminCidrs=["198.51.100.0/24"]),
     "API endpoint: private -> public-and-private (privilege: the Kubernetes API is reachable from the internet "
     "(adminCidrs))"),
    ("a wider admin network", lambda d: d["cluster"].update(endpointAccess="public-and-private",
                                                            adminCidrs=["198.51.100.0/24"]),
     "admin CIDRs: + 198.51.100.0/24 (privilege: one more network reaches the Kubernetes API)"),
    ("a trusted account", lambda d: d["accounts"].update(trusted=["444444444444"]),
     "trusted accounts: + 444444444444 (privilege: principals of this account may now be given cluster access)"),
    ("exec into pods", lambda d: _team(d, "speech")["access"].update(podExec=True),
     "team speech exec into pods: not allowed -> allowed (privilege: submitters get a shell in the team's pods)"),
    ("writing Secrets", lambda d: _team(d, "speech")["access"].update(writeSecrets=True),
     "team speech write Secrets: not allowed -> allowed (privilege: submitters read and write the team's Secrets)"),
    ("writing ConfigMaps", lambda d: _team(d, "speech")["access"].update(writeConfigMaps=True),
     "team speech write ConfigMaps: not allowed -> allowed (privilege: submitters write the team's ConfigMaps)"),
    ("more egress", lambda d: _team(d, "speech").update(egress=[{"cidr": "10.60.0.0/16", "ports": [443]}]),
     "team speech egress: + 10.60.0.0/16 TCP [443] (privilege: the team's pods reach this network)"),
    ("a wider S3 grant", lambda d: _team(d, "speech")["workloadIdentities"][0]["targetRole"]["s3"].append(
        {"bucket": "acme-research-audio", "prefix": "raw/", "access": "read-write"}),
     "team speech data grant: + s3://acme-research-audio/raw/* read-write for trainer (privilege: the team's pods "
     "reach this data)"),
    ("a new KMS key", lambda d: _team(d, "speech")["workloadIdentities"][0]["targetRole"]["kmsKeys"].append(KMS),
     f"team speech data grant: + KMS key {KMS} for trainer (privilege: the team's pods reach this data)"),
    ("the dependencies chart from elsewhere", lambda d: d["cluster"].update(
        dependenciesChart={"oci": "oci://999999999999.dkr.ecr.us-east-1.amazonaws.com/charts", "version": "0.1.0"}),
     "dependencies chart: oci oci://111111111111.dkr.ecr.us-east-1.amazonaws.com/hyperpod-dependencies chart "
     "hyperpod-dependencies version 0.1.0 -> oci oci://999999999999.dkr.ecr.us-east-1.amazonaws.com/charts chart "
     "charts version 0.1.0 (privilege: code that runs with cluster-wide rights now comes from another source)"),
]


@pytest.mark.parametrize("mutate, line", [c[1:] for c in PRIVILEGE_CHANGES], ids=[c[0] for c in PRIVILEGE_CHANGES])
def test_every_privilege_change_is_named_and_marked(mutate, line):
    assert line in _diff(mutate)


def test_relaxing_pod_security_is_a_privilege_change():
    old = build_plan(parse_spec(read_yaml(ENTERPRISE), today=TODAY))
    data = read_yaml(ENTERPRISE)
    _team(data, "speech")["podSecurity"] = "restricted"
    strict = build_plan(parse_spec(data, today=TODAY))
    assert governance_diff(old, strict) == ["team speech pod security: baseline -> restricted"]
    assert governance_diff(strict, old) == [
        "team speech pod security: restricted -> baseline (privilege: the team's pods may run with fewer "
        "restrictions)"]


def test_narrowing_privilege_is_named_without_the_mark():
    lines = _diff(lambda d: _team(d, "speech")["access"].update(submitters=[]))
    assert lines == ["team speech can submit: - arn:aws:iam::111111111111:role/SpeechScientist"]


def test_the_cli_counts_the_changes_that_widen_privilege(tmp_path, capsys):
    path = changed(tmp_path, lambda d: d["cluster"]["admins"].append("arn:aws:iam::111111111111:role/Intern"))
    assert main(["diff", str(ENTERPRISE), str(path), "--governance-only"]) == 0
    assert "1 of these widen privilege (marked 'privilege'): review them first" in capsys.readouterr().out
