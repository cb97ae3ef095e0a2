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


def test_readme_console_examples_print_what_the_readme_shows(tmp_path, capsys):
    """Every ```console block runs as written (from the repository root) and prints the lines it shows."""
    import shlex

    from hyperpod_gov.cli import main

    # The compare example's other spec: the startup example with no team borrowing.
    lend_only = (ROOT / "examples" / "startup.yaml").read_text().replace(
        "strategy: LendAndBorrow, borrowLimitPercent: 50", "strategy: Lend")
    (tmp_path / "startup-lend-only.yaml").write_text(lend_only)
    blocks = re.findall(r"```console\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        command, *expected = block.rstrip("\n").splitlines()
        argv = shlex.split(command.removeprefix("$ "))
        assert argv[0] == "hyperpod-gov", command
        argv = [str(tmp_path / a) if a == "startup-lend-only.yaml" else a for a in argv[1:]]
        assert main(argv) == 0, command
        out = capsys.readouterr().out.replace(str(tmp_path / "startup-lend-only.yaml"), "startup-lend-only.yaml")
        for line in expected:
            assert line in out.splitlines(), (command, line, out)
