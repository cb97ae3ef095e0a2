"""Hostile specs of the second security review (issue 55) that were accepted: each is now refused with path, value
and fix (exit 1), or marked as a privilege change by ``diff``; the safe neighbour of each is still accepted."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from hyperpod_gov.diff import governance_changes
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import BASE, TODAY
from tests.security.test_hostile_specs import refused_well

READER = "arn:aws:iam::222222222222:role/reader"


def team(d: dict, i: int = 0) -> dict:
    return d["teams"][i]


def egress(d: dict, cidr: str, ports: list[int], **extra: Any) -> None:
    team(d).update(egress=[{"cidr": cidr, "ports": ports, **extra}])


# (input, mutation of BASE, expected message fragment or None when the spec must be accepted)
ROUND2: list[tuple[str, Callable[[dict], Any], Optional[str]]] = [
    # Another team's existing target role: both teams' pods act as the same role (HPG-A010).
    ("team-b names team-a's existing target role", lambda d: team(d, 1).update(
        workloadIdentities=[{"serviceAccount": "x", "targetRoleArn": READER}]),
     "HPG-A010 teams[0].workloadIdentities[0].targetRoleArn: is also the target role of team team-b"),
    ("team-b names team-a's role with another path and partition spelling", lambda d: team(d, 1).update(
        workloadIdentities=[{"serviceAccount": "x", "targetRoleArn": "arn:aws:iam::222222222222:role/ml/reader"}]),
     "is also the target role of team team-a"),
    ("both teams share the role and say so", lambda d: (
        team(d)["workloadIdentities"][0].update(allowOtherTeamRole=True),
        team(d, 1).update(workloadIdentities=[{"serviceAccount": "x", "targetRoleArn": READER,
                                               "allowOtherTeamRole": True}])), None),
    ("one team names the role for two service accounts", lambda d: team(d)["workloadIdentities"].append(
        {"serviceAccount": "eval", "targetRoleArn": READER}), None),
    # The VPC in special-purpose space.
    ("VPC CIDR 169.254.0.0/16 (link-local)", lambda d: d["cluster"].update(vpc={"cidr": "169.254.0.0/16"}),
     "cluster.vpc.cidr: overlaps 169.254.0.0/16, special-purpose address space"),
    ("VPC CIDR 127.0.0.0/16 (loopback)", lambda d: d["cluster"].update(vpc={"cidr": "127.0.0.0/16"}),
     "cluster.vpc.cidr: overlaps 127.0.0.0/8"),
    ("VPC CIDR 224.0.0.0/16 (multicast)", lambda d: d["cluster"].update(vpc={"cidr": "224.0.0.0/16"}),
     "cluster.vpc.cidr: overlaps 224.0.0.0/3"),
    ("VPC CIDR 198.18.0.0/16 (benchmarking)", lambda d: d["cluster"].update(vpc={"cidr": "198.18.0.0/16"}),
     "cluster.vpc.cidr: overlaps 198.18.0.0/15"),
    ("VPC CIDR 10.50.0.0/16", lambda d: d["cluster"].update(vpc={"cidr": "10.50.0.0/16"}), None),
    # A workload identity on the namespace's default service account: every pod of the team gets the role.
    ("workload identity on the default service account",
     lambda d: team(d)["workloadIdentities"][0].update(serviceAccount="default"),
     "teams[0].workloadIdentities[0].serviceAccount: is the namespace's default service account"),
    ("workload identity on service account default-runner",
     lambda d: team(d)["workloadIdentities"][0].update(serviceAccount="default-runner"), None),
    # Egress toward the VPC on the nodes' own services (HPG-E010); the VPC of BASE is 10.192.0.0/16.
    ("egress to the VPC on the kubelet port", lambda d: egress(d, "10.192.0.0/16", [10250]),
     "HPG-E010 teams[0].egress[0].ports: opens 10250 (the kubelet API of every node"),
    ("egress to 10.0.0.0/8 (holds the VPC) on SSH", lambda d: egress(d, "10.0.0.0/8", [22]), "22 (SSH on the nodes)"),
    ("egress to the VPC on DNS over UDP", lambda d: egress(d, "10.192.0.0/16", [53], protocol="UDP"),
     "53 (the VPC's DNS resolver"),
    ("egress to the VPC on Lustre", lambda d: egress(d, "10.192.0.0/16", [988, 1021]),
     "988 (FSx for Lustre, the shared file system the nodes mount"),
    ("egress to one host of the VPC on the kubelet read-only port", lambda d: egress(d, "10.192.3.4/32", [10255]),
     "10255 (the kubelet's read-only port)"),
    ("egress to the VPC on the kubelet port with allowNodePorts",
     lambda d: egress(d, "10.192.0.0/16", [10250], allowNodePorts=True), None),
    ("egress to the VPC on 443", lambda d: egress(d, "10.192.0.0/16", [443]), None),
    ("egress to another private network on SSH", lambda d: egress(d, "10.10.0.0/16", [22]), None),
]


@pytest.mark.parametrize("label,mutate,expected", ROUND2, ids=[h[0] for h in ROUND2])
def test_round2_hostile_spec(label, mutate, expected):
    data = copy.deepcopy(BASE)
    mutate(data)
    refused_well(data, expected)


def test_egress_to_node_ports_of_an_existing_clusters_vpc_is_refused_for_any_private_space():
    """An existing cluster's VPC is not the spec's: any private network may be it."""
    from tests.conftest import as_existing

    data = as_existing(copy.deepcopy(BASE))
    egress(data, "172.31.0.0/16", [10250])
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    assert "HPG-E010" in exc.value.render()


def _changes(old: dict, new: dict) -> list:
    return governance_changes(build_plan(parse_spec(old, today=TODAY)), build_plan(parse_spec(new, today=TODAY)))


def _privileged(changes: list, label: str) -> list[str]:
    return [c.privilege for c in changes if c.privilege and c.label == label]


def test_a_new_dependencies_chart_is_a_privilege_change():
    old = copy.deepcopy(BASE)
    new = copy.deepcopy(BASE)
    new["cluster"]["dependenciesChart"] = {"repository": "https://charts.example.com", "chart": "hyperpod",
                                           "version": "1.0.0"}
    assert _privileged(_changes(old, new), "dependencies chart")


def test_a_pipeline_repository_change_is_a_privilege_change():
    old = copy.deepcopy(BASE)
    old["deployment"] = {"pipeline": {"repository": "acme/ml-governance",
                                      "connectionArn": "arn:aws:codeconnections:us-east-1:111111111111:connection/a"}}
    new = copy.deepcopy(old)
    new["deployment"]["pipeline"]["repository"] = "mallory/ml-governance"
    assert _privileged(_changes(old, new), "delivery source")
    branch = copy.deepcopy(old)
    branch["deployment"]["pipeline"]["branch"] = "feature"
    assert _privileged(_changes(old, branch), "delivery source")
    assert not _privileged(_changes(old, copy.deepcopy(old)), "delivery source")


# --- text that reaches pages, and files that reach commands ----------------------------------------------------------

def _with_contract(field: str, value: str) -> dict:
    from tests.contracts.helpers import connected

    data = connected()
    data["teams"][0]["contract"][field] = value
    return data


@pytest.mark.parametrize("value", [
    "[click](javascript:alert(1))@example.com", "a(b)@example.com", "owner @example.com", '"a"@example.com',
    "a@example.com<img>", "a@exa_mple.com", "a@-example.com", "a@example.c",
])
def test_an_owner_address_that_is_not_a_plain_address_is_refused(value):
    with pytest.raises(SpecError) as exc:
        parse_spec(_with_contract("businessOwner", value), today=TODAY)
    assert "teams[0].contract.businessOwner: is not an email address" in exc.value.render() or \
        "teams[0].contract.businessOwner: holds" in exc.value.render()


@pytest.mark.parametrize("value", ["ml-owner@example.com", "o'brien+ml@research.example.co.uk", "A.B_C%1@x-y.io"])
def test_plain_owner_addresses_are_accepted(value):
    assert parse_spec(_with_contract("businessOwner", value), today=TODAY)


def test_a_lone_surrogate_anywhere_is_refused_before_any_model_runs():
    data = _with_contract("support", "call us \ud800 now")
    data["teams"][0]["contract"]["monitoring"] = "fine"
    data["teams"][1]["name"] = "x\udfff"
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    paths = [i.path for i in exc.value.issues]
    assert paths == ["teams[0].contract.support", "teams[1].name"], paths
    assert "U+D800" in exc.value.render() and "U+DFFF" in exc.value.render()
    exc.value.render().encode("utf-8")  # the message itself can be printed


def test_a_lone_surrogate_in_a_yaml_escape_is_refused_by_validate(tmp_path, capsys):
    from hyperpod_gov.cli import main

    spec = tmp_path / "spec.yaml"
    text = (Path(__file__).parents[2] / "examples" / "startup.yaml").read_text()
    spec.write_text(text.replace("name: startup", 'name: "startup\\ud800"', 1))
    assert main(["validate", str(spec)]) == 1
    assert "holds a lone surrogate (U+D800)" in capsys.readouterr().err


def test_markdown_markup_in_a_contract_field_shows_as_written_on_the_record_page():
    from hyperpod_gov.markdown import cell

    shown = cell("![pixel](https://evil.example/t.png) [docs](javascript:x) a|b <b>")
    assert "![" not in shown and "](" not in shown.replace("\\](", "")
    assert shown == "!\\[pixel\\](https://evil.example/t.png) \\[docs\\](javascript:x) a\\|b &lt;b>"
    # CommonMark reads a backslash before ASCII punctuation as that character: nothing else changes.
    assert cell("ml.p5.48xlarge (8 GPUs), 50% of idle") == "ml.p5.48xlarge (8 GPUs), 50% of idle"


@pytest.mark.parametrize("report,problem", [
    ({"teams": [{"team": "x", "flavors": [{"instanceType": "t", "unit": "GPU", "nominal": 8}]}]},
     "teams[0].flavors[0].average: is missing"),
    ({"teams": [{"team": "x", "flavors": [{"instanceType": "t", "unit": "GPU", "nominal": 8, "average": float("nan"),
                                           "peak": None}]}]}, "average: is not a finite number"),
    ({"teams": [{"team": "x", "flavors": [{"instanceType": "t", "unit": "GPU", "nominal": 8, "average": 1,
                                           "peak": -5}]}]}, "peak: is negative"),
    ({"teams": [{"team": "x", "flavors": [{"instanceType": "t", "unit": "GPU", "nominal": float("inf"),
                                           "average": 1, "peak": 1}]}]}, "nominal: is not a finite number"),
    ({"teams": [], "patch": [1]}, "patch[0]: is not an object"),
    ({"teams": [], "advice": [{"team": ["x"]}]}, "advice[0].team: is not text"),
    ({"teams": [], "rejected": "no"}, "rejected: is not a list"),
])
def test_a_malformed_usage_report_is_refused_by_review_pack(tmp_path, capsys, report, problem):
    import json

    from hyperpod_gov.cli import main

    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    out = tmp_path / "pack"
    spec = Path(__file__).parents[2] / "examples" / "startup.yaml"
    assert main(["review-pack", str(spec), "--report", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert problem in err and "Traceback" not in err, err


def test_a_failed_synth_leaves_the_last_assembly_as_it_was_and_nothing_half_written(tmp_path, monkeypatch):
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import load_spec
    from hyperpod_gov.stacks import app

    old = tmp_path / "cdk.out"
    old.mkdir()
    (old / "startup-capacity.template.json").write_text("{}")

    def broken(*args, **kwargs):
        (Path(kwargs["outdir"]) / "half.template.json").write_text("{")
        raise RuntimeError("boom")

    monkeypatch.setattr(app, "build_app", broken)
    plan = build_plan(load_spec(Path(__file__).parents[2] / "examples" / "startup.yaml", today=TODAY))
    with pytest.raises(SpecError):
        app.synth(plan, tmp_path)
    assert sorted(p.name for p in old.iterdir()) == ["startup-capacity.template.json"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_synth_into_an_earlier_out_keeps_no_template_of_another_spec(tmp_path):
    from hyperpod_gov.cli import main

    stale = tmp_path / "cdk.out" / "acme-ml-teams-03.template.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    assert main(["synth", str(Path(__file__).parents[2] / "examples" / "startup.yaml"), "--out", str(tmp_path)]) == 0
    templates = sorted(p.name for p in (tmp_path / "cdk.out").glob("*.template.json"))
    assert templates and all(t.startswith("startup-") for t in templates), templates
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
