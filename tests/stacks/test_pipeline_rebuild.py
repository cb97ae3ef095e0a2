"""The pipeline rebuilds the app it was synthesized from: its synth command, run in a fresh copy of the
repository (another absolute path, only the files git tracks), produces the same templates."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.synth_helpers import resources

ROOT = Path(__file__).resolve().parents[2]


def _cdk(args: list[str], cwd: Path) -> None:
    """``./dev.sh cdk ARGS`` in ``cwd``: the pinned CDK CLI running cdk.json's app, as CodeBuild runs it."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "./dev.sh", "cdk", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    # jsii prints a warning for each deprecated CDK API the app calls: the app calls none
    assert "is deprecated" not in done.stderr, done.stderr[-3000:]


def _templates(out: Path) -> dict[str, dict]:
    """Every template of the assembly, the pipeline's and each stage's, by path inside the assembly."""
    return {str(p.relative_to(out)): json.loads(p.read_text()) for p in sorted(out.rglob("*.template.json"))}


def _synth_command(out: Path) -> list[str]:
    (path,) = out.glob("*-pipeline.template.json")
    (buildspec,) = [json.loads(p["Source"]["BuildSpec"]) for _, p in resources(json.loads(path.read_text()),
                    "AWS::CodeBuild::Project") if "dev.sh" in p["Source"].get("BuildSpec", "")]
    return shlex.split(buildspec["phases"]["build"]["commands"][-1])


def _fresh_copy(target: Path) -> Path:
    """The files git tracks, copied to ``target``; the installed .venv and node_modules linked, as a checkout
    CodeBuild has installed."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    for installed in (".venv", "node_modules"):
        (target / installed).symlink_to(ROOT / installed, target_is_directory=True)
    return target


def test_the_pipelines_synth_command_rebuilds_the_same_app_in_a_fresh_copy(pipeline, tmp_path):
    """The enterprise pipeline as the tests build it (the ``pipeline`` fixture, with the CLI's context), against what
    its own synth command writes through the CDK CLI in a fresh copy. That the command names the spec by its path in
    the repository whatever path the first synth was given, and carries the context the spec lacks, is
    ``test_delivery``'s (``test_the_pipeline_names_the_spec_by_its_path_in_the_repository`` and the tests beside it)."""
    command = _synth_command(pipeline)
    assert command[:3] == ["./dev.sh", "cdk", "synth"]
    assert "spec=examples/enterprise.yaml" in command

    copy = _fresh_copy(tmp_path / "checkout")
    _cdk([*command[2:], "-q"], cwd=copy)
    rebuilt, original = _templates(copy / "cdk.out"), _templates(pipeline)
    assert rebuilt.keys() == original.keys()
    for name in original:
        assert rebuilt[name] == original[name], name
