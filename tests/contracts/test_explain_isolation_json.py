"""explain --format json carries each team's isolation and network path (teams[].contract), valid against the
shipped schema; a team without a contract is shared and states no network path."""

from __future__ import annotations

import yaml

from hyperpod_gov.explain import explain_json
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec.loader import parse_spec
from tests.conftest import EXAMPLES, TODAY
from tests.test_cli_json import check


def _teams(edit=None) -> dict[str, dict]:
    data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
    if edit:
        edit({t["name"]: t for t in data["teams"]})
    doc = check("explain", explain_json(build_plan(parse_spec(data, today=TODAY))))
    return {t["name"]: t for t in doc["teams"]}


def test_every_team_has_isolation_and_network_path_and_no_slurm_task_view_on_eks():
    teams = _teams()
    assert {(t["isolation"], t["networkPath"]) for t in teams.values()} == {("shared", None)}
    assert not any("studioTaskView" in t for t in teams.values())


def test_explain_json_shows_what_the_contract_states():
    def edit(teams):
        teams["speech"]["contract"]["networkPath"] = "10.8.0.0/16"  # the VPN's cluster.apiAccess entry
        teams["recommendations"]["contract"]["networkPath"] = "console-only"
        del teams["applied-research"]["contract"]

    teams = _teams(edit)
    assert teams["speech"]["networkPath"] == "10.8.0.0/16"
    assert teams["recommendations"]["networkPath"] == "console-only"
    assert (teams["applied-research"]["isolation"], teams["applied-research"]["networkPath"]) == ("shared", None)
