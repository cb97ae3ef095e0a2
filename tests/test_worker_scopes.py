"""How the test run is laid out (tests/conftest.py). Under pytest-xdist every test that needs the real Slurm daemons
runs on one worker (scope_of): a second worker would start a second set on the machine's one default munge socket.
Each worker's garbage collector is tuned to its large, long-lived heap (GC_THRESHOLDS)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ONE_WORKER, scope_of

SLURM = Path(__file__).resolve().parent / "slurm"
# The session fixtures of tests/slurm/conftest.py that start or use the daemons.
DAEMON_FIXTURES = ("slurm_cluster", "governed")


def _modules_using_the_daemons() -> list[str]:
    uses = re.compile(r"def \w+\([^)]*\b(" + "|".join(DAEMON_FIXTURES) + r")\b")
    return sorted(f"tests/slurm/{p.name}" for p in SLURM.glob("test_*.py") if uses.search(p.read_text()))


def test_every_module_using_the_slurm_daemons_is_in_one_scope():
    modules = _modules_using_the_daemons()
    assert len(modules) >= 2  # the live dump and governance tests
    assert {scope_of(f"{m}::test_x") for m in modules} == {ONE_WORKER[0]}


def test_other_modules_are_scopes_of_their_own():
    assert scope_of("tests/slurm/test_render_script.py::test_x") == "tests/slurm/test_render_script.py"
    assert scope_of("tests/stacks/test_scale.py::test_x[a]") == "tests/stacks/test_scale.py"


def test_every_run_first_prefix_names_test_modules():
    from tests.conftest import ROOT, RUN_FIRST

    for prefix in RUN_FIRST:
        assert sorted(ROOT.glob(prefix + ("*" if not prefix.endswith(".py") else ""))), prefix


def test_a_worker_collects_garbage_after_20000_allocations_and_never_walks_what_collection_imported():
    import gc

    from tests.conftest import GC_THRESHOLDS

    assert gc.get_threshold() == GC_THRESHOLDS == (20_000, 20, 50)
    assert gc.get_freeze_count() > 10_000  # what collection imported: this module alone collected, 37,000 objects
