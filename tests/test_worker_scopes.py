"""How the test run is laid out (tests/conftest.py). Under pytest-xdist every test that needs the real Slurm daemons
is in one unit (scope_of), which runs in one process, beside the workers (tests/beside.py): a second process would
start a second set of daemons on the machine's one default munge socket.
Each worker's garbage collector is tuned to its large, long-lived heap (GC_THRESHOLDS). A test's own CDK app leaves
CDK's template check out (tests.synth_helpers.minimal_app): the whole apps are checked."""

from __future__ import annotations

import ast
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


class _Worker:
    """What xdist's scheduler asks of a worker (``WorkerController``), recorded: the tests it is sent, in order."""

    def __init__(self, name: str) -> None:
        from types import SimpleNamespace

        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []
        self.done: list[int] = []

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.extend(indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def test_workers_are_sent_the_run_first_units_first_and_never_the_live_slurm_unit(pytester, monkeypatch):
    """xdist (3.6 and later) sends the scopes with the most tests first unless told otherwise; the scheduler made
    here keeps the collected order (RUN_FIRST, then as collected), so that long single-test units do not end the run
    on one worker. The live Slurm unit goes to the process beside the workers (tests/beside.py), once, whole."""
    from tests import beside
    from tests.conftest import RUN_FIRST, pytest_xdist_make_scheduler

    handed: list[list[str]] = []
    monkeypatch.setattr(beside, "start", lambda config, nodeids: handed.append(list(nodeids)))
    config = pytester.parseconfig("--tx", "2*popen", "--dist", "loadscope")
    assert config.option.loadscopereorder is True  # xdist's default
    scheduler = pytest_xdist_make_scheduler(config, None)
    assert config.option.loadscopereorder is False
    # as tests/conftest.py's pytest_collection_modifyitems orders them: RUN_FIRST's units first, each of one test
    collection = ["tests/stacks/test_scale.py::test_one", "tests/slurm/test_live_dump.py::test_a",
                  "tests/slurm/test_live_governance.py::test_b", "tests/test_app_quality.py::test_one",
                  *(f"tests/test_many.py::test_{i}" for i in range(20)), "tests/test_few.py::test_one"]
    assert RUN_FIRST[:3] == ("tests/stacks/test_scale.py", "tests/slurm/test_live_", "tests/test_app_quality.py")
    workers = [_Worker("gw0"), _Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)
        scheduler.add_node_collection(worker, collection)
    scheduler.schedule()
    first = sorted((collection[w.sent[0]] for w in workers), key=collection.index)
    assert first == ["tests/stacks/test_scale.py::test_one", "tests/test_app_quality.py::test_one"]
    assert handed == [collection[1:3]]  # one unit: the live Slurm modules together
    sent = {collection[i] for w in workers for i in w.sent}
    assert not any(beside.is_beside(nodeid) for nodeid in sent)
    for _ in collection:  # the workers finish what they are sent: then the run is done, without the live unit
        for worker in workers:
            for index in [i for i in worker.sent if i not in worker.done]:
                worker.done.append(index)
                scheduler.mark_test_complete(worker, index)
    assert scheduler.tests_finished
    assert {collection[i] for w in workers for i in w.sent} | set(collection[1:3]) == set(collection)


# Where a test may make a ``cdk.App`` itself: the helper, and the ``pipeline`` fixture, whose report from CDK's own
# template check tests/stacks/test_template_checks.py compares with the check's.
OWN_APPS = {"tests/synth_helpers.py", "tests/conftest.py"}


def _makes_a_cdk_app(source: str) -> bool:
    """Whether the source calls aws-cdk-lib's ``App`` (``cdk.App(...)``, ``App(...)`` imported from aws_cdk, under
    any name); cdk8s's ``App`` is another class."""
    tree = ast.parse(source)
    modules, classes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "aws_cdk"}
        elif isinstance(node, ast.ImportFrom) and node.module == "aws_cdk":
            classes |= {a.asname or a.name for a in node.names if a.name == "App"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in classes:
                return True
            if isinstance(f, ast.Attribute) and f.attr == "App" and isinstance(f.value, ast.Name) \
                    and f.value.id in modules:
                return True
    return False


def test_a_tests_own_cdk_app_comes_from_minimal_app_and_leaves_cdks_template_check_out(tmp_path):
    import aws_cdk as cdk

    from tests.synth_helpers import minimal_app

    root = Path(__file__).resolve().parents[1]
    found = sorted(str(p.relative_to(root)) for p in (root / "tests").rglob("*.py") if _makes_a_cdk_app(p.read_text()))
    assert found == sorted(OWN_APPS), "make a test's own app with tests.synth_helpers.minimal_app()"
    assert _makes_a_cdk_app("from aws_cdk import App as A, Stack\nStack(A(), 'S')\n")  # however it is spelled
    assert _makes_a_cdk_app("import aws_cdk\naws_cdk.App()\n")
    assert not _makes_a_cdk_app("from cdk8s import App\nApp()\n")
    # a template with a finding of CDK's check (a property against its schema): no report, the check is out
    app = minimal_app(outdir=str(tmp_path))
    cdk.CfnResource(cdk.Stack(app, "S"), "Queue", type="AWS::SQS::Queue", properties={"VisibilityTimeout": "soon"})
    app.synth()
    assert not (tmp_path / "validation-report.json").exists()



def test_the_workers_check_runs_on_the_baseline_compiler_and_their_apps_share_staged_assets(request, monkeypatch):
    """Each worker's shared check is started when collection ends, on V8's baseline compiler (``--liftoff-only``):
    the hook asks for it, and this worker's running check was started so; the same hook gives the worker's apps the
    run's pool of staged assets."""
    from hyperpod_gov import template_checks
    from tests import conftest, synth_helpers

    running = template_checks.shared()
    assert running is None or "--liftoff-only" in running._command
    asked, pools = [], []
    monkeypatch.setattr(template_checks, "shared", lambda **kwargs: asked.append(kwargs))
    monkeypatch.setattr(synth_helpers, "use_asset_pool", pools.append)
    monkeypatch.setattr(conftest.gc, "freeze", lambda: None)  # the hook's other half, tested above
    conftest.pytest_collection_finish(request.session)
    assert asked == [{"tier_up": False}]
    assert [p.name for p in pools] == ["asset-pool"] and synth_helpers._asset_pool == pools[0]


def test_an_app_links_the_pools_staged_files_and_keeps_only_those_its_assets_name(tmp_path, monkeypatch):
    """A staged file of the pool is linked into an app's folder (one inode, CDK does not copy it), the pool's files
    an app does not stage are gone from its folder once it is synthesized, and what an app staged itself joins the
    pool; small files are copied as CDK does."""
    import os

    import aws_cdk as cdk
    from aws_cdk import aws_s3_assets as s3_assets

    from tests import synth_helpers
    from tests.synth_helpers import POOLED_BYTES, minimal_app

    pool = tmp_path / "pool"
    pool.mkdir()
    synth_helpers._pool_apps()  # as tests/conftest.py does in each worker
    monkeypatch.setattr(synth_helpers, "_asset_pool", pool)  # the worker's own pool again after this test
    sources = {}
    for name, size in (("big", POOLED_BYTES), ("other", POOLED_BYTES + 1), ("small", 10)):
        sources[name] = tmp_path / f"{name}.bin"
        sources[name].write_bytes(name.encode() * (size // len(name) + 1))

    def staged(folder_name: str, *names: str) -> dict[str, os.stat_result]:
        folder = tmp_path / folder_name
        app = minimal_app(outdir=str(folder))
        stack = cdk.Stack(app, "S")
        for name in names:
            s3_assets.Asset(stack, name, path=str(sources[name]))
        app.synth()
        return {f.name: f.stat() for f in folder.glob("asset.*")}

    first = staged("first", "big", "small")
    assert {f.name for f in pool.iterdir()} == {n for n, s in first.items() if s.st_size >= POOLED_BYTES}
    other = staged("other", "other")
    assert len(other) == 1  # the pool's file of "big" was linked in and taken out again: no asset names it
    again = staged("again", "big", "small")
    assert again.keys() == first.keys()
    big, small = (next(n for n, s in again.items() if (s.st_size >= POOLED_BYTES) == large) for large in (True, False))
    assert again[big].st_ino == first[big].st_ino == (pool / big).stat().st_ino
    assert again[small].st_ino != first[small].st_ino
    # an app given no folder gets one beside the pool (CDK would make one in the system's temporary folder and copy)
    monkeypatch.delenv("CDK_OUTDIR", raising=False)
    app = minimal_app()
    s3_assets.Asset(cdk.Stack(app, "S"), "big", path=str(sources["big"]))
    unnamed = Path(app.synth().directory)
    assert unnamed.parent == tmp_path and (unnamed / big).stat().st_ino == first[big].st_ino
