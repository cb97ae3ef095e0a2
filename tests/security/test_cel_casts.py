"""tests/security/cel.py gives cel-python's evaluator a ``cast`` that builds no type aliases, only where its source
shows the aliases feed nothing else; the check that decides it tells the two apart."""

from __future__ import annotations

import importlib.util
import sys

import celpy.evaluation

from tests.security import cel


def _module(tmp_path, source: str):
    path = tmp_path / "casts_module.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("casts_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["casts_module"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["casts_module"]
    return module


def test_an_alias_read_only_by_cast_or_an_annotation_counts_as_unused(tmp_path):
    module = _module(tmp_path, "from typing import Tuple, cast\n"
                               "def f(x: Tuple[int, int]) -> Tuple[int, int]:\n"
                               "    y: Tuple[int, int] = cast(Tuple[int, int], x)\n"
                               "    return y\n")
    assert cel._only_cast_reads(module, ("Tuple",))


def test_an_alias_read_anywhere_else_keeps_the_evaluator_as_it_is(tmp_path):
    module = _module(tmp_path, "from typing import Sequence, cast\n"
                               "def f(x):\n"
                               "    return cast(Sequence[int], x) if isinstance(x, Sequence) else None\n")
    assert not cel._only_cast_reads(module, ("Sequence",))
    assert not cel._only_cast_reads(celpy.evaluation, ("Sequence",))  # the evaluator's isinstance(..., Sequence)


def test_the_installed_evaluator_got_the_cheap_cast():
    assert celpy.evaluation.cast(int, "unchanged") == "unchanged"
    assert isinstance(celpy.evaluation.Tuple, cel._AnyAlias)
