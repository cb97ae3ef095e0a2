"""Test modules that run beside the xdist workers, in a pytest process of their own (``BESIDE``).

The live Slurm tests (``tests/slurm/test_live_*.py``) wait for real daemons for about 16 s (slurmctld schedules
once a second) and use about 1 s of CPU. On one of the two workers they kept that worker, and so half of the
machine, idle for those 16 s. Under ``./dev.sh test`` (pytest-xdist, ``--dist loadscope``) the controller, which
only waits while the workers run, keeps them from the workers (tests/conftest.py's scheduler hands their unit to
:func:`start`) and runs them in a third pytest process that collects only them (``python -m pytest -n 0`` and
their node ids, as the workers collected them: ``-k`` and ``-m`` are applied already). The workers run the rest
meanwhile.

That process sends its reports back as xdist's workers do: made plain data by pytest's own
``pytest_report_to_serializable``, then serialized by execnet, the library that carries a worker's reports to xdist's
controller, one length-prefixed record each, in a file (``REPORTS``). Not JSON: execnet keeps tuples, and a skip's
``longrepr`` must come back as the tuple (path, line, reason) that pytest's summary of skips asserts on (as a JSON
list it ended the run in an internal error, with no summary line). Once the workers are done, the controller logs
them (:func:`pytest_runtestloop`): they count in the summary and fail the run like any other test's. A test the
process did not report to its end (it died, or never got there) is reported failed, with the end of the process's
output.

Without xdist (``-n 0``) or under another ``--dist``, these modules run where the others do.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence

import execnet
import pytest

BESIDE = ("tests/slurm/test_live_",)  # node id prefixes; each is one scope of tests/conftest.py's ONE_WORKER
REPORTS = "HYPERPOD_GOV_TESTS_BESIDE_REPORTS"  # set in the beside process: the file its reports go to
OUTPUT_TAIL = 4000  # characters of the beside process's output in the report of a test it did not finish
STOP_SECONDS = 60  # after an interrupt: how long the beside process has to stop its daemons (SIGINT) before SIGKILL
_RUN = pytest.StashKey["BesideRun"]()


def is_beside(nodeid: str) -> bool:
    return nodeid.startswith(BESIDE)


def in_beside_process() -> bool:
    """Whether this pytest process is the one the controller started for the ``BESIDE`` tests."""
    return bool(os.environ.get(REPORTS))


class BesideRun:
    """The beside process for ``nodeids`` (relative to ``rootdir``, where it runs), started with ``folder`` for its
    base temporary folder, its output and its reports."""

    def __init__(self, nodeids: Sequence[str], folder: Path, rootdir: Path) -> None:
        self.nodeids = list(nodeids)
        folder.mkdir(parents=True, exist_ok=True)
        self.reports, self.output = folder / "reports.bin", folder / "output.txt"
        self.reports.write_bytes(b"")
        command = [sys.executable, "-m", "pytest", "-n", "0", "-q", "-p", "no:cacheprovider",
                   "--basetemp", str(folder / "tmp"), *self.nodeids]
        with open(self.output, "wb") as out:
            self.process = subprocess.Popen(command, cwd=rootdir, stdin=subprocess.DEVNULL, stdout=out,
                                            stderr=subprocess.STDOUT, env=_environment(str(self.reports)))

    def stop(self) -> None:
        """Interrupt it as Ctrl-C would (its fixtures stop the daemons), killed if it does not end in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log(self, config: pytest.Config) -> None:
        """Wait for it, then log its reports in this process, and a failure for each test it did not finish."""
        code = self.process.wait()
        finished: set[str] = set()
        started: set[str] = set()
        hook = config.hook
        for data in _records(self.reports.read_bytes()):
            report = hook.pytest_report_from_serializable(config=config, data=data)
            if isinstance(report, pytest.CollectReport):
                hook.pytest_collectreport(report=report)
                continue
            if report.nodeid not in started:
                started.add(report.nodeid)
                hook.pytest_runtest_logstart(nodeid=report.nodeid, location=report.location)
            hook.pytest_runtest_logreport(report=report)
            if report.when == "teardown":
                finished.add(report.nodeid)
                hook.pytest_runtest_logfinish(nodeid=report.nodeid, location=report.location)
        missing = [n for n in self.nodeids if n not in finished]
        if not missing:
            return
        tail = self.output.read_text(errors="replace")[-OUTPUT_TAIL:]
        for nodeid in missing:
            location = (nodeid.split("::", 1)[0], None, nodeid.split("::", 1)[-1])
            report = pytest.TestReport(
                nodeid=nodeid, location=location, keywords={}, outcome="failed", when="call",
                longrepr=f"the pytest process that runs the tests beside the workers (tests/beside.py) ended "
                         f"(exit status {code}) before this test had ended; the end of its output:\n{tail}")
            if nodeid not in started:
                hook.pytest_runtest_logstart(nodeid=nodeid, location=location)
            hook.pytest_runtest_logreport(report=report)
            hook.pytest_runtest_logfinish(nodeid=nodeid, location=location)


_LENGTH = struct.Struct("!I")  # each record's length, before it


def _records(data: bytes):
    """The reports in the file, in order; a last record cut short (its process killed while writing) is left out:
    its test is one the process did not finish."""
    at = 0
    while at + _LENGTH.size <= len(data):
        (size,) = _LENGTH.unpack_from(data, at)
        at += _LENGTH.size
        if at + size > len(data):
            return
        yield execnet.loads(data[at:at + size])
        at += size


def _environment(reports: str) -> dict[str, str]:
    """This process's environment, but for xdist's worker variables (the beside process is no worker)."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}, REPORTS: reports}


def start(config: pytest.Config, nodeids: Sequence[str]) -> None:
    """Start the beside process for ``nodeids`` (called by the controller's scheduler, once)."""
    if _RUN in config.stash:
        raise RuntimeError("the tests beside the workers were handed out twice")
    factory = getattr(config, "_tmp_path_factory", None)  # the run's (pytest's tmp_path plugin sets it)
    base = factory.getbasetemp() if factory is not None else Path(tempfile.mkdtemp(prefix="hyperpod-gov-tests-"))
    config.stash[_RUN] = BesideRun(nodeids, base / "beside", config.rootpath)


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session):
    """In the controller: once the workers are done, the beside process's reports (stopped first when the run
    was interrupted)."""
    try:
        result = yield
    except BaseException:
        run = session.config.stash.get(_RUN, None)
        if run is not None:
            run.stop()
            run.log(session.config)
        raise
    run = session.config.stash.get(_RUN, None)
    if run is not None:
        run.log(session.config)
    return result


class _Reporter:
    """In the beside process: each test report, and each failed collection report, to the controller's file."""

    def __init__(self, config: pytest.Config, path: str) -> None:
        self._config, self._path = config, path

    def _send(self, report) -> None:
        record = execnet.dumps(self._config.hook.pytest_report_to_serializable(config=self._config, report=report))
        with open(self._path, "ab") as f:
            f.write(_LENGTH.pack(len(record)) + record)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._send(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._send(report)


def pytest_configure(config: pytest.Config) -> None:
    if in_beside_process():
        config.pluginmanager.register(_Reporter(config, os.environ[REPORTS]), "hyperpod-gov-beside-reporter")
