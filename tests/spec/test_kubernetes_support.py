"""HPG-D010: a created cluster's Kubernetes version is refused once EKS extended support has ended for it (EKS
creates no cluster on it), with the versions still supported that day; an existing cluster's version is not."""

from __future__ import annotations

import copy
import datetime as dt

import pytest
import yaml

from hyperpod_gov.spec import parse_spec
from hyperpod_gov.spec.errors import SpecError
from tests.conftest import EXAMPLES


def _startup(version: str) -> dict:
    data = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    data["cluster"]["kubernetesVersion"] = version
    return data


@pytest.mark.parametrize("version, day, refused", [
    ("1.31", dt.date(2026, 11, 25), False),  # the last day of extended support
    ("1.31", dt.date(2026, 11, 26), True),  # extended support ended
    ("1.30", dt.date(2026, 12, 7), True),
    ("1.33", dt.date(2026, 12, 7), False),  # extended support, accepted (explain and the cost page say so)
    ("1.34", dt.date(2026, 12, 7), False),
])
def test_a_version_past_extended_support_is_refused_on_the_day(version, day, refused):
    if not refused:
        parse_spec(_startup(version), today=day)
        return
    with pytest.raises(SpecError) as e:
        parse_spec(_startup(version), today=day)
    text = str(e.value)
    assert "HPG-D010" in text and "cluster.kubernetesVersion: is past the end of EKS extended support" in text
    assert f"'{version}'" in text or f'"{version}"' in text or version in text
    assert "use a supported version: 1.32, 1.33, 1.34" in text


def test_an_existing_clusters_version_is_the_one_it_runs_and_is_not_refused():
    data = yaml.safe_load((EXAMPLES / "existing.yaml").read_text())
    assert data["cluster"]["kubernetesVersion"] == "1.31"
    parse_spec(copy.deepcopy(data), today=dt.date(2026, 12, 7))
