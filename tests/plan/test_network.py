"""Decisions the plan makes for the emitters: team egress allows and where the dependencies chart comes from."""

from __future__ import annotations

from hyperpod_gov.plan.network import egress_plan
from hyperpod_gov.plan.plan import chart_plan
from hyperpod_gov.spec.models import EgressRule, HelmChart


def test_an_allow_that_would_include_link_local_space_has_it_carved_out():
    plans = egress_plan([EgressRule(cidr="10.50.0.0/16", ports=(443,)),
                         EgressRule(cidr="0.0.0.0/0", ports=(443, 80))])
    assert [(p.cidr, p.excepts, p.ports) for p in plans] == [
        ("0.0.0.0/0", ("169.254.0.0/16",), (80, 443)),  # the metadata service stays out of reach
        ("10.50.0.0/16", (), (443,)),
    ]


def test_an_oci_chart_is_named_after_the_last_part_of_its_reference(tmp_path):
    oci = chart_plan(HelmChart(oci="oci://123.dkr.ecr.us-east-1.amazonaws.com/charts/hyperpod-deps/",
                               version="1.2.3"), None)
    assert (oci.source, oci.chart, oci.version) == ("oci", "hyperpod-deps", "1.2.3")
    directory = chart_plan(HelmChart(directory="charts/deps"), tmp_path)
    assert directory.directory == tmp_path / "charts" / "deps" and directory.chart is None
