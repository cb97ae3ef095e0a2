"""Scenario files are parsed by libyaml when PyYAML has it, with exactly the results of the pure-Python parser."""

from __future__ import annotations

import pytest
import yaml

from hyperpod_gov.simulate import load_scenario, parse_scenario
from hyperpod_gov.spec.errors import SpecError

SCENARIO = """\
# every scalar style a scenario uses
fairSharing: yes
preemptionStrategies: [LessThanInitialShare]
queues:
  - name: alpha
    cohort: "all"
    fairSharingWeight: 0.5
    preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any,
                 borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: ~}}
    flavors:
      - &od
        name: on-demand
        resources:
          cpu: {nominal: "1500m", borrowingLimit: 2}
          memory: {nominal: 64Gi, lendingLimit: 32Gi}
  - name: 'beta'
    cohort: all
    flavors: [*od]
workloads:
  - {name: a1, queue: alpha, priority: -1, created: 1.5, requests: {cpu: 500m, memory: 1Gi}, duration: 1.0e+2}
events:
  - {at: 10, submit: {name: b1, queue: beta, requests: {cpu: 1}}}
  - at: 20
    finish: a1
until: 0x40
"""


def test_libyaml_and_pure_python_load_the_same_scenario(tmp_path):
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML without libyaml: only the pure-Python parser exists")
    assert yaml.load(SCENARIO, Loader=yaml.CSafeLoader) == yaml.load(SCENARIO, Loader=yaml.SafeLoader)
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    assert load_scenario(path) == parse_scenario(yaml.safe_load(SCENARIO), str(path))


def test_a_file_libyaml_rejects_reports_the_pure_python_problem(tmp_path):
    bad = "queues:\n  - name: a\n   flavors: [\n"
    with pytest.raises(yaml.YAMLError) as pure:
        yaml.load(bad, Loader=yaml.SafeLoader)
    path = tmp_path / "s.yaml"
    path.write_text(bad)
    with pytest.raises(SpecError) as exc:
        load_scenario(path)
    (issue,) = exc.value.issues
    assert f"line {pure.value.problem_mark.line + 1}" in str(issue)
    assert pure.value.problem in str(issue)
