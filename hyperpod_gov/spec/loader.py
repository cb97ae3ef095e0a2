"""Load a spec from YAML or a mapping and turn every problem into a ``SpecIssue``."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any, Mapping

from pydantic import ValidationError

from .acknowledgements import STRICT_NOTE, Review, acknowledge, check_acknowledgements
from .errors import NO_VALUE, SpecError, SpecIssue
from .models import GovernanceSpec
from .rulebook import RuleBook
from .rules import RULES, check_spec
from .environments import chosen_environment, environment_names
from .validation_issues import _model_at, issues_from_validation  # noqa: F401  (re-exported: beside, the tests)
from .yaml_reader import (  # noqa: F401  (re-exported: the CLI and the tests read YAML through spec.loader)
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    parse_yaml,
    read_yaml,
    spec_path_before_error,
)


def load_spec(path: str | Path, *, strict: bool = False, today: dt.date | None = None,
              known: RuleBook = RULES, environment: str | None = None) -> GovernanceSpec:
    """Load, validate and cross-check a spec file. Raises ``SpecError`` listing every problem.

    ``known``: the rules whose warnings the spec may acknowledge (see ``validate``). ``environment``: the spec of
    that environment (``environments[]``: the base with its accounts and overrides merged on) instead of the base.
    """
    source = str(path) if environment is None else f"{path} (environment {environment})"
    try:
        data = chosen_environment(read_yaml(path), environment)
    except SpecError as exc:
        raise SpecError(exc.issues, source) from None
    if isinstance(data, Mapping) and "clusters" in data:  # a fleet (spec.fleet): one spec per cluster, not one
        raise SpecError([SpecIssue(
            "clusters", "makes this a fleet spec (several clusters), read by load_fleet: this reads one cluster's "
            "spec", NO_VALUE, "use hyperpod-gov validate, explain, synth, diff, drift, preflight, simulate, review-pack or report "
            "(they read a fleet; onboard, evidence and import read one cluster's spec), or "
            "hyperpod_gov.load_fleet / HyperPodFleet in a CDK app")], source)
    spec = parse_spec(data, strict=strict, today=today, source=source, known=known)
    check_chart_directory(spec, Path(path).resolve().parent, source=str(path))
    spec._source_dir = Path(path).resolve().parent  # relative paths of the spec, for HyperPodGovernance
    return spec


def check_chart_directory(spec: GovernanceSpec, base_dir: Path, *, source: str | None = None) -> None:
    """``cluster.dependenciesChart.directory`` stays inside the spec's folder, symbolic links resolved.

    The folder is uploaded as a CDK asset: a link to ``/`` or ``~`` would copy the machine into the cloud assembly.
    """
    chart = spec.cluster.dependencies_chart
    if chart is None or not chart.directory:
        return
    base = base_dir.resolve()
    target = (base / chart.directory).resolve()
    if target == base:
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"is the spec's folder itself ({base}): the spec and everything "
            "next to it would be uploaded into the cloud assembly as the chart", chart.directory,
            "put the chart in a folder of its own next to the spec and name it, e.g. charts/hyperpod-dependencies",
        )], source)
    if base not in target.parents:
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"resolves to {target}, outside the spec's folder {base} "
            "(through a symbolic link), and the whole folder would be uploaded into the cloud assembly",
            chart.directory, "copy the chart into a folder next to the spec instead of linking to it",
        )], source)
    if not (target / "Chart.yaml").is_file():
        problem = "is not a folder" if target.exists() and not target.is_dir() else \
            "has no Chart.yaml" if target.is_dir() else "does not exist"
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"{problem} ({target}): synth uploads this Helm chart folder",
            chart.directory, "give the folder of the HyperPod dependencies chart (with its Chart.yaml), relative "
            "to the spec file",
        )], source)
    leaving = _links_leaving(target)
    if leaving:
        shown = ", ".join(f"{link} -> {to}" for link, to in leaving[:5]) + (" ..." if len(leaving) > 5 else "")
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"holds {len(leaving)} symbolic link(s) that lead out of the chart "
            f"folder ({shown}): synth would copy what they point to into the cloud assembly", chart.directory,
            "replace each link with a copy of the file it names inside the chart folder, or remove it",
        )], source)


def _links_leaving(folder: Path) -> list[tuple[str, str]]:
    """(link relative to ``folder``, where it leads) for every symbolic link inside ``folder`` (not followed) whose
    target, resolved, is outside it: links to files and to folders, and dangling ones."""
    out = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(root) / name
            if not path.is_symlink():
                continue
            to = path.resolve()
            if to != folder and folder not in to.parents:
                out.append((str(path.relative_to(folder)), str(to)))
    return sorted(out)


def _lone_surrogates(data: Any) -> list[SpecIssue]:
    """Every key or text holding a lone surrogate (U+D800..U+DFFF, e.g. a YAML "\\ud800" escape): half of a UTF-16
    pair, not a character; no file, page or template can be written with it. Found before the models run, so no
    command starts writing output it cannot finish."""
    try:  # one pass in C over the whole spec (a surrogate cannot be encoded as UTF-8); the walk below names paths
        json.dumps(data, ensure_ascii=False, default=str).encode("utf-8")
        return []
    except (UnicodeEncodeError, TypeError, ValueError, RecursionError):  # a surrogate, keys json refuses, depth
        pass
    issues: list[SpecIssue] = []
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            bad = sorted({f"U+{ord(c):04X}" for c in value if 0xD800 <= ord(c) <= 0xDFFF})
            if bad:
                issues.append(SpecIssue(path or "(top level)", f"holds a lone surrogate ({', '.join(bad)}), half of "
                                        "a UTF-16 pair and not a character", value.encode("utf-8", "replace"
                                                                                          ).decode("utf-8"),
                                        "write the character itself, or both halves of the pair as one \\U escape"))
        elif isinstance(value, Mapping):
            for k, v in value.items():
                key = str(k)
                where = f"{path}.{key}" if path else key
                if any(0xD800 <= ord(c) <= 0xDFFF for c in key):
                    stack.append((path or "(top level)", key))  # the key itself, reported at its parent
                stack.append((where.encode("utf-8", "replace").decode("utf-8"), v))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(value))
    return sorted(issues, key=lambda i: i.path)


def parse_spec(
    data: Any, *, strict: bool = False, today: dt.date | None = None, source: str | None = None,
    known: RuleBook = RULES,
) -> GovernanceSpec:
    """Validate a mapping (as loaded from YAML, camelCase keys) into a ``GovernanceSpec``."""
    if not isinstance(data, Mapping):
        raise SpecError(
            [SpecIssue("(top level)", "is not a mapping of keys", data, "start the file with `name:`, "
                       "`accounts:`, `cluster:` and `teams:` (see examples/)")],
            source,
        )
    surrogates = _lone_surrogates(data)
    if surrogates:
        raise SpecError(surrogates, source)
    try:
        spec = GovernanceSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(issues_from_validation(exc), source) from None
    except RecursionError:
        raise SpecError([SpecIssue("(top level)", "nests too deeply to be validated", NO_VALUE,
                                   f"keep the spec within {MAX_DEPTH} levels of nesting")], source) from None
    return validate(spec, strict=strict, today=today, source=source, known=known)


def validate(
    spec: GovernanceSpec, *, strict: bool = False, today: dt.date | None = None, source: str | None = None,
    known: RuleBook = RULES,
) -> GovernanceSpec:
    """Run the cross-field rules over an already built spec (e.g. one built in Python).

    Raises ``SpecError`` with every error, every acknowledgement that names no warning rule of ``known`` (the
    spec rules by default; pass every book whose warnings the spec may acknowledge) and, with ``strict``, every
    warning the spec does not acknowledge.
    """
    review = spec_review(spec, today=today)
    failing = check_acknowledgements(spec.acknowledgements, known) + list(review.failing(strict=strict))
    if failing:
        raise SpecError(failing, source, note=STRICT_NOTE if strict and review.warnings else None)
    return spec


def spec_review(spec: GovernanceSpec, *, today: dt.date | None = None) -> Review:
    """The spec rules' findings split into errors, unacknowledged and acknowledged warnings."""
    return acknowledge(check_spec(spec, today=today or dt.date.today()), spec.acknowledgements)


def spec_warnings(spec: GovernanceSpec, *, today: dt.date | None = None) -> list[SpecIssue]:
    """Warnings the spec does not acknowledge: they do not stop a synth (they become errors with ``strict``)."""
    return list(spec_review(spec, today=today).warnings)
