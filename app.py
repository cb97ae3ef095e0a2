#!/usr/bin/env python3
"""CDK entry point: `npx cdk synth -c spec=examples/enterprise.yaml`."""

from __future__ import annotations

import sys
from pathlib import Path

import aws_cdk as cdk

from hyperpod_gov.spec import SpecError, load_spec
from hyperpod_gov.synth import build_app

app = cdk.App(analytics_reporting=False)
spec_path = app.node.try_get_context("spec") or "examples/enterprise.yaml"
try:
    spec = load_spec(spec_path)
except SpecError as exc:
    print(exc.render(), file=sys.stderr)
    sys.exit(1)
build_app(spec, app=app, base_dir=Path(spec_path).resolve().parent)
app.synth()
