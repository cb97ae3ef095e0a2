"""The README's examples run as written."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_python_examples_run():
    blocks = python_blocks()
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})  # noqa: S102 - our own documentation


def test_readme_names_the_two_commands_that_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert "./dev.sh synth" in readme and "./dev.sh test" in readme
    assert "./dev.sh test" in (ROOT / ".ci" / "run").read_text()


def test_readme_yaml_examples_are_valid_spec_fragments():
    import yaml

    from hyperpod_gov.spec.models import WorkloadIdentity

    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        data = yaml.safe_load(block)
        for identity in data["workloadIdentities"]:
            WorkloadIdentity.model_validate(identity)


def test_readme_iam_policy_for_drift_and_import_grants_exactly_the_calls_they_make():
    """Every describe_/list_ call in hyperpod_gov/live maps to an IAM action the README's policy grants, and the
    policy grants nothing else."""
    import json

    import boto3

    (block,) = re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    granted = {a for statement in json.loads(block)["Statement"] for a in statement["Action"]}
    source = "\n".join(p.read_text() for p in (ROOT / "hyperpod_gov" / "live").glob("*.py"))
    methods = set(re.findall(r'"((?:describe|list)_[a-z_]+)"', source))
    called = set()
    for service in ("sagemaker", "eks"):  # describe_cluster is called on both: the HyperPod and the EKS cluster
        mapping = boto3.client(service, region_name="us-east-1").meta.method_to_api_mapping
        called |= {f"{service}:{mapping[m]}" for m in methods if m in mapping}
    assert called == granted, (sorted(called - granted), sorted(granted - called))
