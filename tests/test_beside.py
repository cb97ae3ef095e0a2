"""The tests beside the workers (tests/beside.py), run for real: a small project whose ``tests/slurm/test_live_*.py``
module runs under this suite's own scheduler (tests/conftest.py) with two workers, in a pytest process of its own,
and whose reports, failures and a death of that process reach the run's summary and exit status."""

from __future__ import annotations

import os

from tests.conftest import ROOT

LIVE = """
import os, pathlib

OUT = pathlib.Path(os.environ["BESIDE_TEST_OUT"])


def test_records_its_process():
    (OUT / "live").write_text(f"{os.getpid()} {os.environ.get('PYTEST_XDIST_WORKER', '')}")


def test_fails():
    assert 1 == 2, "the live failure"


def test_dies():
    os._exit(3)


def test_never_reached():
    pass
"""

OTHER = """
import os, pathlib

OUT = pathlib.Path(os.environ["BESIDE_TEST_OUT"])


def test_a():
    (OUT / f"worker-{os.environ['PYTEST_XDIST_WORKER']}-a").write_text(str(os.getpid()))


def test_b():
    (OUT / f"worker-{os.environ['PYTEST_XDIST_WORKER']}-b").write_text(str(os.getpid()))
"""

CONFTEST = """
pytest_plugins = ["tests.beside"]
from tests.conftest import pytest_xdist_make_scheduler  # the suite's own scheduler
"""


def test_the_live_modules_run_beside_the_workers_and_their_failures_fail_the_run(pytester, monkeypatch, tmp_path):
    pytester.makeconftest(CONFTEST)
    pytester.mkdir("tests")
    pytester.mkdir("tests/slurm")
    (pytester.path / "tests" / "slurm" / "test_live_x.py").write_text(LIVE)
    (pytester.path / "tests" / "test_other.py").write_text(OTHER)
    monkeypatch.setenv("BESIDE_TEST_OUT", str(tmp_path))
    for name in [n for n in os.environ if n.startswith("PYTEST_XDIST_")]:  # this test's own worker's
        monkeypatch.delenv(name)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # tests.beside and tests.conftest, from this checkout

    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadscope", "-p", "no:cacheprovider", "-rf")

    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=3)
    output = result.stdout.str()
    assert "FAILED tests/slurm/test_live_x.py::test_fails - AssertionError: the live failure" in output
    for died in ("test_dies", "test_never_reached"):
        assert f"FAILED tests/slurm/test_live_x.py::{died}" in output
    assert "ended (exit status 3) before this test had ended" in output
    pid, worker = (tmp_path / "live").read_text().split(" ")
    workers = {p.read_text() for p in tmp_path.glob("worker-*")}
    assert worker == "" and pid not in workers  # not a worker: a process of its own
    assert {p.name.rsplit("-", 1)[0] for p in tmp_path.glob("worker-*")} <= {"worker-gw0", "worker-gw1"}
