"""What hyperpod_gov/plan imports, read from its source with ``ast`` (issue 54, one object per team): plan-part
builders take their inputs, not the finished ``Plan`` (no ``Plan`` imported for type checking only), no two plan
modules import each other in a circle (type-checking and function-level imports count: they are how a circle is
hidden), and the plan imports no emitter (slurm, charts, constructs, stacks). The emitters and views named below
read a team's parts from the team object they iterate, never by looking its name up elsewhere in the plan."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import hyperpod_gov

PACKAGE = Path(hyperpod_gov.__file__).parent
PLAN = PACKAGE / "plan"
EMITTERS = ("hyperpod_gov.slurm", "hyperpod_gov.charts", "hyperpod_gov.constructs", "hyperpod_gov.stacks")
# Modules that read each team's parts from the team object they iterate (TeamPlan.monitoring, .tools_policy, ...).
NO_NAME_LOOKUPS = (
    "review_pack/page.py",
    "plan/tools_policy.py",
    "plan/views_monitoring.py",
    "plan/api_access.py",
    "constructs/tools_policy.py",
)


@dataclass(frozen=True)
class Import:
    module: str  # the importing plan module ("quotas"; the package's own "__init__")
    target: str  # absolute dotted name of what is imported from ("hyperpod_gov.plan.slurm")
    names: tuple[str, ...]  # the names a ``from`` import takes (() for ``import x``)
    type_checking: bool  # inside ``if TYPE_CHECKING:``
    in_function: bool  # inside a function body (a deferred import)
    line: int


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(node: ast.ImportFrom, package: str) -> list[tuple[str, tuple[str, ...]]]:
    """(target module, names) of a ``from`` import; ``from . import names`` imports the module ``names``."""
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - node.level + 1]) if node.level else ""
    if node.module is None:
        return [(f"{base}.{a.name}", ()) for a in node.names]
    target = f"{base}.{node.module}" if base else node.module
    return [(target, tuple(a.name for a in node.names))]


def imports_of(source: str, module: str, package: str = "hyperpod_gov.plan") -> list[Import]:
    """Every import of a module's source, wherever it is: top level, under TYPE_CHECKING, in a function."""
    out: list[Import] = []

    def visit(node: ast.AST, type_checking: bool, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                out.extend(Import(module, a.name, (), type_checking, in_function, child.lineno) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                out.extend(Import(module, target, names, type_checking, in_function, child.lineno)
                           for target, names in _resolve(child, package))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), True, in_function)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), type_checking, in_function)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, type_checking, True)
            elif isinstance(child, ast.Call) and _dynamic_import(child):
                out.append(Import(module, _dynamic_import(child), (), type_checking, in_function, child.lineno))
                visit(child, type_checking, in_function)
            else:
                visit(child, type_checking, in_function)

    visit(ast.parse(source), False, False)
    return out


def _dynamic_import(call: ast.Call) -> str:
    """The module of ``importlib.import_module("...")`` / ``__import__("...")`` with a literal name, else ""."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name in ("import_module", "__import__") and call.args and isinstance(call.args[0], ast.Constant) \
            and isinstance(call.args[0].value, str):
        return call.args[0].value
    return ""


def plan_imports() -> list[Import]:
    return list(_read_plan())


@cache
def _read_plan() -> tuple[Import, ...]:
    return tuple(i for path in sorted(PLAN.glob("*.py")) for i in imports_of(path.read_text(), path.stem))


def _plan_module(target: str, modules: set[str]) -> str | None:
    """The plan module an import reaches (``hyperpod_gov.plan.x.y`` -> ``x``; the package itself -> ``__init__``)."""
    if target == "hyperpod_gov.plan":
        return "__init__"
    if target.startswith("hyperpod_gov.plan."):
        name = target.split(".")[2]
        return name if name in modules else "__init__"
    return None


def cycles(imports: list[Import], modules: set[str]) -> list[list[str]]:
    """One circle per strongly connected group of plan modules (Tarjan), each as a closed path of module names."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for i in imports:
        target = _plan_module(i.target, modules)
        if target is not None and target != i.module:
            graph[i.module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_circle(graph, g) for g in groups]


def _circle(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A closed path through ``group`` from its first module (breadth-first, so the shortest)."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"no circle through {group}")


def plan_type_checking_imports(imports: list[Import]) -> list[str]:
    return [f"plan/{i.module}.py:{i.line} imports Plan from {i.target}"
            + (" under TYPE_CHECKING" if i.type_checking else " inside a function")
            for i in imports if "Plan" in i.names and (i.type_checking or i.in_function)]


def emitter_imports(imports: list[Import]) -> list[str]:
    return [f"plan/{i.module}.py:{i.line} imports {i.target}" for i in imports
            if any(i.target == e or i.target.startswith(e + ".") for e in EMITTERS)]


def _modules() -> set[str]:
    return {p.stem for p in PLAN.glob("*.py")}


def test_no_plan_module_imports_the_plan_for_type_checking_or_inside_a_function():
    assert plan_type_checking_imports(plan_imports()) == []


def test_plan_modules_import_each_other_in_no_circle_type_checking_and_deferred_imports_included():
    assert cycles(plan_imports(), _modules()) == []


def test_the_plan_imports_no_emitter_not_even_inside_a_function():
    assert emitter_imports(plan_imports()) == []


# --- the checks fail when their property breaks ------------------------------------------------------------------


def _with(module: str, extra: str) -> list[Import]:
    """The plan's imports with ``extra`` (source) added to ``module``."""
    return plan_imports() + imports_of(extra, module)


@pytest.mark.parametrize("source", [
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .plan import Plan\n",
    "import typing\nif typing.TYPE_CHECKING:\n    from .model import Plan\n",
    "def f():\n    from .model import Plan\n",
], ids=["TYPE_CHECKING from .plan", "typing.TYPE_CHECKING from .model", "inside a function"])
def test_a_plan_imported_for_type_checking_is_found(source):
    assert plan_type_checking_imports(_with("tools_policy", source)) == [
        f"plan/tools_policy.py:{source.count(chr(10))} imports Plan from hyperpod_gov.plan."
        f"{'plan' if '.plan ' in source else 'model'}"
        + (" inside a function" if source.startswith("def") else " under TYPE_CHECKING")]


def test_a_runtime_plan_import_at_the_top_is_no_finding():
    assert plan_type_checking_imports(imports_of("from .model import Plan\n", "views_cluster")) == []


@pytest.mark.parametrize("source, circle", [
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .slurm import SlurmTeamPlan\n",
     ["quotas", "slurm", "quotas"]),
    ("def f():\n    from . import slurm\n", ["quotas", "slurm", "quotas"]),
    ("from .views import VIEWS\n", None),
], ids=["TYPE_CHECKING", "deferred", "longer circle"])
def test_a_circle_among_plan_modules_is_found(source, circle):
    found = cycles(_with("quotas", source), _modules())
    assert len(found) == 1
    assert found[0][0] == found[0][-1] and "quotas" in found[0]
    if circle is not None:
        assert found[0] == circle


@pytest.mark.parametrize("source, target", [
    ("from ..charts import render\n", "hyperpod_gov.charts"),
    ("def f():\n    from ..slurm.render import files\n", "hyperpod_gov.slurm.render"),
    ("from .. import constructs\n", "hyperpod_gov.constructs"),
    ("import hyperpod_gov.stacks.app\n", "hyperpod_gov.stacks.app"),
    ("import importlib\ndef f():\n    return importlib.import_module('hyperpod_gov.charts')\n", "hyperpod_gov.charts"),
], ids=["charts", "slurm in a function", "from .. import constructs", "import stacks", "import_module"])
def test_an_emitter_import_is_found(source, target):
    assert emitter_imports(_with("derive", source))[-1].endswith(f"imports {target}")


def test_other_imports_of_the_package_are_no_emitter():
    assert emitter_imports(imports_of("from .. import catalog\nfrom ..spec.models import Team\n", "x")) == []


# --- look-ups of a team by name ----------------------------------------------------------------------------------


def name_lookups(source: str) -> list[str]:
    """Where a module looks a team up by name: an index of objects by ``.team``/``.name``
    (``{w.team: w for w in ...}``), a ``.team(name)`` call, or a filter on ``.team ==``/``.name ==``
    (``next(t for t in ... if t.name == n)``). A result keyed by team (``{p.team: document(p) ...}``) is none."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.DictComp) and isinstance(node.key, ast.Attribute) and node.key.attr in (
                "team", "name") and isinstance(node.value, ast.Name) and isinstance(node.key.value, ast.Name) \
                and node.key.value.id == node.value.id:
            out.append(f"{node.lineno}: an index by .{node.key.attr}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "team":
            out.append(f"{node.lineno}: .team(...)")
        elif isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops) and any(
                isinstance(side, ast.Attribute) and side.attr in ("team", "name")
                for side in (node.left, *node.comparators)):
            out.append(f"{node.lineno}: a filter on .team/.name")
    return out


@pytest.mark.parametrize("path", NO_NAME_LOOKUPS)
def test_emitters_and_views_read_a_teams_parts_from_the_team_not_by_its_name(path):
    assert name_lookups((PACKAGE / path).read_text()) == []


@pytest.mark.parametrize("source", [
    "watches = {w.team: w for w in plan.monitoring.teams}\n",
    "state = {t.name: t for t in plan.teams}\n",
    "team = plan.team(name)\n",
    "policy = next(p for p in plan.tools_policies if p.team == name)\n",
])
def test_a_look_up_by_name_is_found(source):
    assert len(name_lookups(source)) == 1


def test_a_result_keyed_by_team_is_no_look_up():
    assert name_lookups("docs = {p.team: render(p) for p in policies}\n") == []
