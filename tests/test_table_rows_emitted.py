"""Every field-table row reaches the templates (``tests/table_rows.py``), on the examples: a row the emitters drop
fails here, and so does a row no example exercises (unless listed below with the reason)."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.tables import TABLES
from hyperpod_gov.spec import load_spec, parse_spec
from tests.conftest import EXAMPLES, TODAY
from tests.stacks.test_evidence_bucket import evidence_spec
from tests.stacks.test_instance_group_options import every_option
from tests.stacks.test_prometheus import prometheus_spec
from tests.stacks.test_slurm_prometheus import slurm_prometheus_spec
from tests.studio.helpers import delegated
from tests.table_rows import rows_planned, unreached, value_rows

ALL_EXAMPLES = ("enterprise", "startup", "existing", "enterprise-slurm", "startup-slurm", "elastic")

# Rows with a planned value that neither the examples nor the every-option spec of
# tests/stacks/test_instance_group_options.py gives one, and why (a stale entry fails too).
NOT_IN_EXAMPLES: dict[tuple[str, str], str] = {
    ("access entry", "accessPolicies"): "only a team whose contract approves interactive workloads (HyperPod "
    "spaces) gets access policies; tests/plan/test_access_entries.py builds that entry and compares it with the "
    "table",
    ("HyperPod cluster", "Orchestrator.Slurm.AccountingDatabase.Name"): "the examples leave the database's name to "
    "the service; tests/constructs/test_cluster_tables.py synthesizes a Slurm spec that names it",
    ("instance group", "ImageId"): "an example that named an AMI would name one nobody can boot; "
    "tests/constructs/test_cluster_tables.py synthesizes the elastic example with an imageId",
    ("instance group", "ImageReleaseVersion"): "the examples take HyperPod's current release; "
    "tests/constructs/test_cluster_tables.py synthesizes the elastic example pinned to one",
}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_planned_row_reaches_the_template(example, request):
    synthesized = request.getfixturevalue(example)
    assert unreached(build_plan(synthesized.spec), synthesized.templates) == {}


def test_the_examples_exercise_every_row_of_every_table():
    plans = [build_plan(load_spec(EXAMPLES / f"{name}.yaml", today=TODAY)) for name in ALL_EXAMPLES]
    plans.append(build_plan(parse_spec(every_option(), today=TODAY)))
    plans.append(build_plan(parse_spec(delegated(), today=TODAY)))  # the unifiedStudio section (tests/studio)
    plans.append(build_plan(parse_spec(prometheus_spec(), today=TODAY)))  # monitoring.prometheus (tests/stacks)
    plans.append(build_plan(parse_spec(evidence_spec(), today=TODAY)))  # monitoring.evidence (tests/stacks)
    plans.append(build_plan(parse_spec(slurm_prometheus_spec(), today=TODAY)))  # the Slurm extension (tests/stacks)
    planned = rows_planned(plans)
    never = {(t.label, row.member) for t in TABLES for row in value_rows(t) if row.member not in planned[t.label]}
    assert never == set(NOT_IN_EXAMPLES), "rows no example plans a value for (add an example key, or list the row)"


def test_a_member_missing_from_the_template_is_reported(enterprise):
    """The check can fail: drop one planned member from one resource of each kind, the row is reported."""
    plan = build_plan(enterprise.spec)
    dropped = {
        "AWS::SageMaker::ComputeQuota": ("ComputeQuotaConfig",),
        "AWS::SageMaker::ClusterSchedulerConfig": ("SchedulerConfig",),
        "AWS::EKS::PodIdentityAssociation": ("TargetRoleArn",),
        "AWS::EKS::Addon": ("ConfigurationValues",),
    }
    for type_, members in dropped.items():
        templates = copy.deepcopy(enterprise.templates)
        for template in templates.values():
            for resource in template.get("Resources", {}).values():
                if resource.get("Type") == type_:
                    for member in members:
                        resource.get("Properties", {}).pop(member, None)
        assert unreached(plan, templates), type_
    # Instance groups are items of the cluster resource: a member dropped from every group is reported.
    templates = copy.deepcopy(enterprise.templates)
    for template in templates.values():
        for resource in template.get("Resources", {}).values():
            if resource.get("Type") == "AWS::SageMaker::Cluster":
                for group in resource["Properties"]["InstanceGroups"]:
                    group.pop("InstanceType", None)
    assert "InstanceType" in unreached(plan, templates)["InstanceGroup (instance group)"]
