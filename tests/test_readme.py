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
