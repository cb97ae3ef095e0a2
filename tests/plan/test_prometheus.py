"""monitoring.prometheus and monitoring.grafana as plain data (plan/prometheus.py): the spec keys, the teams' rules
with the CloudWatch alarms' thresholds over Kueue's labels, the alert manager's routes, the per-team dashboards, the
add-on's pinned version, and a Slurm cluster's extension path (HPG-S016). Each check is shown to fail when its property breaks."""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.prometheus import ADDON, alertmanager_document, team_dashboard
from hyperpod_gov.spec import GovernanceSpec, SpecError, parse_spec
from hyperpod_gov.spec.models import AddonVersions
from tests.conftest import BASE, EXAMPLES, TODAY


def _spec(monitoring: dict, base: dict = BASE) -> GovernanceSpec:
    d = copy.deepcopy(base)
    d["monitoring"] = monitoring
    return parse_spec(d, today=TODAY)


CREATE = {"prometheus": {"workspace": "create"}}
EXISTING = "arn:aws:aps:us-east-1:111111111111:workspace/ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"


@pytest.mark.parametrize("monitoring, message", [
    ({"prometheus": {"workspace": "arn:aws:s3:::bucket"}}, "neither 'create' nor"),
    ({"prometheus": {"workspace": "create"}, "grafana": {"workspace": "create", "admins": ["alice"]}},
     "not an IAM Identity Center user or group id"),
    ({"grafana": {"workspace": "create"}}, "sets grafana without prometheus"),
    ({"prometheus": {"workspace": "create"}, "grafana": {"workspace": "arn:aws:grafana:x"}}, "is not 'create'"),
])
def test_bad_keys_are_refused_with_a_fix(monitoring, message):
    with pytest.raises(SpecError, match=message):
        _spec(monitoring)


def test_the_addon_version_is_pinned_and_checked_like_the_others():
    assert AddonVersions().hyperpod_observability == "v1.0.5-eksbuild.1"
    with pytest.raises(ValueError, match="not an EKS add-on version"):
        AddonVersions(hyperpod_observability="1.0.5")
    with pytest.raises(ValueError, match="older than v1.0.5"):
        AddonVersions(hyperpod_observability="v1.0.4-eksbuild.1")
    plan = build_plan(_spec(CREATE))
    assert plan.addon_versions[ADDON] == "v1.0.5-eksbuild.1"
    assert ADDON not in build_plan(_spec({})).addon_versions  # only with the key


def test_each_alarm_becomes_a_rule_with_its_threshold_and_duration():
    plan = build_plan(_spec(CREATE))
    rules = {r.team: r for r in plan.prometheus.rules}
    team_a = plan.team("team-a").monitoring
    by_kind = {r.alarm.kind: r for r in rules["team-a"].rules}
    assert set(by_kind) == {a.kind for a in team_a.alarms}
    q = team_a.cluster_queue
    # 8 GPUs of ml.p5.48xlarge, 30 min (quotaNotHonouredMinutes), pending work
    quota = by_kind["quota-not-honoured"]
    assert quota.duration == "30m"
    assert f'kueue_pending_workloads{{cluster_queue="{q}"}}) > 0' in quota.expression
    usage = rf'cluster_queue="{q}",flavor="ml.p5.48xlarge",resource="nvidia.com/gpu"\}}\) or vector\(0\)\) < 8'
    assert re.search(usage, quota.expression)
    assert by_kind["idle-capacity"].duration == f"{24 * 60}m" and by_kind["idle-capacity"].expression.endswith(
        "/ 8 < 20")
    assert by_kind["preempted"].expression.endswith(">= 3") and 'reason="Preempted"' in by_kind["preempted"].expression
    low = by_kind["low-utilisation"]
    assert low.duration == "60m" and 'DCGM_FI_DEV_GPU_UTIL{namespace="hyperpod-ns-team-a"}) < 20' in low.expression


def test_a_teams_override_moves_its_rule():
    d = copy.deepcopy(BASE)
    d["teams"][0]["alarms"] = {"preemptionsPerHour": 7, "quotaNotHonouredMinutes": 45}
    d["monitoring"] = CREATE
    plan = build_plan(parse_spec(d, today=TODAY))
    by_kind = {r.alarm.kind: r for r in next(t for t in plan.prometheus.rules if t.team == "team-a").rules}
    assert by_kind["preempted"].expression.endswith(">= 7") and by_kind["quota-not-honoured"].duration == "45m"


def test_a_team_is_alerted_once():
    with_rules = build_plan(_spec(CREATE))
    assert all(not w.cloudwatch_alarms for w in with_rules.monitoring.teams)
    assert with_rules.monitoring.counts.alarms == 0 and with_rules.monitoring.alarms
    # An existing workspace: its alert manager is not ours, the alarms stay in CloudWatch, no rules are made.
    existing = build_plan(_spec({"prometheus": {"workspace": EXISTING}}))
    assert existing.prometheus.rules == () and existing.prometheus.workspace_arn == EXISTING
    assert all(w.cloudwatch_alarms for w in existing.monitoring.teams)
    assert existing.monitoring.counts.alarms == len(existing.monitoring.alarms) > 0


def test_the_alert_manager_sends_an_unrouted_alert_to_the_platform():
    text = alertmanager_document(["b-topic", "a-topic"], {"a-topic": "arn:a", "b-topic": "arn:b",
                                                         "platform": "arn:p"}, "us-east-1", "platform")
    assert text.startswith("alertmanager_config: |\n")
    config = yaml.safe_load(yaml.safe_load(text)["alertmanager_config"])
    assert config["route"]["receiver"] == "platform"
    assert [r["matchers"] for r in config["route"]["routes"]] == [['topic="a-topic"'], ['topic="b-topic"'],
                                                                  ['topic="platform"']]
    assert {r["name"]: r["sns_configs"][0]["topic_arn"] for r in config["receivers"]} == {
        "a-topic": "arn:a", "b-topic": "arn:b", "platform": "arn:p"}


def _filters(dashboard: dict) -> set[tuple[str, str]]:
    return {m for p in dashboard["panels"] for t in p["targets"]
            for m in re.findall(r'(cluster_queue|namespace)="([^"]+)"', t["expr"])}


def test_each_teams_dashboard_queries_only_that_team():
    spec = _spec({**CREATE, "grafana": {"workspace": "create",
                                        "admins": ["group:94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60"]}})
    plan = build_plan(spec)
    dashboards = dict(plan.prometheus.grafana.dashboards)
    assert sorted(dashboards) == ["team-a", "team-b"]
    for team in plan.tenants:
        board = json.loads(dashboards[team.name])
        assert _filters(board) == {("cluster_queue", team.cluster_queue), ("namespace", team.namespace)}
        # every query names the team (an unfiltered panel would show every team's work)
        assert all(re.search(r'(cluster_queue|namespace)="', t["expr"]) for p in board["panels"]
                   for t in p["targets"])
    assert plan.prometheus.grafana.admins == ("group:94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60",)


def test_the_dashboard_check_fails_on_a_query_of_another_team():
    plan = build_plan(_spec(CREATE))
    a, b = (plan.team(n).monitoring for n in ("team-a", "team-b"))
    board = team_dashboard(a)
    board["panels"][0]["targets"][0]["expr"] = f'sum(x{{namespace="{b.namespace}"}})'
    assert ("namespace", b.namespace) in _filters(board)


def _slurm(example: str, **cluster) -> dict:
    d = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text())
    d.setdefault("monitoring", {})["prometheus"] = {"workspace": "create"}
    d["cluster"].update(cluster)
    return d


def test_slurm_without_continuous_provisioning_refuses_prometheus_with_its_rule():
    with pytest.raises(SpecError) as raised:
        parse_spec(_slurm("startup-slurm"), today=TODAY)
    text = str(raised.value)
    assert "HPG-S016" in text and "monitoring.prometheus" in text and "NodeProvisioningMode Continuous" in text
    parse_spec(_slurm("startup-slurm", nodeProvisioningMode="Continuous"), today=TODAY)  # the fix it names


def test_slurm_with_continuous_provisioning_plans_the_pinned_extension_and_no_rule():
    plan = build_plan(parse_spec(_slurm("enterprise-slurm"), today=TODAY))
    p = plan.prometheus
    assert (p.extension.name, p.extension.version, p.addon_version) == ("sagemaker-observability", "1.0.0", None)
    assert p.rules == () and p.topics == () and not p.alerts_in_prometheus
    assert ADDON not in plan.addon_versions  # the EKS add-on is not the Slurm path


def test_the_extension_version_is_pinned_and_checked_like_the_others():
    assert AddonVersions().observability_extension == "1.0.0"
    with pytest.raises(ValueError, match="not a HyperPod extension version"):
        AddonVersions(observability_extension="v1.0.0")
    d = _slurm("enterprise-slurm", addonVersions={"observabilityExtension": "1.2.3"})
    assert build_plan(parse_spec(d, today=TODAY)).prometheus.extension.version == "1.2.3"
    d["cluster"]["addonVersions"]["kueueChart"] = "0.19.2"  # any other add-on pin stays refused on Slurm
    with pytest.raises(SpecError, match="HPG-S003.*cluster.addonVersions"):
        parse_spec(d, today=TODAY)


def test_the_extension_pin_on_an_eks_cluster_is_refused_with_its_rule():
    d = copy.deepcopy(BASE)
    d["cluster"]["addonVersions"] = {"observabilityExtension": "1.0.0"}
    with pytest.raises(SpecError, match="HPG-S016 cluster.addonVersions.observabilityExtension"):
        parse_spec(d, today=TODAY)


def test_the_export_writes_a_folder_and_dashboard_per_team_and_the_admins_batch(tmp_path):
    from hyperpod_gov.grafana_export import permissions, write

    spec = _spec({**CREATE, "grafana": {"workspace": "create", "admins": [
        "group:94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60", "user:9067729b3d-94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f61"]}})
    grafana = build_plan(spec).prometheus.grafana
    names = sorted(p.name for p in write(grafana, tmp_path))
    assert names == ["permissions.json", "team-a.json", "team-b.json"]
    team_a = json.loads((tmp_path / "team-a.json").read_text())
    assert team_a["folder"]["uid"] == team_a["dashboard"]["folderUid"] == "hpg-team-a"
    assert _filters(team_a["dashboard"]["dashboard"]) == {("cluster_queue", "hyperpod-ns-team-a-clusterqueue"),
                                                          ("namespace", "hyperpod-ns-team-a")}
    assert permissions(grafana) == [{"action": "ADD", "role": "ADMIN", "users": [
        {"id": "94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60", "type": "SSO_GROUP"},
        {"id": "9067729b3d-94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f61", "type": "SSO_USER"}]}]


def test_explain_of_a_slurm_spec_says_what_prometheus_observes_and_what_it_does_not():
    from hyperpod_gov.explain import explain
    from hyperpod_gov.spec import load_spec

    text = " ".join(explain(build_plan(load_spec(EXAMPLES / "startup-slurm.yaml", today=TODAY))).split())
    assert "managed Prometheus and Grafana" in text and "none: monitoring.prometheus is not set" in text
    text = " ".join(explain(build_plan(parse_spec(_slurm("enterprise-slurm"), today=TODAY))).split())
    assert "the sagemaker-observability extension 1.0.0 writes node" in text
    assert "not observed: per-team usage against quota" in text


def test_a_neuron_teams_low_utilisation_stays_a_cloudwatch_alarm_and_has_no_rule():
    d = copy.deepcopy(BASE)
    d["cluster"]["instanceGroups"].append({"name": "trn", "instanceType": "ml.trn1.32xlarge", "count": 1})
    d["teams"].append({"name": "team-n", "quota": [{"instanceType": "ml.trn1.32xlarge", "count": 1}]})
    d["monitoring"] = CREATE
    plan = build_plan(parse_spec(d, today=TODAY))
    watch = plan.team("team-n").monitoring
    assert [a.kind for a in watch.cloudwatch_alarms] == ["low-utilisation"]  # the one without a rule
    rules = next(t for t in plan.prometheus.rules if t.team == "team-n")
    assert {r.alarm.kind for r in rules.rules} == {a.kind for a in watch.alarms} - {"low-utilisation"}
    # every other alarm of every team is a rule, never both
    for w in plan.monitoring.teams:
        ruled = {r.alarm.kind for t in plan.prometheus.rules if t.team == w.team for r in t.rules}
        assert ruled.isdisjoint(a.kind for a in w.cloudwatch_alarms)
        assert ruled | {a.kind for a in w.cloudwatch_alarms} == {a.kind for a in w.alarms}
