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


@pytest.mark.parametrize("label,mutate,expected", HOSTILE_SPECS, ids=[h[0] for h in HOSTILE_SPECS])
def test_hostile_spec(label, mutate, expected):
    data = copy.deepcopy(BASE)
    mutate(data)
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
