"""Hostile and careless specs: each is rejected with path, value and fix (or accepted where a person may mean it).

``HOSTILE_SPECS`` is the table of the issue-9 report: input, then the outcome the loader must give.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
import yaml

from hyperpod_gov.spec import SpecError, load_spec, parse_spec
from hyperpod_gov.spec.loader import MAX_DEPTH, MAX_NODES, parse_yaml, read_yaml
from tests.conftest import BASE, TODAY

CYRILLIC_A = "\u0410"


def team(d: dict) -> dict:
    return d["teams"][0]


def public_endpoint(d: dict, cidrs: list[str]) -> None:
    d["cluster"].update(endpointAccess="public-and-private", adminCidrs=cidrs)


# (input, mutation of BASE, expected message fragment or None when the spec must be accepted)
HOSTILE_SPECS: list[tuple[str, Callable[[dict], Any], Optional[str]]] = [
    ('team name "researchers\\n" (trailing newline)', lambda d: team(d).update(name="researchers\n"),
     "teams[0].name: team name is not a DNS-1123 label ('researchers\\n')"),
    ('capacity account id "111111111111\\n"', lambda d: d["accounts"]["capacity"].update(id="111111111111\n"),
     "accounts.capacity.id: is not a 12-digit AWS account id"),
    ("consumer account id in Arabic-Indic digits",
     lambda d: d["accounts"]["consumers"][0].update(id="\u0661" * 12), "accounts.consumers[0].id: is not a 12-digit"),
    ("submitter role ARN with a Cyrillic letter",
     lambda d: team(d)["access"].update(submitters=[f"arn:aws:iam::111111111111:role/{CYRILLIC_A}dmin"]),
     "teams[0].access.submitters[0]: is not an IAM role or user ARN"),
    ('admin role ARN ending in "\\n"', lambda d: d["cluster"].update(admins=["arn:aws:iam::111111111111:role/A\n"]),
     "cluster.admins[0]: is not an IAM role or user ARN"),
    ('service account "trainer\\n"', lambda d: team(d)["workloadIdentities"][0].update(serviceAccount="trainer\n"),
     "serviceAccount: service account name is not a DNS-1123 label"),
    ('region "us-east-1\\n"', lambda d: d["accounts"]["capacity"].update(region="us-east-1\n"),
     "accounts.capacity.region: is not an AWS region name"),
    ('egress CIDR "10.0.0.0/8\\n"', lambda d: team(d).update(egress=[{"cidr": "10.0.0.0/8\n", "ports": [443]}]),
     "teams[0].egress[0].cidr: is not an IPv4 CIDR block"),
    ("team egress to 0.0.0.0/0", lambda d: team(d).update(egress=[{"cidr": "0.0.0.0/0", "ports": [443]}]),
     "teams[0].egress: together reach 3,702,258,688 public internet addresses"),
    ("team egress to 0.0.0.0/1 + 128.0.0.0/1", lambda d: team(d).update(
        egress=[{"cidr": "0.0.0.0/1", "ports": [443]}, {"cidr": "128.0.0.0/1", "ports": [443]}]),
     "set teams[0].allowInternetEgress: true"),
    ("team egress to 0.0.0.0/0 with allowInternetEgress: true", lambda d: team(d).update(
        egress=[{"cidr": "0.0.0.0/0", "ports": [443]}], allowInternetEgress=True), None),
    # A public /8 is the internet's scale already (issue 20: it was accepted, the rule said "more than a /8").
    ("team egress to one /8 of public space (52.0.0.0/8)", lambda d: team(d).update(
        egress=[{"cidr": "52.0.0.0/8", "ports": [443]}]),
     "teams[0].egress: together reach 16,777,216 public internet addresses (a /8 of public space or more)"),
    ("team egress to a public /8 holding a documentation block (203.0.0.0/8)", lambda d: team(d).update(
        egress=[{"cidr": "203.0.0.0/8", "ports": [443]}]), "together reach 16,776,960 public internet addresses"),
    ("team egress to 100.0.0.0/8 (shared space inside, the rest public)", lambda d: team(d).update(
        egress=[{"cidr": "100.0.0.0/8", "ports": [443]}]), "a /8 of public space or more"),
    ("team egress to two adjacent public /9s (52.0.0.0/9 + 52.128.0.0/9)", lambda d: team(d).update(
        egress=[{"cidr": "52.0.0.0/9", "ports": [443]}, {"cidr": "52.128.0.0/9", "ports": [443]}]),
     "set teams[0].allowInternetEgress: true"),
    ("team egress to two public /9s apart (52.0.0.0/9 + 54.0.0.0/9: 2**24 addresses, no /8)", lambda d: team(d).update(
        egress=[{"cidr": "52.0.0.0/9", "ports": [443]}, {"cidr": "54.0.0.0/9", "ports": [443]}]),
     "together reach 16,777,216 public internet addresses"),
    ("team egress to one public /9", lambda d: team(d).update(egress=[{"cidr": "52.0.0.0/9", "ports": [443]}]), None),
    ("team egress to 10.0.0.0/8 (private)", lambda d: team(d).update(
        egress=[{"cidr": "10.0.0.0/8", "ports": [443]}]), None),
    ("team egress to 52.0.0.0/8 with allowInternetEgress: true", lambda d: team(d).update(
        egress=[{"cidr": "52.0.0.0/8", "ports": [443]}], allowInternetEgress=True), None),
    ("team egress to two /8s of public space", lambda d: team(d).update(
        egress=[{"cidr": "52.0.0.0/8", "ports": [443]}, {"cidr": "54.0.0.0/8", "ports": [443]}]),
     "a /8 of public space or more"),
    ("team egress to the instance metadata service 169.254.169.254/32", lambda d: team(d).update(
        egress=[{"cidr": "169.254.169.254/32", "ports": [80]}]), "teams[0].egress[0].cidr: is link-local space"),
    ("team egress to 169.254.0.0/16", lambda d: team(d).update(egress=[{"cidr": "169.254.0.0/16", "ports": [80]}]),
     "is link-local space"),
    ("adminCidrs 0.0.0.0/0", lambda d: public_endpoint(d, ["0.0.0.0/0"]),
     "cluster.adminCidrs[0]: opens the range to the whole internet"),
    ("adminCidrs 0.0.0.0/1 + 128.0.0.0/1", lambda d: public_endpoint(d, ["0.0.0.0/1", "128.0.0.0/1"]),
     "cluster.adminCidrs: together open the public endpoint to 3,702,258,688 internet addresses"),
    ("adminCidrs 1.0.0.0/8 + 2.0.0.0/8", lambda d: public_endpoint(d, ["1.0.0.0/8", "2.0.0.0/8"]),
     "as good as 0.0.0.0/0"),
    ("adminCidrs one public /8 (52.0.0.0/8)", lambda d: public_endpoint(d, ["52.0.0.0/8"]),
     "cluster.adminCidrs: together open the public endpoint to 16,777,216 internet addresses (a /8 of public space "
     "or more)"),
    ("adminCidrs 203.0.0.0/8", lambda d: public_endpoint(d, ["203.0.0.0/8"]), "as good as 0.0.0.0/0"),
    ("adminCidrs one public /9", lambda d: public_endpoint(d, ["52.0.0.0/9"]), None),
    ("adminCidrs 203.0.113.0/24", lambda d: public_endpoint(d, ["203.0.113.0/24"]), None),
    ("submitter role of another account", lambda d: team(d)["access"].update(
        submitters=["arn:aws:iam::999999999999:role/Outsider"]),
     "teams[0].access.submitters[0]: is in account 999999999999, not the capacity account 111111111111"),
    ("cluster admin role of another account", lambda d: d["cluster"].update(
        admins=["arn:aws:iam::999999999999:role/Admin"]), "cluster.admins[0]: is in account 999999999999"),
    ("viewer role of another account listed in accounts.trusted", lambda d: (
        team(d)["access"].update(viewers=["arn:aws:iam::999999999999:role/Auditor"]),
        d["accounts"].update(trusted=["999999999999"])), None),
    ("viewer that is an IAM user", lambda d: team(d)["access"].update(
        viewers=["arn:aws:iam::111111111111:user/alice"]), "teams[0].access.viewers[0]: is an IAM user"),
    ("IAM user of the capacity account, which accounts.trusted lists", lambda d: (
        team(d)["access"].update(viewers=["arn:aws:iam::111111111111:user/alice"]),
        d["accounts"].update(trusted=["111111111111"])), None),
    ("dependenciesChart.directory ../../..", lambda d: d["cluster"].update(
        dependenciesChart={"directory": "../../.."}),
     "cluster.dependenciesChart.directory: leaves the spec's folder"),
    ("dependenciesChart.directory /etc", lambda d: d["cluster"].update(dependenciesChart={"directory": "/etc"}),
     "leaves the spec's folder"),
    ("dependenciesChart.directory charts/../../x", lambda d: d["cluster"].update(
        dependenciesChart={"directory": "charts/../../x"}), "leaves the spec's folder"),
    ('availability zone "us-east-1a\\n"', lambda d: d["cluster"].update(vpc={"availabilityZones": [
        "us-east-1a\n", "us-east-1b"]}), "cluster.vpc.availabilityZones: 'us-east-1a\\n' is not an availability zone"),
    ("availability zone of another region", lambda d: d["cluster"].update(vpc={"availabilityZones": [
        "us-east-1a", "eu-west-1b"]}), "cluster.vpc.availabilityZones[1]: is not in the capacity region us-east-1"),
    ("Helm chart version with a space and a flag", lambda d: d["cluster"].update(dependenciesChart={
        "oci": "oci://registry/chart", "version": "1.0.0 --post-renderer=/bin/sh"}),
     "cluster.dependenciesChart.version: holds a space"),
    ("S3 prefix with a newline", lambda d: team(d)["workloadIdentities"][0].update(
        targetRoleArn=None, targetRole={"account": "data", "name": "r", "s3": [{"bucket": "b-1", "prefix": "a\nb"}]}),
     "prefix: holds a character that is not printable ASCII"),
]


def refused_well(data: dict, expected: Optional[str]) -> None:
    """``data`` is accepted (``expected`` None), or refused with ``expected`` in the message, every problem with its
    fix and no traceback (the hostile-spec tables of this package)."""
    if expected is None:
        parse_spec(data, today=TODAY)
        return
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    rendered = exc.value.render()
    assert expected in rendered, rendered
    assert "Traceback" not in rendered
    for issue in exc.value.issues:
        assert issue.fix, issue  # every problem says how to fix it


@pytest.mark.parametrize("label,mutate,expected", HOSTILE_SPECS, ids=[h[0] for h in HOSTILE_SPECS])
def test_hostile_spec(label, mutate, expected):
    data = copy.deepcopy(BASE)
    mutate(data)
    refused_well(data, expected)


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_chart_directory_linked_out_of_the_spec_folder_is_rejected(tmp_path):
    data = copy.deepcopy(BASE)
    data["cluster"]["dependenciesChart"] = {"directory": "charts"}
    os.symlink("/", tmp_path / "charts")
    with pytest.raises(SpecError) as exc:
        load_spec(_write(tmp_path, data), today=TODAY)
    assert "cluster.dependenciesChart.directory: resolves to /, outside the spec's folder" in str(exc.value)


def test_a_chart_directory_inside_the_spec_folder_is_accepted(tmp_path):
    data = copy.deepcopy(BASE)
    data["cluster"]["dependenciesChart"] = {"directory": "charts/hyperpod"}
    (tmp_path / "charts" / "hyperpod").mkdir(parents=True)
    (tmp_path / "charts" / "hyperpod" / "Chart.yaml").write_text("apiVersion: v2\nname: hyperpod\nversion: 0.1.0\n")
    assert load_spec(_write(tmp_path, data), today=TODAY).cluster.dependencies_chart.directory == "charts/hyperpod"


@pytest.mark.parametrize(("make", "problem"), [
    (lambda d: None, "does not exist"),
    (lambda d: d.mkdir(parents=True), "has no Chart.yaml"),
    (lambda d: (d.parent.mkdir(parents=True), d.write_text("x")), "is not a folder"),
])
def test_a_chart_directory_that_is_not_a_chart_is_rejected_before_synth(tmp_path, make, problem):
    data = copy.deepcopy(BASE)
    data["cluster"]["dependenciesChart"] = {"directory": "charts/hyperpod"}
    make(tmp_path / "charts" / "hyperpod")
    with pytest.raises(SpecError, match=rf"cluster.dependenciesChart.directory: {problem} \("):
        load_spec(_write(tmp_path, data), today=TODAY)


def test_twenty_thousand_levels_of_nesting_give_a_clear_error(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("name: " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(SpecError) as exc:
        read_yaml(path)
    assert f"nests collections more than {MAX_DEPTH} levels deep" in str(exc.value)
    path.write_text("name:\n" + "".join("  " * i + "- \n" for i in range(1, 300)))
    with pytest.raises(SpecError):
        read_yaml(path)


def test_an_alias_bomb_gives_a_clear_error():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(SpecError) as exc:
        parse_yaml("\n".join(lines))
    assert f"more than {MAX_NODES:,} values once its aliases" in str(exc.value)


def test_a_few_aliases_are_still_fine():
    data = parse_yaml("q: &q {instanceType: ml.g5.8xlarge, count: 1}\nteams: [{quota: [*q]}, {quota: [*q]}]\n")
    assert data["teams"][1]["quota"][0]["count"] == 1


def test_a_deeply_nested_mapping_from_python_is_reported_not_raised():
    data = copy.deepcopy(BASE)
    deep: dict = {}
    cur = deep
    for _ in range(20_000):
        cur["a"] = {}
        cur = cur["a"]
    data["teams"][0]["contract"] = deep
    with pytest.raises(SpecError):
        parse_spec(data, today=TODAY)


def test_an_oversized_file_is_refused_before_parsing(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("# " + "x" * (6 * 1024 * 1024))
    with pytest.raises(SpecError, match="larger than 5 MiB"):
        read_yaml(path)


# --- issue 55 (second review): a Slurm team's data directory, and an existing cluster's NetworkPolicy enforcement ---

def slurm_team(d: dict) -> dict:
    return d["teams"][0].setdefault("slurm", {})


# (input, mutation of the Slurm base spec, expected "path: problem (value); fix" fragments)
HOSTILE_SLURM_SPECS: list[tuple[str, Callable[[dict], Any], str]] = [
    (f"dataPath {path}", (lambda p: lambda d: slurm_team(d).update(dataPath=p))(path), expected)
    for path, expected in [
        ("/etc/sudoers.d", "teams[0].slurm.dataPath: is not below the shared file system's mount point /fsx: the "
         "controller gives the directory to the team's group as root (chgrp, chmod 2770), so a system directory "
         "would become the team's ('/etc/sudoers.d'); use a directory below the shared file system's mount point, "
         "e.g. /fsx/team-a"),
        ("/root/.ssh", "teams[0].slurm.dataPath: has a hidden segment '.ssh'"),
        ("/opt/slurm/etc", "teams[0].slurm.dataPath: is not below the shared file system's mount point /fsx"),
        ("/usr/local/bin", "('/usr/local/bin'); use a directory below the shared file system's mount point"),
        ("/fsx/../etc/sudoers.d", "teams[0].slurm.dataPath: has a '.' or '..' segment, which can lead out of the "
         "shared file system ('/fsx/../etc/sudoers.d')"),
        ("/fsx/team-a/..", "has a '.' or '..' segment"),
        ("/fsx//etc", "teams[0].slurm.dataPath: has an empty segment ('//' or a trailing '/')"),
        ("/fsx/team-a/", "has an empty segment"),
        ("/fsx/.lustre/fid", "has a hidden segment '.lustre'"),
        ("/fsxroot/team-a", "is not below the shared file system's mount point /fsx"),
        ("/fsx", "is not below the shared file system's mount point /fsx"),
        ("/fsx/team-a\n", "teams[0].slurm.dataPath: segment 'team-a\\n' holds a character other than letters"),
        ("/fsx/team-a;reboot", "segment 'team-a;reboot' holds a character"),
        ("fsx/team-a", "teams[0].slurm.dataPath: is not an absolute path"),
    ]
]


@pytest.mark.parametrize("label,mutate,expected", HOSTILE_SLURM_SPECS, ids=[h[0] for h in HOSTILE_SLURM_SPECS])
def test_hostile_slurm_data_path(label, mutate, expected):
    from tests.slurm.spec_fixtures import slurm_base

    data = slurm_base()
    mutate(data)
    refused_well(data, expected)


def _existing_base() -> dict:
    from tests.conftest import EXAMPLES

    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["cluster"]["existing"].pop("networkPolicyEnforcement", None)
    return data


def enforcement(d: dict, value: Any) -> None:
    d["cluster"]["existing"]["networkPolicyEnforcement"] = value


HOSTILE_EXISTING_SPECS: list[tuple[str, Callable[[dict], Any], str]] = [
    ("enforcer other without a reason", lambda d: enforcement(d, {"enforcer": "other"}),
     "cluster.existing.networkPolicyEnforcement.reason: is missing: with enforcer: other nothing checks that the "
     "teams' NetworkPolicies are enforced"),
    ("enforcer other, reason 'n/a'", lambda d: enforcement(d, {"enforcer": "other", "reason": "n/a"}),
     "networkPolicyEnforcement.reason: is shorter than 10 characters"),
    ("enforcer other, reason of spaces", lambda d: enforcement(d, {"enforcer": "other", "reason": " " * 20}),
     "networkPolicyEnforcement.reason: is shorter than 10 characters"),
    ("enforcer 'none'", lambda d: enforcement(d, {"enforcer": "none"}),
     "cluster.existing.networkPolicyEnforcement.enforcer"),
]


@pytest.mark.parametrize("label,mutate,expected", HOSTILE_EXISTING_SPECS, ids=[h[0] for h in HOSTILE_EXISTING_SPECS])
def test_hostile_existing_cluster_spec(label, mutate, expected):
    data = _existing_base()
    mutate(data)
    refused_well(data, expected)


CLI_CASES = [("slurm", label, mutate, expected) for label, mutate, expected in HOSTILE_SLURM_SPECS] + [
    ("existing", label, mutate, expected) for label, mutate, expected in HOSTILE_EXISTING_SPECS] + [
    ("existing", "no networkPolicyEnforcement, --strict", lambda d: None,
     "HPG-E006 cluster.existing.networkPolicyEnforcement: is not set")]


@pytest.mark.parametrize("base,label,mutate,expected", CLI_CASES, ids=[f"{c[0]}: {c[1]}" for c in CLI_CASES])
def test_validate_refuses_each_hostile_case_with_exit_1_and_no_traceback(tmp_path, capsys, base, label, mutate,
                                                                         expected):
    from hyperpod_gov.cli import main
    from tests.slurm.spec_fixtures import slurm_base

    data = slurm_base() if base == "slurm" else _existing_base()
    mutate(data)
    assert main(["validate", "--strict", str(_write(tmp_path, data))]) == 1
    out = capsys.readouterr()
    assert expected in out.err, out.err
    assert "Traceback" not in out.err + out.out
