"""Every EKS add-on hyperpod-gov installs carries a version, by default too (plan/addon_defaults.py)."""

import re
from pathlib import Path

import pytest

from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.addon_defaults import FOLLOWS_KUBERNETES, table
from hyperpod_gov.spec.models import AddonVersions
from hyperpod_gov.spec.types import KUBERNETES_VERSIONS
from tests.conftest import TODAY

DOC = Path(__file__).resolve().parents[2] / "docs" / "addons.md"


def test_the_table_pins_every_addon_on_every_kubernetes_version_the_spec_accepts():
    versions = table()["versions"]
    assert set(versions) == set(FOLLOWS_KUBERNETES.values()) == set(table()["sources"])
    for addon, by_kubernetes in versions.items():
        assert set(by_kubernetes) == set(KUBERNETES_VERSIONS), addon
        for version in by_kubernetes.values():
            AddonVersions.model_validate({"coredns": version})  # the spec's own format check


def test_kube_proxy_follows_the_kubernetes_minor_version():
    for kubernetes, version in table()["versions"]["kube-proxy"].items():
        assert version.startswith(f"v{kubernetes}."), (kubernetes, version)


@pytest.mark.parametrize("kubernetes", KUBERNETES_VERSIONS)
def test_a_spec_without_pins_gets_the_tables_versions(base, kubernetes):
    base["cluster"]["kubernetesVersion"] = kubernetes
    from hyperpod_gov.spec import GovernanceSpec

    plan = build_plan(GovernanceSpec.model_validate(base, context={"today": TODAY}))
    want = {addon: table()["versions"][addon][kubernetes] for addon in ("vpc-cni", "coredns", "kube-proxy",
                                                                      "eks-pod-identity-agent")}
    assert {k: plan.addon_versions[k] for k in want} == want
    assert None not in plan.addon_versions.values()


def test_a_version_the_spec_gives_wins(base):
    from hyperpod_gov.spec import GovernanceSpec

    base["cluster"]["addonVersions"] = {"coredns": "v1.11.1-eksbuild.9"}
    plan = build_plan(GovernanceSpec.model_validate(base, context={"today": TODAY}))
    assert plan.addon_versions["coredns"] == "v1.11.1-eksbuild.9"
    assert plan.addon_versions["kube-proxy"] == table()["versions"]["kube-proxy"][plan.cluster.kubernetes_version]


def test_every_synthesized_addon_has_a_version(startup):
    addons = {r["Properties"]["AddonName"]: r["Properties"].get("AddonVersion")
              for r in startup.template("capacity")["Resources"].values() if r["Type"] == "AWS::EKS::Addon"}
    assert {"vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent"} <= set(addons)
    assert all(addons.values()), addons


def test_explain_lists_every_pinned_addon(startup_spec):
    plan = build_plan(startup_spec)
    text = explain(plan)
    section = text.split("EKS add-ons installed (pinned versions):\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [f"  {name} {version}" for name, version in plan.addon_versions.items()]


def test_the_reference_page_shows_the_table():
    text = DOC.read_text()
    for addon, by_kubernetes in table()["versions"].items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{addon}` |"))
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert cells == [by_kubernetes[k] for k in KUBERNETES_VERSIONS], addon
    assert re.search(r"describe-addon-versions", text)
