"""aws-cdk-lib's own template check ("CloudFormation Validate"), run beside the synth instead of at its end.

CDK validates every template it synthesizes with the engine it bundles (``@aws/cloudformation-validate``, a
WebAssembly build of its rules). Building that engine takes two to five seconds of CPU, and inside CDK it runs on
jsii's one Node.js thread after the app is built: on the critical path of every synth. Here the same engine, with
the same rules and options, runs in a Node.js process of its own, started before the app is built, so that it is
ready (built on the other core) when the templates are; the templates are then checked as CDK checks them, and the
findings are acknowledged, reported and fail the synth as CDK's would:

- the engine and its rules are aws-cdk-lib's own files, taken from the aws-cdk-lib package Python imports (its jsii
  tarball) into a cache folder once per version (``template_engine``); the options are CDK's
  (``assets/template_checks/check.js``, compared with aws-cdk-lib's plugin by ``tests/stacks/test_template_checks.py``);
- acknowledgements are CDK's: ``Validations.of(construct).acknowledge("CloudFormation-Validate::RULE", reason)``
  on the construct or an ancestor, read from the cloud assembly's metadata;
- the report is added to ``validation-report.json`` as CDK's plugin report, with the same fields;
- an unacknowledged error fails the synth (``@aws-cdk/core:validateAgainstDefaultRules`` is on), an
  unacknowledged warning is printed.
- a template's findings are kept (``RESULTS``, beside the engine's files; ``assets/template_checks/stored.js``) by
  its bytes, account and region, the engine, its rules, Node.js's version and the options: a template seen before,
  by this process or an earlier one, is answered from there, as the engine keeps no state between checks.

Where the engine cannot be found (no ``node``, an aws-cdk-lib without it), ``start`` returns ``None`` and the app
keeps CDK's built-in check; ``CDK_VALIDATION=false`` turns both off, as it turns CDK's off.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from .process import LineWriter
from .template_engine import engine_files

PLUGIN_NAME = "CloudFormation Validate"
NAMESPACE = "CloudFormation-Validate"  # how acknowledgements name its rules: CloudFormation-Validate::E3644
SCRIPT = Path(__file__).with_name("assets") / "template_checks" / "check.js"
ACKNOWLEDGED = "aws:cdk:acknowledged-rules"
LOGICAL_ID = "aws:cdk:logicalId"
WARM_UP_CHECKS = 3  # check.js: more gained nothing
IMAGES = "images"  # beside the engine's files: the engine as built, kept (assets/template_checks/engine_image.js)
RESULTS = "results"  # beside them: the findings of each template checked, kept (assets/template_checks/stored.js)
# A plan of this many teams or more is a large app to the check. Its engine is warmed up while the app is built
# (TemplateChecks.warm_up: at 300 teams that saves more than a second), takes each template as soon as CDK has
# written it (TemplateChecks.watch: 6% of a 300-team synth, 2.6% at 50 teams, paired runs) and runs V8's optimizing
# WebAssembly compiler (tier_up). For the examples (13 teams and fewer) each of those cost more CPU than it saved, on
# two cores busy already: the watch made the enterprise synth 2% slower with 9% more CPU, and the optimizing
# compiler doubles the check's CPU (engine and the enterprise templates: 6.1 s against 2.7 s with V8's baseline
# compiler alone, 3.5 s against 2.0 s of wall time), while at 300 teams it checks them in 6.4 s against 8.2 s.
LARGE_PLAN_TEAMS = 50
# The check's processes run at this niceness: they yield the CPU to the synth's own processes (Python and jsii's
# Node.js, whose work is the synth's critical path) while the engine is built and warmed up and while it checks
# templates beside the synth, and run at full speed once it ends, when nothing else wants the CPU. Started through
# POSIX ``nice`` (every thread of the process, V8's own included, inherits it) where there is one.
NICENESS = 10
_SEVERITIES = {"FATAL": "error", "ERROR": "error", "WARN": "warning", "INFO": "informational", "DEBUG": "debug"}


@dataclass
class Outcome:
    """The check's plugin report (CDK's format) and its unacknowledged findings, one line each."""

    report: dict[str, Any]
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    watched: int = 0  # how many of the templates were checked as the synth wrote them (``watch``)
    reused: int = 0  # how many had been checked before (kept findings), with the same bytes, account and region


def _yielding() -> list[str]:
    """The command prefix that starts a process at ``NICENESS`` (none where there is no ``nice``)."""
    nice = shutil.which("nice")
    return [nice, "-n", str(NICENESS)] if nice else []


class TemplateChecks:
    """The check's Node.js processes, each building its engine from the start; ``finish(assembly)`` checks an
    assembly's templates, as many times as asked (``shared()``: one per Python process). With more than one process
    (``grow``) the templates are shared out by size and checked side by side: for machines with cores to spare. On
    two cores one process is faster (a 300-team synth: 42.4 s with one, 51.1 s with two, whose second engine's
    build competes with the app's)."""

    def __init__(self, command: list[str]):
        self._command = command
        self._processes: list[subprocess.Popen] = []
        self._writers: list[LineWriter] = []
        self._watched: Optional[dict[str, tuple[Optional[str], Optional[str]]]] = None  # path -> account, region
        self._version = ""  # the engine's, from its answers
        self.grow(1)

    @classmethod
    def start(cls, *, tier_up: bool = True, keep_findings: bool = True) -> Optional["TemplateChecks"]:
        """Start building the engine; ``None`` where it is not available here (CDK's built-in check stays on).
        ``tier_up``: V8 optimizes the engine's hot WebAssembly functions as it runs, on threads of their own (for a
        large app, ``LARGE_PLAN_TEAMS``); else it runs the engine as its baseline compiler (Liftoff) compiled it: the
        same checks, the same findings, less than half the CPU for one small app (and for the test workers, which
        check many small apps: tests/conftest.py). ``keep_findings=False``: no kept findings (``RESULTS``) read or
        written, every template checked in the process (the tests)."""
        if os.environ.get("CDK_VALIDATION") == "false":
            return None
        node = os.environ.get("JSII_NODE") or shutil.which("node")
        try:
            files = engine_files() if node else None
        except (OSError, tarfile.TarError):  # no cache folder to write, a damaged package: CDK checks in-process
            files = None
        if files is None:
            return None
        engine, rules = files
        kept = (str(engine.parent / RESULTS),) if keep_findings else ()
        return cls([*_yielding(), node, *(() if tier_up else ("--liftoff-only",)), str(SCRIPT), str(engine),
                    str(rules), str(engine.parent / IMAGES), *kept])

    def grow(self, processes: int) -> None:
        """Have at least ``processes`` processes (each builds an engine: 2 to 5 s of CPU, on another core)."""
        while len(self._processes) < processes:
            process = subprocess.Popen(self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE)
            self._processes.append(process)
            self._writers.append(LineWriter(process.stdin))

    def _send(self, process: subprocess.Popen, request: Any) -> None:
        """``request`` as a line of JSON to ``process`` (through its writer: in order, never blocking here)."""
        self._writers[self._processes.index(process)].write(
            json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")

    def warm_up(self, checks: int = WARM_UP_CHECKS) -> None:
        """Have each process check its warm-up template ``checks`` times while nothing is asked of it (a fresh
        engine's first checks are its slow ones; ``check.js``): for a large app, before its templates exist."""
        for process in self._processes:
            self._send(process, {"warmUp": checks})

    def watch(self, stacks: list[tuple[Path, Optional[str], Optional[str]]]) -> None:
        """Have the check take each template (path, account, region: the stacks about to be synthesized) as soon
        as CDK has written it, while the synth goes on; ``finish`` then checks only what it did not take. The
        templates' files are removed first: an earlier synth's must not be taken for this one's. With more than
        one process (``grow``) nothing is watched: ``finish`` shares the templates out as before."""
        self._end_watch()
        if len(self._processes) != 1:
            return
        for path, _, _ in stacks:
            Path(path).unlink(missing_ok=True)
        self._send(self._processes[0],
                   {"watch": [{"templatePath": str(p), "accountId": a, "region": r} for p, a, r in stacks]})
        self._watched = {str(p): (a, r) for p, a, r in stacks}

    def predict(self, request: dict[str, Any], account: Optional[str], region: Optional[str]) -> None:
        """Have the check render a stack's template from the plain-data fragments it includes (``request``:
        ``assets/template_checks/predict.js``) and check it while the app is still built, on the core the build
        leaves idle: when CDK writes those bytes, their findings answer it. For one process only."""
        if len(self._processes) == 1:
            self._send(self._processes[0], {"predicted": {**request, "accountId": account, "region": region}})

    def _end_watch(self) -> dict[str, tuple[tuple[Optional[str], Optional[str]], dict[str, Any]]]:
        """The watch's results (path -> (account, region) asked, result), once the templates are all written (or
        the synth failed): after this the process answers requests again."""
        watched, self._watched = self._watched, None
        if watched is None:
            return {}
        process = self._processes[0]
        self._send(process, {"done": True})
        return {r["templatePath"]: (watched[r["templatePath"]], r) for r in self._answer(process)}

    def _answer(self, process: subprocess.Popen) -> list[dict[str, Any]]:
        """The results of the process's next answer (the engine's version kept for the report)."""
        line = process.stdout.readline()
        if not line:
            process.kill()
            err = process.stderr.read().decode(errors="replace")
            raise RuntimeError(f"CDK's template check ({SCRIPT.name}) stopped: {err[-2000:]}")
        answer = json.loads(line)
        self._version = answer["version"]
        return answer["results"]

    def alive(self) -> bool:
        return all(p.poll() is None for p in self._processes)

    def close(self) -> None:
        """End the processes. Killed, not asked to stop: an engine that frees itself and exits takes about two
        seconds, for nothing (it holds no state)."""
        for writer in self._writers:
            writer.close()
        for process in self._processes:
            if process.poll() is None:
                process.kill()
                process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                stream.close()

    def finish(self, assembly_dir: Path) -> Outcome:
        """Check every stack template of the cloud assembly in ``assembly_dir`` (nested ones included)."""
        taken = self._end_watch()
        stacks = sorted(_stacks(Path(assembly_dir)), key=lambda s: s.template_path)
        results: dict[str, dict[str, Any]] = {}
        for s in stacks:  # a watched template counts when it was checked for the stack's account and region
            wanted, result = taken.get(str(s.template_path), (None, None))
            if result is not None and wanted == (s.account, s.region):
                results[str(s.template_path)] = result
        shares: list[list[_Stack]] = [[] for _ in self._processes]
        sizes = [0] * len(shares)
        by_size = sorted(((s.template_path.stat().st_size, s) for s in stacks if str(s.template_path) not in results),
                         key=lambda t: -t[0])
        for size, stack in by_size:  # largest first, to the least loaded
            i = sizes.index(min(sizes))
            shares[i].append(stack)
            sizes[i] += size
        asked = [(process, share) for process, share in zip(self._processes, shares) if share]
        for process, share in asked:  # all of them at once: each checks its share while the others check theirs
            self._send(process, [{"templatePath": str(s.template_path), "accountId": s.account, "region": s.region}
                                 for s in share])  # a process that stopped is reported below, with its stderr
        for process, _share in asked:
            results.update((r["templatePath"], r) for r in self._answer(process))
        ordered = [results[str(s.template_path)] for s in stacks]
        outcome = _outcome(Path(assembly_dir), stacks, ordered, self._version if stacks else "")
        outcome.watched = len(stacks) - len(by_size)
        outcome.reused = sum(1 for r in ordered if r.get("reused"))
        return outcome

    def check(self, assembly_dir: Path) -> tuple[list[str], Path]:
        """``finish``, its report added to ``validation-report.json`` and its warnings printed (as CDK prints its
        check's): the unacknowledged errors, one line each, and the report's path."""
        outcome = self.finish(assembly_dir)
        report = add_to_report(assembly_dir, outcome.report)
        for line in outcome.warnings:
            print(f"warning: {line}", file=sys.stderr)
        return outcome.errors, report


_shared: Optional[TemplateChecks] = None
_unavailable = False


def shared(*, tier_up: bool = True) -> Optional[TemplateChecks]:
    """This process's check, started on first use (``tier_up`` as ``TemplateChecks.start``; a check already running
    keeps its own) and kept (ended at exit); ``None`` where it is not available."""
    global _shared, _unavailable
    if os.environ.get("CDK_VALIDATION") == "false" or _unavailable:
        return None
    if _shared is None or not _shared.alive():
        _shared = TemplateChecks.start(tier_up=tier_up)
        if _shared is None:
            _unavailable = True
            return None
        atexit.register(_shared.close)
    return _shared


def prepare() -> bool:
    """Build the engine once and keep its image (``IMAGES``), unless an image is there already: for an install step
    (``dev.sh``), so that no synth or test worker afterwards builds it. Whether an image is there now."""
    files = engine_files() if os.environ.get("CDK_VALIDATION") != "false" else None
    if files is None:
        return False
    images = files[0].parent / IMAGES
    if not any(images.glob("engine-*.zst")):
        checks = TemplateChecks.start()
        if checks is None:
            return False
        try:
            process = checks._processes[0]
            checks._send(process, [])
            checks._answer(process)
        finally:
            checks.close()
    return any(images.glob("engine-*.zst"))


@dataclass(frozen=True)
class _Stack:
    template_path: Path
    construct_path: str  # the stack's own path, for a finding on no resource
    account: Optional[str]
    region: Optional[str]
    metadata: dict[str, list[dict[str, Any]]]


def _stacks(directory: Path) -> Iterator[_Stack]:
    """The stack artifacts of the assembly in ``directory`` and of the assemblies nested in it (stages)."""
    manifest = json.loads((directory / "manifest.json").read_text())
    for artifact_id, artifact in sorted(manifest.get("artifacts", {}).items()):
        kind, props = artifact.get("type"), artifact.get("properties", {})
        if kind == "cdk:cloud-assembly":
            yield from _stacks(directory / props["directoryName"])
        elif kind == "aws:cloudformation:stack":
            extra = artifact.get("additionalMetadataFile")
            metadata = json.loads((directory / extra).read_text()) if extra else artifact.get("metadata", {})
            yield _Stack(directory / props["templateFile"], artifact.get("displayName", artifact_id),
                         *environment(artifact.get("environment", "aws://unknown-account/unknown-region")), metadata)


def environment(text: str) -> tuple[Optional[str], Optional[str]]:
    """The account and region of a stack's environment as CDK writes it (``aws://ACCOUNT/REGION``; ``None`` for
    ``unknown-account``, ``unknown-region``: an environment-agnostic stack)."""
    account, _, region = text.removeprefix("aws://").partition("/")
    return None if account == "unknown-account" else account, None if region == "unknown-region" else region


def _outcome(root: Path, stacks: list[_Stack], results: list[dict[str, Any]], version: str) -> Outcome:
    """CDK's plugin report of the diagnostics: grouped, placed on construct paths, acknowledged (synthesis-validation
    and cloudformation-validate-plugin of aws-cdk-lib)."""
    paths: dict[tuple[Path, str], str] = {}  # (template, logical id) -> construct path
    acknowledged: dict[str, dict[str, str]] = {}  # rule id -> construct path -> reason
    for stack in stacks:
        for path, entries in stack.metadata.items():
            for entry in entries:
                if entry.get("type") == LOGICAL_ID:
                    paths[stack.template_path, entry["data"]] = path.lstrip("/")
                elif entry.get("type") == ACKNOWLEDGED:
                    for rule, reason in entry["data"].items():
                        acknowledged.setdefault(rule, {})[path.lstrip("/")] = reason
    by_template = {s.template_path: s for s in stacks}
    violations: list[dict[str, Any]] = []
    index: dict[tuple[str, str, str], dict[str, Any]] = {}
    for result in results:
        stack = by_template[Path(result["templatePath"])]
        for d in result["diagnostics"]:
            severity = _SEVERITIES.get(d["severity"], "warning")
            prop = d["propertyPath"]
            description = f"{re.sub(r'^Properties[.]', '', prop)}: {d['message']}" if prop else d["message"]
            logical = d["logicalId"]
            resource = {
                "constructPath": paths.get((stack.template_path, logical)) if logical else stack.construct_path,
                "cloudFormationResource": {"templatePath": os.path.relpath(stack.template_path, root),
                                           **({"logicalId": logical} if logical else {}),
                                           **({"propertyPaths": [prop]} if prop else {})},
            }
            key = (d["ruleId"], severity, description)
            if key not in index:
                index[key] = {"ruleName": d["ruleId"], "description": description,
                              **({"fix": d["suggestedFix"]} if d["suggestedFix"] else {}), "severity": severity,
                              **({"ruleMetadata": {"category": d["category"]}} if d["category"] else {}),
                              "violatingConstructs": []}
                violations.append(index[key])
            index[key]["violatingConstructs"].append(resource)
    open_, suppressed = [], []
    for v in violations:
        acks = acknowledged.get(f"{NAMESPACE}::{v['ruleName']}", {})
        groups: dict[str, list[dict[str, Any]]] = {}
        left = []
        for resource in v["violatingConstructs"]:
            at = _closest(resource["constructPath"] or "", acks)
            (groups.setdefault(at, []) if at is not None else left).append(resource)
        for at, resources in groups.items():
            suppressed.append({**v, "violatingConstructs": resources, "acknowledgedId": f"{NAMESPACE}::{v['ruleName']}",
                               "reason": acks[at], "acknowledgedAt": at})
        if left:
            open_.append({**v, "violatingConstructs": left})
    failed = any(v["severity"] in ("error", "fatal") for v in open_)
    report = {"pluginName": PLUGIN_NAME, "pluginVersion": version, "conclusion": "failure" if failed else "success",
              "violations": open_, "suppressedViolations": suppressed}
    lines = {"error": [], "warning": []}
    for v in open_:
        for r in v["violatingConstructs"]:
            where = r["constructPath"] or r["cloudFormationResource"]["templatePath"]
            kind = "error" if v["severity"] in ("error", "fatal") else "warning"
            lines[kind].append(f"{where}: {NAMESPACE}::{v['ruleName']}: {v['description']}")
    return Outcome(report, sorted(lines["error"]), sorted(lines["warning"]))


def _closest(path: str, acks: dict[str, str]) -> Optional[str]:
    """The construct path of the acknowledgement nearest to ``path`` (itself or an ancestor), if any."""
    while True:
        if path in acks:
            return path
        if not path:
            return None
        path = path.rpartition("/")[0]


def add_to_report(assembly_dir: Path, plugin_report: dict[str, Any]) -> Path:
    """Add the check's plugin report to ``validation-report.json`` (written by CDK for cdk-nag, or new)."""
    path = Path(assembly_dir) / "validation-report.json"
    if path.exists():
        data = json.loads(path.read_text())
    else:
        version = json.loads((Path(assembly_dir) / "manifest.json").read_text()).get("version")
        data = {"version": version, "title": "Validation Report", "pluginReports": []}
    data["pluginReports"] = [p for p in data.get("pluginReports", []) if p.get("pluginName") != PLUGIN_NAME]
    data["pluginReports"].append(plugin_report)
    path.write_text(json.dumps(data, indent=2))
    return path


if __name__ == "__main__":
    sys.exit(0 if prepare() else 1)
