"""Every Python block of docs/library.md runs as written, in an empty folder with the startup example beside it as
``governance.yaml`` (the page promises it) and the fleet example as ``fleet.yaml``."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.conftest import EXAMPLES, ROOT

PAGE = ROOT / "docs" / "library.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_the_page_has_its_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_each_example_of_the_library_page_runs(index, tmp_path, monkeypatch):
    shutil.copy(EXAMPLES / "startup.yaml", tmp_path / "governance.yaml")
    shutil.copy(EXAMPLES / "fleet.yaml", tmp_path / "fleet.yaml")  # the fleet section's example
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "cdk.out"))
    exec(compile(BLOCKS[index], f"{PAGE.name}[block {index}]", "exec"), {"__name__": f"library_doc_{index}"})
