#!/usr/bin/env python3
"""CDK entry point.

    npx cdk synth -c spec=examples/enterprise.yaml                    # every stack of the spec
    npx cdk synth -c spec=examples/enterprise.yaml -c pipeline=true   # the delivery pipeline
"""

from __future__ import annotations

import sys
from pathlib import Path

import aws_cdk as cdk

from hyperpod_gov.spec import SpecError, load_spec
from hyperpod_gov.synth import PipelineConfigError, build_app, build_pipeline_app

app = cdk.App(analytics_reporting=False)
spec_path = app.node.try_get_context("spec") or "examples/enterprise.yaml"
try:
    spec = load_spec(spec_path)
    base_dir = Path(spec_path).resolve().parent
    if str(app.node.try_get_context("pipeline")).lower() == "true":
        build_pipeline_app(spec, spec_path=spec_path, app=app, base_dir=base_dir)
    else:
        build_app(spec, app=app, base_dir=base_dir)
except (SpecError, PipelineConfigError) as exc:
    print(exc.render() if isinstance(exc, SpecError) else f"{spec_path}: {exc}", file=sys.stderr)
    sys.exit(1)
app.synth()
