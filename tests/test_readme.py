"""The README and the reference pages in docs/: their examples run as written, their links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
# The pages whose ```python blocks are examples that run (each must have at least one).
PYTHON_PAGES = ("docs/spec.md", "docs/governance.md", "docs/allocations.md", "docs/contracts.md", "docs/testing.md")
# The pages whose ```console blocks run as written and print the lines they show.
CONSOLE_PAGES = ("README.md", "docs/simulator.md")
# The contracts other tools read: verbatim copies of the shared design documents (compared when those are beside
# the clone, as tests/kueue_schema.py does for the Kueue CRDs).
SHARED = Path(__file__).resolve().parents[2] / "shared"
CONTRACT_COPIES = {"docs/simulator-contract.md": "SIMULATOR.md", "docs/live-contract.md": "LIVE.md"}


def blocks(page: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", (ROOT / page).read_text(), flags=re.S)


def markdown_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code spans, where a link is a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def links(text: str) -> list[str]:
    return re.findall(r"\[[^\]]*\]\(([^)\s]+)\)", prose(text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")


def headings(text: str) -> set[str]:
    return {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M),
                                          flags=re.M)}


def first_spec() -> str:
    (spec,) = [b for b in blocks("README.md", "yaml") if b.startswith("# first.yaml\n")]
    return spec


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_examples_run(page):
    found = blocks(page, "python")
    assert found, f"{page} has no python example"
    for block in found:
        exec(compile(block, page, "exec"), {})  # noqa: S102 - our own documentation


def test_readme_names_the_two_commands_that_ci_runs():
    readme = README.read_text()
    assert "./dev.sh synth" in readme and "./dev.sh test" in readme
    assert "./dev.sh test" in (ROOT / ".ci" / "run").read_text()


def test_readme_first_spec_is_a_whole_valid_spec():
    import datetime as dt

    import yaml

    from hyperpod_gov.spec import parse_spec

    spec = parse_spec(yaml.safe_load(first_spec()), today=dt.date(2026, 11, 30))
    assert [t.name for t in spec.teams] == ["research", "serving"]


def test_identity_yaml_examples_are_valid_spec_fragments():
    import yaml

    from hyperpod_gov.spec.models import WorkloadIdentity

    found = blocks("docs/identity.md", "yaml")
    assert found
    for block in found:
        data = yaml.safe_load(block)
        for identity in data["workloadIdentities"]:
            WorkloadIdentity.model_validate(identity)


def test_iam_policy_for_drift_and_import_grants_exactly_the_calls_they_make():
    """Every describe_/list_ call in hyperpod_gov/live maps to an IAM action the policy in docs/live.md grants,
    and the policy grants nothing else."""
    import json

    import boto3

    (block,) = [b for b in blocks("docs/live.md", "json") if '"Statement"' in b]
    granted = {a for statement in json.loads(block)["Statement"] for a in statement["Action"]}
    source = "\n".join(p.read_text() for p in (ROOT / "hyperpod_gov" / "live").glob("*.py"))
    methods = set(re.findall(r'"((?:describe|list)_[a-z_]+)"', source))
    called = set()
    for service in ("sagemaker", "eks"):  # describe_cluster is called on both: the HyperPod and the EKS cluster
        mapping = boto3.client(service, region_name="us-east-1").meta.method_to_api_mapping
        called |= {f"{service}:{mapping[m]}" for m in methods if m in mapping}
    assert called == granted, (sorted(called - granted), sorted(granted - called))


def test_console_examples_print_what_they_show(tmp_path, capsys):
    """Every ```console block runs as written (from the repository root) and prints the lines it shows; the files
    the README writes (first.yaml) or assumes (startup-lend-only.yaml) and its build/ folder are in tmp_path.
    Then every build/ path the README names exists."""
    import shlex

    from hyperpod_gov.cli import main

    (tmp_path / "first.yaml").write_text(first_spec())
    # The compare example's other spec: the startup example with no team borrowing.
    lend_only = (ROOT / "examples" / "startup.yaml").read_text().replace(
        "strategy: LendAndBorrow, borrowLimitPercent: 50", "strategy: Lend")
    (tmp_path / "startup-lend-only.yaml").write_text(lend_only)
    local = {"first.yaml", "startup-lend-only.yaml", "build"}
    ran = 0
    for page in CONSOLE_PAGES:
        found = blocks(page, "console")
        assert found, f"{page} has no console example"
        for block in found:
            command, *expected = block.rstrip("\n").splitlines()
            argv = shlex.split(command.removeprefix("$ "))
            assert argv[0] == "hyperpod-gov", command
            argv = [str(tmp_path / a) if a in local else a for a in argv[1:]]
            assert main(argv) == 0, command
            out = capsys.readouterr().out.replace(f"{tmp_path}/", "")
            for line in expected:
                assert line in out.splitlines(), (page, command, line, out)
            ran += 1
    assert ran >= 5
    named = set(re.findall(r"`(build/[^`\s]*)`", README.read_text()))
    assert {"build/", "build/cdk.out/first-capacity.template.json"} <= named
    for path in sorted(named):
        assert (tmp_path / path).is_dir() if path.endswith("/") else (tmp_path / path).is_file(), path


def test_readme_stays_a_front_door_under_350_lines():
    assert len(README.read_text().splitlines()) < 350


def test_readme_table_of_contents_names_every_section_and_its_anchors_resolve():
    text = README.read_text()
    contents = text[text.index("## Contents\n"):].split("\n## ", 1)[0]
    toc = re.findall(r"\]\(#([^)]+)\)", contents)
    sections = [anchor(h) for h in re.findall(r"^## (.+)$", prose(text), flags=re.M) if h != "Contents"]
    assert toc == sections
    assert set(toc) <= headings(text)


def test_every_relative_link_resolves_to_a_file_in_the_repository():
    missing = []
    for page in markdown_pages():
        text = page.read_text()
        for target in links(text):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, fragment = target.partition("#")
            if not path:
                assert fragment in headings(text), (page.name, target)
                continue
            resolved = (page.parent / path).resolve()
            assert resolved.is_relative_to(ROOT), (page.name, target)
            relative = resolved.relative_to(ROOT).as_posix()
            if not resolved.is_file():
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert not missing, missing


def test_no_page_points_outside_the_repository_to_the_shared_documents():
    for page in markdown_pages():
        text = page.read_text()
        assert "../shared" not in text, page.name
        assert not re.search(r"\b(SIMULATOR|LIVE)\.md\b", text), page.name


@pytest.mark.parametrize("copy", sorted(CONTRACT_COPIES))
def test_contract_pages_are_verbatim_copies_of_the_shared_contracts(copy):
    text = (ROOT / copy).read_text()
    assert text.startswith("# ")
    original = SHARED / CONTRACT_COPIES[copy]
    if not original.exists():
        pytest.skip(f"{original} is not beside this clone")
    assert text == original.read_text()


def test_the_readme_links_only_to_files_inside_the_repository():
    """Sources are named as text (a host and path), never as links that lead out of the repository."""
    text = README.read_text()
    outside = [t for t in links(text) if re.match(r"[a-z]+:", t)]
    assert not outside and not re.search(r"<https?://|https?://", text), outside
