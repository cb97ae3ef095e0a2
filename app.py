#!/usr/bin/env python3
"""CDK entry point.

    ./dev.sh cdk synth -c spec=examples/enterprise.yaml                    # every stack of the spec
    ./dev.sh cdk synth -c spec=examples/enterprise.yaml -c pipeline=true   # the delivery pipeline
"""

from __future__ import annotations

import sys
from pathlib import Path

from hyperpod_gov.cdk_start import resolve_modules_once
from hyperpod_gov.plan import build_plan
from hyperpod_gov.process import exit_with
from hyperpod_gov.spec import SpecError, SpecIssue, load_spec, read_yaml
from hyperpod_gov.spec.environments import environment_names
from hyperpod_gov.template_checks import shared

resolve_modules_once()  # before the first import of aws_cdk, which starts jsii's Node.js with this environment

import aws_cdk as cdk  # noqa: E402

from stacks.app import build_app, build_pipeline_app, governance_manifests, synth_error  # noqa: E402

# CDK's template check in a process of its own, building its engine while the app is (hyperpod_gov.template_checks;
# where it is not available, CDK checks inside the synth as usual).
checks = shared(tier_up=False)  # one app, most likely small: hyperpod_gov.template_checks.LARGE_PLAN_TEAMS
app = cdk.App(analytics_reporting=False, builtin_cloud_formation_validation=checks is None)
DEFAULT_SPEC = "examples/enterprise.yaml"
spec_path = app.node.try_get_context("spec")
if not spec_path:
    spec_path = DEFAULT_SPEC
    print(f"app.py: no -c spec=PATH given; synthesizing {DEFAULT_SPEC}", file=sys.stderr)
environment = app.node.try_get_context("environment")
try:
    base_dir = Path(spec_path).resolve().parent
    names = environment_names(read_yaml(spec_path))
    if str(app.node.try_get_context("pipeline")).lower() == "true":
        # The pipeline delivers every environment of the spec, in order (or the spec itself if it has none).
        plans = [build_plan(load_spec(spec_path, environment=e), base_dir=base_dir) for e in names]
        plans = plans or [build_plan(load_spec(spec_path), base_dir=base_dir)]
        rendered = [(e, p, governance_manifests(p)) for e, p in zip(names or [""], plans)]
        build_pipeline_app(plans[0], rendered[0][2], spec_path=spec_path, app=app,
                           environments=rendered if names else ())
    else:
        if names and not environment:
            raise SpecError([SpecIssue("environments", f"lists {', '.join(names)}: this spec is deployed as one of "
                                       "them", ", ".join(names), f"pass -c environment={names[0]} (or another)")])
        plan = build_plan(load_spec(spec_path, environment=environment), base_dir=base_dir)
        build_app(plan, governance_manifests(plan), app=app)
    assembly = app.synth()
    if checks is not None:
        errors, report = checks.check(Path(assembly.directory))
        if errors:
            print(f"{len(errors)} template check finding(s) without an acknowledgement:", file=sys.stderr)
            for line in errors:
                print(f"  - {line}", file=sys.stderr)
            print(f"full report: {report}", file=sys.stderr)
            sys.exit(1)
    exit_with(0)  # the objects left to the exit (about half a second)
except SpecError as exc:
    print(f"{spec_path}: {exc.render()}", file=sys.stderr)
    sys.exit(1)
except Exception as exc:  # a CDK or jsii failure: path, value and fix, never a traceback
    if "ValidationFailed" in str(exc):
        raise  # cdk-nag findings: the CDK CLI prints the report itself
    print(f"{spec_path}: {synth_error(exc).render()}", file=sys.stderr)
    sys.exit(1)
