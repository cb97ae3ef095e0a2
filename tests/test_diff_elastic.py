"""diff of elastic capacity (issue 57): a group's node image or patching window is a contract review ("node image or
patching") for the teams whose quota sits on its types; minCount, Spot and autoscale are "cluster capacity", even
where the most instances stay the same. Two versions of examples/elastic.yaml, text and --format json."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.contracts import events
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY
from tests.test_cli_json import check

ELASTIC = EXAMPLES / "elastic.yaml"
PATCHING = ("scheduled cron(00 02 10 01 ? 2027); security patches {}; batches of 10%; rolled back on "
            "gpu-base-errors")


def _version(tmp_path, change: Callable[[dict[str, Any]], None], name: str = "new.yaml"):
    data = yaml.safe_load(ELASTIC.read_text())
    change(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _group(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(g for g in data["cluster"]["instanceGroups"] if g["name"] == name)


def _diff(tmp_path, change, capsys) -> tuple[str, dict[str, Any]]:
    new = _version(tmp_path, change)
    assert main(["diff", str(ELASTIC), str(new), "--governance-only"]) == 0
    text = capsys.readouterr().out
    assert main(["diff", str(ELASTIC), str(new), "--governance-only", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    check("diff", doc)
    return text, doc


def _image_and_patching(data: dict[str, Any]) -> None:
    _group(data, "gpu-base").update(image={"releaseVersion": "1.4.2"})
    _group(data, "gpu-base")["patching"]["auto"] = "whenAllIdle"


def test_a_groups_new_image_and_patching_window_are_reviews_for_the_teams_on_its_types(tmp_path, capsys):
    text, doc = _diff(tmp_path, _image_and_patching, capsys)
    image = ("instance group gpu-base node image HyperPod's current AMI -> HyperPod release 1.4.2")
    patching = f"instance group gpu-base patching {PATCHING.format('WhenIdle')} -> {PATCHING.format('WhenAllIdle')}"
    # every team holds quota on ml.g5.2xlarge, gpu-base's type
    expected = [f"team {team}: review (node image or patching): {detail}"
                for team in ("chatbot", "ml-engineering", "researchers") for detail in (image, patching)]
    assert [r["words"] for r in doc["reviews"]] == expected
    reviews = text.split("Contract reviews (event-driven) and retirement:\n")[1].splitlines()
    assert [line.strip() for line in reviews] == expected
    by_label = {c["label"]: c for c in doc["changes"]}
    assert [r["detail"] for r in by_label["node image"]["review"]] == [image] * 3
    assert [r["detail"] for r in by_label["patching"]["review"]] == [patching] * 3
    assert {r["event"] for c in doc["changes"] for r in c["review"]} == {"node image or patching"}


def test_an_image_review_goes_to_the_teams_on_that_group_only(tmp_path, capsys):
    # burst runs ml.g5.12xlarge and ml.g6e.12xlarge: only the researchers hold quota there
    text, doc = _diff(tmp_path, lambda d: _group(d, "burst").update(imageId="ami-0123456789abcdef0"), capsys)
    assert [(r["team"], r["event"]) for r in doc["reviews"]] == [("researchers", "node image or patching")]
    change = next(c for c in doc["changes"] if c["label"] == "node image")
    assert change["privilege"] is True and [r["team"] for r in change["review"]] == ["researchers"]
    assert ("team researchers: review (node image or patching): instance group burst node image HyperPod's current "
            "AMI -> ami-0123456789abcdef0") in text


def test_two_groups_image_changes_each_carry_their_own_groups_reviews(tmp_path, capsys):
    def both(d: dict[str, Any]) -> None:
        _group(d, "burst").update(imageId="ami-0123456789abcdef0")
        _group(d, "gpu-elastic").update(imageId="ami-0fedcba9876543210")
    _, doc = _diff(tmp_path, both, capsys)
    for change in (c for c in doc["changes"] if c["label"] == "node image"):
        assert change["review"] and all(r["detail"].startswith(f"instance group {change['key']} ")
                                        for r in change["review"])


@pytest.mark.parametrize("change, row, detail", [
    (lambda d: _group(d, "gpu-base").update(minCount=2), "minimum instances",
     "ml.g5.2xlarge capacity guaranteed 4, elastic 11, interruptible 0 -> guaranteed 2, elastic 13, interruptible 0"),
    (lambda d: _group(d, "burst").update(capacity="on-demand"), "capacity type",
     "ml.g5.12xlarge capacity guaranteed 0, elastic 0, interruptible 8 -> guaranteed 0, elastic 8, interruptible 0"),
    (lambda d: _group(d, "gpu-elastic").update(autoscale=False), "guaranteed instances",
     "ml.g5.2xlarge capacity guaranteed 4, elastic 11, interruptible 0 -> guaranteed 13, elastic 2, interruptible 0"),
], ids=["min-count", "spot-to-on-demand", "autoscale-off"])
def test_an_elastic_capacity_change_is_a_cluster_capacity_review(tmp_path, capsys, change, row, detail):
    text, doc = _diff(tmp_path, change, capsys)
    changed = next(c for c in doc["changes"] if c["label"] == row)
    assert detail in [r["detail"] for r in changed["review"]]
    assert {r["event"] for r in changed["review"]} == {"cluster capacity"}
    assert f"team chatbot: review (cluster capacity): {detail}" in text


def test_a_spec_without_elastic_capacity_gets_no_split_line():
    """A fixed group's count change is the instance count's review alone (the enterprise example's output stays)."""
    data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
    old = build_plan(load_spec(EXAMPLES / "enterprise.yaml", today=TODAY))
    data["cluster"]["instanceGroups"][0]["count"] += 1
    from hyperpod_gov.spec import parse_spec

    new = build_plan(parse_spec(data, today=TODAY))
    lines = events(old, new)
    assert lines and all("capacity guaranteed" not in line for line in lines)
    assert all("instances" in line for line in lines if "cluster capacity" in line)
