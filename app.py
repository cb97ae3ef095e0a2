#!/usr/bin/env python3
"""The reference CDK app, written on hyperpod-gov's public API (docs/library.md).

    ./dev.sh cdk synth -c spec=examples/enterprise.yaml                          # every stack of the spec
    ./dev.sh cdk synth -c spec=SPEC -c environment=staging                       # one environment of a spec
    ./dev.sh cdk synth -c spec=examples/enterprise.yaml -c pipeline=true         # the delivery pipeline
    ./dev.sh cdk synth -c spec=examples/fleet.yaml                               # every cluster of a fleet
    ./dev.sh cdk synth -c spec=examples/fleet.yaml -c pipeline=true              # the fleet's pipeline, in waves
"""

from __future__ import annotations

import sys

from hyperpod_gov import resolve_modules_once

resolve_modules_once()  # optional: before aws_cdk starts jsii's Node.js, each module specifier resolved once

import aws_cdk as cdk  # noqa: E402

from hyperpod_gov import (HyperPodFleet, HyperPodGovernance, SpecError, is_fleet_spec, load_fleet,  # noqa: E402
                          load_spec)
from stacks.pipeline import add_pipeline  # noqa: E402

DEFAULT_SPEC = "examples/enterprise.yaml"

app = cdk.App(analytics_reporting=False)
spec_path = app.node.try_get_context("spec") or DEFAULT_SPEC
if not app.node.try_get_context("spec"):
    print(f"app.py: no -c spec=PATH given; synthesizing {DEFAULT_SPEC}", file=sys.stderr)
try:
    if is_fleet_spec(spec_path) and str(app.node.try_get_context("pipeline")).lower() == "true":
        from stacks.pipeline_fleet import add_fleet_pipeline

        add_fleet_pipeline(app, spec_path)  # per environment, one wave per region (docs/fleet.md)
    elif is_fleet_spec(spec_path):  # clusters: every member's stacks, each in its own account and region
        HyperPodFleet(app, "HyperPodFleet",
                      fleet=load_fleet(spec_path, environment=app.node.try_get_context("environment")))
    elif str(app.node.try_get_context("pipeline")).lower() == "true":
        add_pipeline(app, load_spec(spec_path), spec_path=spec_path)  # every environment of the spec, in order
    else:
        HyperPodGovernance(app, "HyperPodGovernance", spec=load_spec(spec_path),
                           environment=app.node.try_get_context("environment"))
except SpecError as exc:  # every problem of the spec at once, each with its path, value and fix
    print(f"{spec_path}: {exc.render()}", file=sys.stderr)
    sys.exit(1)
app.synth()
