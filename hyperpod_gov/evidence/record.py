"""One evidence folder per change: what was approved (the spec and its base, the commit), what it does (the
governance diff, the review page, the contract records and the reviews they trigger), who hears what (the alarms
and their owners), what was accepted and why (the acknowledgements), the drift report when given, and a
``MANIFEST.sha256`` over every file. Each part is what the command of that name produces."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from .git import git_state
from .manifest import write_manifest

INDEX = "evidence.json"


@dataclass(frozen=True)
class Request:
    """What to record: paths as given on the command line."""

    spec: str
    base: str
    out: Path
    trace: Optional[str] = None
    drift: Optional[str] = None
    today: Optional[dt.date] = None
    environment: Optional[str] = None  # the environment of both specs to record (a spec with environments[])


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True) + "\n"


def _diff(req: Request, fmt: str) -> str:
    """What ``hyperpod-gov diff BASE SPEC --governance-only [--trace T] [--format json]`` prints."""
    from ..commands import cmd_diff

    args = argparse.Namespace(old=req.base, new=req.spec, environment=req.environment, against=None, strict=False,
                              governance_only=True, fail=False, trace=req.trace, format=fmt)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):  # warnings: in the record
        cmd_diff(args)
    return printed.getvalue()


def _alarms(plan: Any) -> list[dict[str, Any]]:
    topics = {t.key: t for t in plan.monitoring.topics}
    return [{"team": w.team, "kind": a.kind, "name": a.name, "owner": a.owner or "platform",
             "topic": topics[a.topic].display_name if a.topic in topics else a.topic,
             "subscriber": topics[a.topic].email if a.topic in topics else None, "description": a.description}
            for w in plan.monitoring.teams for a in w.alarms]


def _alarms_md(alarms: list[dict[str, Any]]) -> str:
    from ..markdown import cell

    rows = [f"| {cell(a['name'])} | {cell(a['owner'])} | {cell(a['topic'])} | {cell(a['subscriber'] or 'nobody')} |"
            for a in alarms]
    return "\n".join(["# Alarms and their owners", "", "| alarm | owner | topic | subscriber |", "|---|---|---|---|",
                      *rows]) + "\n" if rows else "# Alarms and their owners\n\nThis spec creates no alarm.\n"


def _acknowledgements(spec: str, review: Any) -> list[dict[str, Any]]:
    from ..spec.loader import read_yaml

    raw = read_yaml(spec)
    given = raw.get("acknowledgements") or [] if isinstance(raw, dict) else []
    out = []
    for i, ack in enumerate(given):
        path = ack.get("path")
        accepted = [str(issue) for issue in review.acknowledged if issue.rule == ack.get("id")
                    and (path is None or issue.path == path or issue.path.startswith((path + ".", path + "[")))]
        out.append({"index": i, "id": ack.get("id"), "path": path, "reason": ack.get("reason"),
                    "accepts": accepted, "used": i not in review.unused})
    return out


def _page_plan(path: str, today: dt.date, environment: Optional[str]) -> Any:
    """The plan the review page shows: as ``review-pack`` loads it (an overdue review on the page, not an error)."""
    from ..plan import build_plan
    from ..spec import SpecError, load_spec

    try:
        return build_plan(load_spec(path, today=today, environment=environment), base_dir=Path(path).resolve().parent)
    except SpecError as exc:
        raise SpecError(exc.issues, exc.source or path) from None


def write_evidence(req: Request) -> list[Path]:
    """Write the evidence folder ``req.out`` (which must be missing or empty); return the files written, sorted.
    Raises ``SpecError`` for a bad spec, base, trace, drift report or --out."""
    from ..commands import review_of
    from ..contracts import retirement_notes
    from ..contracts.events import events
    from ..contracts.record import render_records
    from ..review_pack.page import Inputs, write_pack
    from ..simulate.spec_level import trace_checks
    from ..simulate.trace import load_trace
    from ..spec import SpecError, SpecIssue

    out = req.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise SpecError([SpecIssue("--out", "exists and is not an empty folder: a record is written once, whole",
                                   str(out), "give a new folder (it is created)")])
    drift_text = None
    if req.drift:
        try:
            drift_text = Path(req.drift).read_text(encoding="utf-8")
            json.loads(drift_text)
        except (OSError, ValueError) as exc:
            raise SpecError([SpecIssue("--drift", f"is not a readable JSON report ({exc})", req.drift,
                                       "give the output of `hyperpod-gov drift SPEC --format json`")]) from None
    plan, review = review_of(req.spec, warn=False, environment=req.environment)
    try:
        base, _ = review_of(req.base, warn=False, environment=req.environment)
    except SpecError as exc:
        raise SpecError(exc.issues, exc.source or req.base, exc.note) from None
    today = req.today or dt.date.today()
    page_plan, page_base = (_page_plan(p, today, req.environment) for p in (req.spec, req.base))
    rows = load_trace(req.trace, **trace_checks(page_plan)) if req.trace else ()
    texts: dict[str, str] = {
        "diff.txt": _diff(req, "text"),
        "diff.json": _diff(req, "json"),
    }
    records = render_records(plan)
    texts.update({f"contracts/{name}": text for name, text in records.items()})
    triggered = events(base, plan) + retirement_notes(base, plan)
    texts["contracts/reviews.md"] = "# Contract reviews this change triggers\n\n" + (
        "".join(f"- {line}\n" for line in triggered) if triggered else "None.\n")
    alarms = _alarms(plan)
    texts["alarms.json"] = _json(alarms)
    texts["alarms.md"] = _alarms_md(alarms)
    texts["acknowledgements.json"] = _json({"acknowledgements": _acknowledgements(req.spec, review),
                                            "unacknowledgedWarnings": [str(w) for w in review.warnings]})
    if drift_text is not None:
        texts["drift.json"] = drift_text
    git = {"spec": git_state(Path(req.spec)), "base": git_state(Path(req.base))}
    texts["git.json"] = _json(git)
    index = {
        "spec": {"path": req.spec, "file": "spec.yaml", "name": plan.name},
        "base": {"path": req.base, "file": "base.yaml", "name": base.name},
        "created": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        "asOf": today.isoformat(),
        "environment": req.environment,
        "git": git["spec"],
        "trace": Path(req.trace).name if req.trace else None,
        "drift": "drift.json" if drift_text is not None else "not given: no drift report in this record",
        "diff": "diff.txt, diff.json (governance only: the resource diff needs a synth and is not recorded)",
        "reviewPage": "review/index.html" + ("" if req.trace else " (no trace given: no simulated effect)"),
        "contracts": sorted(f"contracts/{n}" for n in records),
        "alarms": len(alarms),
        "acknowledgements": "acknowledgements.json",
    }
    texts[INDEX] = _json(index)
    try:
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(req.spec, out / "spec.yaml")
        shutil.copyfile(req.base, out / "base.yaml")
        for name, text in texts.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text(text, encoding="utf-8")
        write_pack(Inputs(plan=page_plan, spec=Path(req.spec).name, today=today, base_plan=page_base,
                          base=Path(req.base).name, trace=rows, trace_name=Path(req.trace).name if req.trace else "",
                          report=None, report_name=""), out / "review")
        write_manifest(out)
    except OSError as exc:
        raise SpecError([SpecIssue("--out", f"cannot be written ({exc.strerror or exc})", str(out),
                                   "give a folder you can write to (it is created if missing)")]) from None
    return sorted(p for p in out.rglob("*") if p.is_file())
