"""`explain`'s resource counts hold for the optional monitoring parts too (issue 58): a spec with a managed
Prometheus and Grafana workspace, and one with an evidence bucket, count what their templates hold."""

from __future__ import annotations

import pytest

from hyperpod_gov.cost import BILLED_TYPES, UNBILLED_TYPES, resource_counts
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.cost.test_inventory import mismatches, synthesized_counts
from tests.stacks.test_evidence_bucket import evidence_spec
from tests.stacks.test_prometheus import prometheus_spec
from tests.synth_helpers import synthesize

SPECS = {"prometheus": prometheus_spec, "evidence": evidence_spec}


@pytest.fixture(scope="module", params=sorted(SPECS))
def monitored(request, tmp_path_factory):
    spec = parse_spec(SPECS[request.param](), today=TODAY)
    return request.param, spec, synthesize(spec, tmp_path_factory.mktemp(request.param))


def test_counts_equal_the_templates(monitored):
    _, spec, synth = monitored
    assert mismatches(resource_counts(build_plan(spec)), synth.templates) == {}


def test_every_type_is_counted_or_known_to_be_unbilled(monitored):
    _, _, synth = monitored
    types = set(synthesized_counts(synth.templates))
    assert {t for t in types - set(BILLED_TYPES) - UNBILLED_TYPES if not t.startswith("Custom::")} == set()


def test_the_monitoring_parts_are_counted(monitored):
    """Not vacuous: each spec's own part is among the counts (the workspaces; the evidence bucket)."""
    name, spec, _ = monitored
    counts = resource_counts(build_plan(spec))
    if name == "prometheus":
        assert counts["AWS::APS::Workspace"] == 1 and counts["AWS::Grafana::Workspace"] == 1
    else:
        base = resource_counts(build_plan(parse_spec({**evidence_spec(), "monitoring": {}}, today=TODAY)))
        assert counts["AWS::S3::Bucket"] == base.get("AWS::S3::Bucket", 0) + 2  # the bucket and its access logs
