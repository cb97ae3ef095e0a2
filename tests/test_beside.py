"""The tests beside the workers (tests/beside.py), run for real: a small project whose ``tests/slurm/test_live_*.py``
module runs under this suite's own scheduler (tests/conftest.py) with two workers, in a pytest process of its own,
and whose reports (failures and skips too) and a death of that process reach the run's summary and exit status."""

from __future__ import annotations

import os
import re

import execnet

from tests.beside import _LENGTH, _records
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

# A skip and a failure beside the workers, nothing that dies: the run must end with pytest's own summary line.
LIVE_SKIP_AND_FAIL = """
import pytest


@pytest.fixture(scope="session")
def daemons():
    pytest.skip("no daemons here: apt-get install them")


def test_passes():
    pass


def test_needs_the_daemons(daemons):
    pass


def test_fails():
    assert 1 == 2, "the live failure"
"""

CONFTEST = """
pytest_plugins = ["tests.beside"]
from tests.conftest import pytest_xdist_make_scheduler  # the suite's own scheduler
"""


def _project(pytester, monkeypatch, tmp_path, live: str) -> None:
    """The small project: ``live`` as its live Slurm module, beside two tests for the workers."""
    pytester.makeconftest(CONFTEST)
    pytester.mkdir("tests")
    pytester.mkdir("tests/slurm")
    (pytester.path / "tests" / "slurm" / "test_live_x.py").write_text(live)
    (pytester.path / "tests" / "test_other.py").write_text(OTHER)
    monkeypatch.setenv("BESIDE_TEST_OUT", str(tmp_path))
    for name in [n for n in os.environ if n.startswith("PYTEST_XDIST_")]:  # this test's own worker's
        monkeypatch.delenv(name)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # tests.beside and tests.conftest, from this checkout


def test_the_live_modules_run_beside_the_workers_and_their_failures_fail_the_run(pytester, monkeypatch, tmp_path):
    _project(pytester, monkeypatch, tmp_path, LIVE)

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


def test_a_skip_beside_the_workers_reaches_the_summary_as_a_skip(pytester, monkeypatch, tmp_path):
    # A skip's report carries (path, line, reason) as a tuple, which pytest's summary of skips (-rs, in the suite's
    # -ra) insists on; sent back as a list, the run ended in an internal error with no summary line.
    _project(pytester, monkeypatch, tmp_path, LIVE_SKIP_AND_FAIL)

    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadscope", "-p", "no:cacheprovider", "-ra")

    output = result.stdout.str()
    assert "INTERNALERROR" not in output + result.stderr.str()
    assert result.ret == 1
    assert result.parseoutcomes() == {"failed": 1, "passed": 3, "skipped": 1}
    assert re.search(r"^=+ 1 failed, 3 passed, 1 skipped in [0-9.]+s", result.stdout.lines[-1])
    assert re.search(r"^SKIPPED \[1\] tests/slurm/test_live_x\.py:\d+: no daemons here: apt-get install them$",
                     output, re.MULTILINE)
    assert "FAILED tests/slurm/test_live_x.py::test_fails - AssertionError: the live failure" in output


def test_a_report_cut_short_at_the_end_of_the_file_is_left_out():
    record = execnet.dumps({"longrepr": ("tests/x.py", 3, "Skipped: why")})
    whole = _LENGTH.pack(len(record)) + record
    assert list(_records(whole + whole[:-1])) == [{"longrepr": ("tests/x.py", 3, "Skipped: why")}]
    assert list(_records(whole + whole[:2])) == [{"longrepr": ("tests/x.py", 3, "Skipped: why")}]
