"""`--help` of the command and of every subcommand: each file it names is in the repository, each option it
names is one the command takes."""

from __future__ import annotations

import argparse
import re

import pytest

from hyperpod_gov.cli import build_parser, main
from tests.conftest import ROOT

PARSER = build_parser()
SUBPARSERS: dict[str, argparse.ArgumentParser] = dict(PARSER._subparsers._group_actions[0].choices)  # noqa: SLF001

# A relative path with a '/', or a file name with one of these endings.
PATH = re.compile(r"(?<![\w./~-])[\w.-]+(?:/[\w.-]+)+/?|(?<![\w./~-])[\w-]+(?:\.[\w-]+)*\.(?:md|yaml|yml|csv|json)\b")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
COMMAND_SPAN = re.compile(r"`hyperpod-gov ([a-z-]+)([^`]*)`")


def help_of(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    return " ".join(out.split())  # argparse wraps at spaces: one line, so no word is cut


def named_paths(text: str) -> list[str]:
    """The repository paths ``text`` names: a metavar's paths (``OUT/cdk.out``, ``TRACE.csv``: the first part in
    capitals) are placeholders, ``~/...`` a home folder, a URL's host and path not the repository's."""
    text = re.sub(r"https?://\S+", "", text)
    out = []
    for m in PATH.finditer(text):
        path = m.group(0).rstrip(".")
        first = re.split(r"[/.]", path)[0]
        if first.isupper() or len(first) == 1 and first.isupper():
            continue
        out.append(path)
    return out


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {o for action in parser._actions for o in action.option_strings if o.startswith("--")}  # noqa: SLF001


def test_named_paths_finds_relative_paths_and_skips_placeholders():
    assert named_paths("see docs/simulator.md, write OUT/cdk.out, TRACE.csv, ~/.kube/config and helm_chart/x") == [
        "docs/simulator.md", "helm_chart/x"]
    assert named_paths("the scenario (examples/startup.yaml) and REPORT.json") == ["examples/startup.yaml"]


@pytest.mark.parametrize("command", ["", *SUBPARSERS])
def test_every_path_a_help_names_is_in_the_repository(command, capsys):
    text = help_of([command] if command else [], capsys)
    missing = [p for p in named_paths(text) if not (ROOT / p).exists()]
    assert not missing, f"hyperpod-gov {command} --help names {missing}, not in the repository"


@pytest.mark.parametrize("command", ["", *SUBPARSERS])
def test_every_option_a_help_names_is_one_the_command_takes(command, capsys):
    text = help_of([command] if command else [], capsys)
    allowed = options_of(SUBPARSERS[command] if command else PARSER)
    if not command:  # the command list quotes each command's own options
        allowed |= {o for p in SUBPARSERS.values() for o in options_of(p)}
    wrong = []
    for m in COMMAND_SPAN.finditer(text):  # `hyperpod-gov report SPEC --format json`: report's options
        other = SUBPARSERS.get(m.group(1))
        assert other is not None, f"names a command hyperpod-gov does not have: {m.group(0)}"
        wrong += [o for o in OPTION.findall(m.group(2)) if o not in options_of(other)]
    rest = COMMAND_SPAN.sub("", text)
    wrong += [o for o in OPTION.findall(rest) if o not in allowed]
    assert not wrong, f"hyperpod-gov {command} --help names options it does not take: {sorted(set(wrong))}"


def test_import_describes_its_region_without_a_spec(capsys):
    """import takes no spec (it writes one): its --region default cannot be a spec's region."""
    text = help_of(["import"], capsys)
    region = text.split("--region REGION", 2)[-1]
    assert "spec's" not in region.split("--out")[0]
    assert "--region REGION AWS region (default: the region of the AWS profile" in text


def test_simulate_points_to_the_scenario_format(capsys):
    assert "docs/simulator-contract.md" in help_of(["simulate"], capsys)
