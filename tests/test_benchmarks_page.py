"""docs/benchmarks.md lists every script in bench/ (a new benchmark is found from the page)."""

from tests.conftest import ROOT


def test_every_benchmark_script_is_on_the_page():
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    scripts = sorted(p.name for p in (ROOT / "bench").glob("*.py"))
    assert scripts
    assert [s for s in scripts if f"`bench/{s}" not in page] == []
