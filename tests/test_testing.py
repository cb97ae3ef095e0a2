"""The snapshot test of docs/testing.md runs as a user would run it, in a project of its own."""

from __future__ import annotations

import re
import shutil

# Imported here, before pytester's in-process runs: each run drops the modules it imported, and a second import of
# PyYAML would meet libyaml's extension module (which is never initialized twice) still holding the first import's
# node classes, so its C emitter would recognize none of the second's ("expected SCALAR, SEQUENCE-START, ..."). The
# whole suite imported PyYAML earlier; this file run alone did not. A user's pytest run imports it once.
import yaml  # noqa: F401

from tests.conftest import EXAMPLES, ROOT


def documented_snapshot_test() -> str:
    blocks = re.findall(r"```python\n(# tests/test_governance_snapshot.py\n.*?)```",
                        (ROOT / "docs" / "testing.md").read_text(), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_documented_snapshot_test_records_then_guards_the_allocation(pytester):
    pytester.makepyfile(test_governance_snapshot=documented_snapshot_test())
    spec = pytester.path / "governance.yaml"
    shutil.copy(EXAMPLES / "startup.yaml", spec)

    pytester.runpytest_inprocess("--snapshot-update").assert_outcomes(passed=1)
    assert list((pytester.path / "__snapshots__").glob("**/*.json"))
    pytester.runpytest_inprocess().assert_outcomes(passed=1)

    spec.write_text(spec.read_text().replace("borrowLimitPercent: 50}", "borrowLimitPercent: 80}", 1))
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    assert "borrowingLimit" in result.stdout.str()


def test_snapshot_masks_asset_hashes(startup_spec):
    from hyperpod_gov.testing import normalise

    value = {"S3Key": "0123456789abcdef" * 4 + ".zip"}
    assert normalise(value) == {"S3Key": "<asset-hash>.zip"}
