"""How `hyperpod-gov synth` starts: jsii's Node.js loads the CDK's packages while Python plans the spec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("example", ["enterprise", "existing", "startup-slurm"])
def test_reading_and_planning_a_spec_loads_no_jsii_package(example):
    """`synth` imports the CDK's packages on a second thread while the main one plans the spec (cli.cmd_synth):
    jsii's channel to Node.js serves one thread at a time, so planning must not reach jsii."""
    code = ("import sys; from hyperpod_gov.cli import plan_of; "
            f"plan_of('examples/{example}.yaml', warn=False); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'jsii', 'aws_cdk', 'constructs', 'cdk8s', "
            "'cdk_nag'}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"



def test_synth_starts_node_before_the_command_line_is_parsed(monkeypatch):
    """The parser's commands import their modules (the spec's models, the live tools: about 0.6 s with the CLI's
    own import): `synth` has the CDK's packages loading by then, and importing the CLI imports no spec module."""
    import hyperpod_gov.cdk_start as cdk_start
    import hyperpod_gov.cli as cli

    code = "import sys, hyperpod_gov.cli; print(sorted(m for m in sys.modules if m.startswith('hyperpod_gov.spec')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"

    seen = []

    class Stop(Exception):
        pass

    def parser():
        seen.append(sorted(t.name.split("_")[0] for t in __import__("threading").enumerate()))
        raise Stop

    monkeypatch.setattr(cdk_start, "import_all", lambda modules: None)
    monkeypatch.setattr(cli, "build_parser", parser)
    for argv in (["synth", "examples/enterprise.yaml"], ["validate", "examples/enterprise.yaml"]):
        with pytest.raises(Stop):
            cli.main(argv)
    assert "jsii-start" in seen[0] and "jsii-start" not in seen[1]
