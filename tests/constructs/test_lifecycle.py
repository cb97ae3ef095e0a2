"""The lifecycle scripts' asset (``hyperpod_gov.constructs.lifecycle``): the shipped scripts and nothing the
Python that installed or imported the package left beside them."""

from __future__ import annotations

import json
import py_compile
import shutil

import aws_cdk as cdk

from hyperpod_gov.constructs.lifecycle import SLURM_LIFECYCLE_DIR, LifecycleScripts
from hyperpod_gov.stacks.base import FEATURE_FLAGS
from tests.synth_helpers import minimal_app


def _asset_files(tmp_path, source) -> tuple[str, list[str]]:
    """The asset hash and the files staged for the lifecycle bucket's deployment of ``source``."""
    out = tmp_path / "out"
    app = minimal_app(outdir=str(out), analytics_reporting=False, context=FEATURE_FLAGS)
    stack = cdk.Stack(app, "S", env=cdk.Environment(account="111111111111", region="us-west-2"))
    LifecycleScripts(stack, "Lifecycle", bucket_name="sagemaker-x-111111111111-us-west-2", source=source)
    app.synth()
    sources = [out / a["source"]["path"] for a in json.loads((out / "S.assets.json").read_text())["files"].values()]
    (staged,) = [p for p in sources if (p / "on_create.sh").exists()]
    return staged.name, sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*"))


def test_bytecode_beside_the_shipped_scripts_is_not_uploaded_and_does_not_move_the_hash(tmp_path):
    clean = tmp_path / "clean"
    shutil.copytree(SLURM_LIFECYCLE_DIR, clean, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    compiled = tmp_path / "compiled"
    shutil.copytree(clean, compiled)
    py_compile.compile(str(compiled / "node_type.py"))  # what pip (or an import) writes: __pycache__/*.pyc
    (compiled / "node_type.pyc").write_bytes(b"\xa7\r\r\n")
    assert list((compiled / "__pycache__").glob("node_type.*.pyc"))

    clean_hash, clean_files = _asset_files(tmp_path / "a", clean)
    compiled_hash, compiled_files = _asset_files(tmp_path / "b", compiled)
    assert clean_files == ["node_type.py", "on_create.sh", "setup_accounting.sh"]
    assert compiled_files == clean_files
    assert compiled_hash == clean_hash
