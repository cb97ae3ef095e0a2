"""The command modules' imports, read from the source with ``ast`` (function-level and type-checking imports count:
they are how a circle is hidden): no command module is in an import circle, the single-cluster commands import no
fleet module (``dispatch`` hands a fleet spec over), and the fleet modules take the shared helpers from
``cli_support``, below both. No simulator module is in an import circle either (the scenario parser's helpers are
in ``simulate.scenario_parse``, below ``scenario`` and ``scenario_nodes``; ``spec_nodes`` is below ``spec_level``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

import hyperpod_gov
from tests.plan.test_plan_imports import imports_of

PACKAGE = Path(hyperpod_gov.__file__).parent
COMMAND_MODULES = ("cli", "dispatch", "cli_support", "commands", "fleet_commands", "fleet_diff", "fleet_live",
                   "live.cli", "live.preflight", "diff", "explain_json", "plan.fleet_moves")
SINGLE_CLUSTER = ("commands", "cli_support", "live.cli", "live.preflight", "diff", "explain_json")
FLEET = ("fleet_commands", "fleet_diff", "fleet_live", "fleet_construct")
SIMULATE_LAYERS = (("simulate.scenario", "simulate.scenario_nodes"), ("simulate.spec_level", "simulate.spec_nodes"))


def _modules(root: Path, name: str) -> dict[str, tuple[str, ...]]:
    """Each module of the package under ``root`` (dotted name) and the modules it imports, wherever the import is."""
    out: dict[str, tuple[str, ...]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [name, *path.relative_to(root).with_suffix("").parts]
        package = ".".join(parts[:-1])
        module = package if parts[-1] == "__init__" else ".".join(parts)
        out[module] = tuple(i.target for i in imports_of(path.read_text(), module, package))
    return out


def import_graph(modules: dict[str, tuple[str, ...]]) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from pkg import x`` of a name that is no module: ``pkg``)."""

    def module_of(target: str) -> str:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target

    return {m: {module_of(t) for t in targets if module_of(t) not in ("", m)} for m, targets in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    out.append(sorted(group))
    return out


@cache
def _package_graph() -> dict[str, set[str]]:
    return import_graph(_modules(PACKAGE, "hyperpod_gov"))


def test_the_circle_finder_finds_a_circle_hidden_in_functions(tmp_path):
    """Two modules that import each other inside functions (as commands and fleet_commands did) are one circle; a
    third that imports one of them is in none."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                              "def g():\n    return 1\n")
    (pkg / "c.py").write_text("from .a import f\n")
    assert circles(import_graph(_modules(pkg, "pkg"))) == [["pkg.a", "pkg.b"]]
    (pkg / "b.py").write_text("def g():\n    return 1\n")
    assert circles(import_graph(_modules(pkg, "pkg"))) == []


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_no_command_module_is_in_an_import_circle(module):
    name = f"hyperpod_gov.{module}"
    assert name in _package_graph(), name
    assert [c for c in circles(_package_graph()) if name in c] == []


@pytest.mark.parametrize("module", SINGLE_CLUSTER)
def test_a_single_cluster_command_imports_no_fleet_module(module):
    fleet = {f"hyperpod_gov.{m}" for m in FLEET}
    assert _package_graph()[f"hyperpod_gov.{module}"] & fleet == set()


def test_the_fleet_modules_take_the_shared_helpers_from_cli_support_not_commands():
    for module in ("fleet_commands", "fleet_diff", "fleet_live"):
        imported = _package_graph()[f"hyperpod_gov.{module}"]
        assert "hyperpod_gov.commands" not in imported, module
    assert "hyperpod_gov.cli_support" in _package_graph()["hyperpod_gov.fleet_diff"]


def test_no_simulator_module_is_in_an_import_circle():
    simulate = [c for c in circles(_package_graph()) if any(m.startswith("hyperpod_gov.simulate") for m in c)]
    assert simulate == []


@pytest.mark.parametrize(("upper", "lower"), SIMULATE_LAYERS)
def test_the_simulators_node_modules_sit_below_the_modules_that_use_them(upper, lower):
    """The node half of each pair imports nothing of the other half (it was a circle through a function-level
    import); the other half imports it."""
    assert f"hyperpod_gov.{upper}" not in _package_graph()[f"hyperpod_gov.{lower}"]
    assert f"hyperpod_gov.{lower}" in _package_graph()[f"hyperpod_gov.{upper}"]


def test_no_review_pack_module_is_in_an_import_circle():
    """``review_pack.page`` renders one spec's page and ``review_pack.fleet`` a fleet's from its parts: the command
    hands each renderer to ``simulate``, so the spec's page never dispatches to the fleet's."""
    pack = [c for c in circles(_package_graph()) if any(m.startswith("hyperpod_gov.review_pack") for m in c)]
    assert pack == []
