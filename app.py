#!/usr/bin/env python3
"""CDK entry point.

    ./dev.sh cdk synth -c spec=examples/enterprise.yaml                    # every stack of the spec
    ./dev.sh cdk synth -c spec=examples/enterprise.yaml -c pipeline=true   # the delivery pipeline
"""

from __future__ import annotations

import sys
from pathlib import Path

import aws_cdk as cdk

from hyperpod_gov.charts import render
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, load_spec
from stacks.app import build_app, build_pipeline_app, synth_error

app = cdk.App(analytics_reporting=False)
DEFAULT_SPEC = "examples/enterprise.yaml"
spec_path = app.node.try_get_context("spec")
if not spec_path:
    spec_path = DEFAULT_SPEC
    print(f"app.py: no -c spec=PATH given; synthesizing {DEFAULT_SPEC}", file=sys.stderr)
try:
    plan = build_plan(load_spec(spec_path), base_dir=Path(spec_path).resolve().parent)
    manifests = render(plan)
    if str(app.node.try_get_context("pipeline")).lower() == "true":
        build_pipeline_app(plan, manifests, spec_path=spec_path, app=app)
    else:
        build_app(plan, manifests, app=app)
    app.synth()
except SpecError as exc:
    print(f"{spec_path}: {exc.render()}", file=sys.stderr)
    sys.exit(1)
except Exception as exc:  # a CDK or jsii failure: path, value and fix, never a traceback
    if "ValidationFailed" in str(exc):
        raise  # cdk-nag findings: the CDK CLI prints the report itself
    print(f"{spec_path}: {synth_error(exc).render()}", file=sys.stderr)
    sys.exit(1)
