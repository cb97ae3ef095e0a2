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

