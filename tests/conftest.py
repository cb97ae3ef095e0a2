"""Shared fixtures. CDK/jsii start-up and synthesis are slow: each distinct app is synthesized once per test run.

What to reuse (a new test should take one of these rather than synthesize an example again):

- ``enterprise`` / ``startup``: ``tests.synth_helpers.Synthesized`` of ``examples/enterprise.yaml`` /
  ``examples/startup.yaml`` (templates by stack name, construct warnings, the folder with ``cdk.out``, ``k8s``,
  ``contracts``, ``iam``). cdk-nag ran as part of the synth. Read them; never write into ``out_dir``.
- ``enterprise_spec`` / ``startup_spec``: the parsed examples (dated ``TODAY``).
- ``pipeline``: the folder of the enterprise pipeline app's cloud assembly.
- ``base``: a small valid spec (``BASE``) as loaded from YAML, a copy of its own per test; ``as_existing(data)``
  turns it into a governance-only spec.
- ``tests.synth_helpers.cfn_lint(path, region)``: cfn-lint's matches for a template, the rule set built once per
  process and a template with the same bytes linted once.
- A variant app of a module's own: a ``scope="module"`` fixture around ``synthesize(parse_spec(data), folder)``;
  a construct's properties: the construct alone on a ``cdk.Stack`` of a ``tests.synth_helpers.minimal_app()`` (CDK's
  template check off: the whole apps are checked) and ``Template.from_stack``, not a whole app.

Under pytest-xdist (``-n 2``) session fixtures run once per worker; the synthesized examples are built by the first
worker that needs them and read back by the others (``once_per_run``). Run a module's tests on one worker
(``--dist loadscope``) so that its module fixtures are built once too; the modules in ``RUN_FIRST`` go out first.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import fcntl
import gc
import os
import shutil
from pathlib import Path
from typing import Iterator

import pytest

from hyperpod_gov.cdk_start import resolve_modules_once

pytest_plugins = ["pytester", "tests.beside"]

# Before any test imports aws_cdk (which starts jsii's Node.js with this process's environment), as the CLI and
# app.py do: the test processes' jsii and the commands they run resolve each module specifier once.
resolve_modules_once()

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TODAY = dt.date(2026, 11, 30)  # fixed, so contract review dates never make the tests flaky

BASE = {
    "name": "acme",
    "accounts": {
        "capacity": {"id": "111111111111", "region": "us-east-1"},
        "consumers": [{"name": "data", "id": "222222222222", "region": "us-east-1"}],
    },
    "cluster": {
        "name": "ml",
        "kubernetesVersion": "1.33",
        "admins": ["arn:aws:iam::111111111111:role/Admin"],
        "instanceGroups": [
            {"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 2},
            {"name": "small", "instanceType": "ml.g5.8xlarge", "count": 4},
        ],
    },
    "scheduler": {"priorityClasses": [{"name": "training", "weight": 80}]},
    "teams": [
        {
            "name": "team-a",
            "quota": [{"instanceType": "ml.p5.48xlarge", "accelerators": 8}],
            "sharing": {"strategy": "LendAndBorrow", "borrowLimitPercent": 50},
            "access": {"submitters": ["arn:aws:iam::111111111111:role/A"]},
            "workloadIdentities": [
                {"serviceAccount": "trainer", "targetRoleArn": "arn:aws:iam::222222222222:role/reader"}
            ],
        },
        {
            "name": "team-b",
            "quota": [{"instanceType": "ml.g5.8xlarge", "count": 2}],
            "sharing": {"strategy": "DontLend"},
        },
    ],
}


# Under xdist the modules under these path prefixes go out first, in this order: the longest units (module totals of
# `--durations=0`, 3 December: 10 to 25 s each on a slow machine; the live Slurm tests are mostly waiting) then run
# beside the rest of the suite instead of after it on one worker while the other waits, and the suite ends with
# short modules on both workers. xdist's own order (`--loadscope-reorder`, its default: the scopes with the most
# tests first) is turned off for this (pytest_xdist_make_scheduler): it sent single-test units such as the
# pipeline's rebuild and the engine image's test out last, where the other worker idled for 11 s.
RUN_FIRST = ("tests/stacks/test_scale.py", "tests/slurm/test_live_", "tests/test_app_quality.py",
             "tests/stacks/test_engine_image.py", "tests/stacks/test_pipeline_rebuild.py",
             "tests/security/test_checkov.py", "tests/security/test_admission.py", "tests/stacks/test_delivery.py",
             "tests/slurm/test_render_script.py", "tests/operators/test_operator_stacks.py",
             "tests/stacks/test_template_checks.py", "tests/stacks/test_existing.py",
             "tests/stacks/test_kept_findings.py", "tests/constructs/test_task_governance_provider.py",
             "tests/stacks/test_predicted_templates.py")


# Under xdist the modules under each of these path prefixes are one scope (one process runs all their tests): the live
# Slurm tests share one set of real Slurm daemons on the machine's default munge socket, which a second process would
# start again. Under dev.sh's --dist loadscope that process is the one beside the workers (tests/beside.py).
ONE_WORKER = ("tests/slurm/test_live_",)


def pytest_collection_modifyitems(items) -> None:
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=_first)  # stable: otherwise as collected


# Python's cyclic garbage collector, as the tests' workers need it. A worker holds a large heap that lives until it
# ends (the CDK's generated modules, cfn-lint's rules and schemas, the synthesized apps of the session fixtures) and
# allocates fast (templates read into dicts, manifests, specs): with the default thresholds (700, 10, 10) the
# collector ran about 10,000 times in each worker: 18.6 s of the suite's CPU, both workers timed with gc.callbacks.
# What collection imported is frozen (gc.freeze: never walked again) and a collection starts after 20,000
# allocations, not 700: about 220 collections a worker, 5.8 to 6.4 s in all. Most of what the tests drop has no
# reference cycle and goes with its last reference anyway.
GC_THRESHOLDS = (20_000, 20, 50)
gc.set_threshold(*GC_THRESHOLDS)


def pytest_collection_finish(session) -> None:
    gc.collect()
    gc.freeze()
    # The worker's one template check (``shared()``, which every ``stacks.app.synth`` of the run uses), started now
    # on V8's baseline compiler: it checks many small apps, for which the optimizing compiler's threads cost more
    # CPU than they save (the same findings under both: tests/stacks/test_template_checks.py). The whole suite:
    # 0.961 of the CPU and 0.948 of the wall time against the optimizing compiler (2 pairs, 3 December).
    from hyperpod_gov.template_checks import shared
    from tests.beside import in_beside_process
    from tests.synth_helpers import use_asset_pool

    if not in_beside_process():  # the live Slurm tests check no template and synthesize no app
        shared(tier_up=False)
        use_asset_pool(run_folder(session.config._tmp_path_factory) / "asset-pool")  # pytest's tmp_path plugin sets it


def _first(item) -> int:
    module = item.nodeid.split("::", 1)[0]
    return next((i for i, prefix in enumerate(RUN_FIRST) if module.startswith(prefix)), len(RUN_FIRST))


def scope_of(nodeid: str) -> str:
    """The unit the workers get under xdist: the test's module, or one unit for all the modules of a prefix in
    ONE_WORKER."""
    module = nodeid.split("::", 1)[0]
    return next((prefix for prefix in ONE_WORKER if module.startswith(prefix)), module)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadscope`` (dev.sh's default) with the scopes of ``scope_of``, sent out in the order collected
    (``RUN_FIRST``, then as collected), but for the units of ``tests.beside.BESIDE``, which a pytest process of their
    own runs beside the workers; other modes as xdist makes them."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False

    from tests import beside

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            # The BESIDE units go to a pytest process of their own (tests/beside.py), never to a worker; once.
            units = [scope for scope in self.workqueue if beside.is_beside(scope)]
            if units:
                beside.start(config, [nodeid for scope in units for nodeid in self.workqueue.pop(scope)])
            if self.workqueue:
                super()._assign_work_unit(node)

    return Scheduling(config, log)


@pytest.fixture
def base() -> dict:
    """A small valid spec as loaded from YAML; tests mutate their own copy."""
    return copy.deepcopy(BASE)


@pytest.fixture(scope="session")
def today() -> dt.date:
    return TODAY


@pytest.fixture(scope="session")
def enterprise_spec():
    from hyperpod_gov.spec import load_spec

    return load_spec(EXAMPLES / "enterprise.yaml", today=TODAY)


@pytest.fixture(scope="session")
def startup_spec():
    from hyperpod_gov.spec import load_spec

    return load_spec(EXAMPLES / "startup.yaml", today=TODAY)


def run_folder(tmp_path_factory) -> Path:
    """The folder of this run's temporary folders: its base one, and under xdist the one holding every worker's."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def once_per_run(tmp_path_factory, name: str) -> Iterator[tuple[Path, bool]]:
    """A folder for what ``name`` builds, and whether it still has to be built into it.

    Without pytest-xdist: a new folder of this session, to be built. Under xdist every worker runs the session
    fixtures; the folder is shared by the run's workers (beside their base temporary folders), the first worker to
    get here builds into it while holding a lock, and the others wait for the lock and read it.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        yield tmp_path_factory.mktemp(name), True
        return
    root = run_folder(tmp_path_factory) / "once-per-run"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also when the build fails
        if done.exists():
            yield folder, False
            return
        shutil.rmtree(folder, ignore_errors=True)  # what a worker whose build failed left
        folder.mkdir()
        yield folder, True
        done.touch()


def _synthesized_example(spec, tmp_path_factory, name: str):
    from tests.synth_helpers import synthesize, synthesized_in

    with once_per_run(tmp_path_factory, name) as (folder, build):
        return synthesize(spec, folder) if build else synthesized_in(spec, folder)


@pytest.fixture(scope="session")
def enterprise(enterprise_spec, tmp_path_factory):
    """The enterprise example synthesized once per test run (cdk-nag runs as part of it)."""
    return _synthesized_example(enterprise_spec, tmp_path_factory, "enterprise")


@pytest.fixture(scope="session")
def startup(startup_spec, tmp_path_factory):
    """The startup example synthesized once per test run (cdk-nag runs as part of it)."""
    return _synthesized_example(startup_spec, tmp_path_factory, "startup")


@pytest.fixture(scope="session")
def elastic(tmp_path_factory):
    """The elastic-capacity example (``examples/elastic.yaml``, issue 57) synthesized once per test run."""
    from hyperpod_gov.spec import load_spec

    return _synthesized_example(load_spec(EXAMPLES / "elastic.yaml", today=TODAY), tmp_path_factory, "elastic")


@pytest.fixture
def snapshot_json(snapshot):
    """syrupy snapshots stored as readable, sorted JSON (one file per test)."""
    from syrupy.extensions.json import JSONSnapshotExtension

    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture(scope="session")
def pipeline(enterprise_spec, tmp_path_factory):
    """The enterprise pipeline app synthesized once per test run (cdk-nag runs on it and on every stage), with the
    context `cdk synth` gives app.py (``REFERENCE_APP_CONTEXT``: cdk.json's and the CLI's), so that its templates are
    those ``cdk synth`` writes."""
    import aws_cdk as cdk

    from tests.synth_helpers import REFERENCE_APP_CONTEXT, build_pipeline_app_for

    with once_per_run(tmp_path_factory, "pipeline") as (out, build):
        if build:  # the context `cdk synth` gives app.py: cdk.json's and the CLI's own
            app = cdk.App(outdir=str(out), analytics_reporting=False, context=dict(REFERENCE_APP_CONTEXT))
            build_pipeline_app_for(enterprise_spec, spec_path="examples/enterprise.yaml", app=app).synth()
    return out


def as_existing(data: dict, eks_cluster_name: str = "shared-eks") -> dict:
    """``data`` (BASE-shaped) governing a cluster that runs already: ``cluster.existing`` set, and the keys of a
    created cluster it refuses (admins, a VPC to build) taken out. Returns ``data``."""
    data["cluster"]["existing"] = {
        "hyperPodClusterArn": "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcd1234efgh",
        "eksClusterName": eks_cluster_name, "vpcId": "vpc-0123456789abcdef0",
        "subnetIds": ["subnet-0123456789abcdef0"], "securityGroupId": "sg-0123456789abcdef0"}
    data["cluster"].pop("admins", None)
    data["cluster"]["vpc"] = {"cidr": "10.0.0.0/16"}
    return data
