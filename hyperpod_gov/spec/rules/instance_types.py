"""HPG-I: instance types and GPU partitioning (MIG).

HPG-I006 (a type AWS::SageMaker::Cluster accepts in the region) lives in ``spec.cluster_options``.
"""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Iterator

from ... import catalog
from ..errors import SpecIssue
from ..instance_types import spec_catalog
from ..models import GovernanceSpec
from ..rulebook import rule


def _instance_type_refs(spec: GovernanceSpec) -> Iterator[tuple[str, str]]:
    """(path, instance type) of every instance type the spec names outside ``instanceTypes``."""
    for gi, g in enumerate(spec.cluster.instance_groups):
        if g.flexible:
            for ki, itype in enumerate(g.instance_types):
                yield f"cluster.instanceGroups[{gi}].instanceTypes[{ki}]", itype
        else:
            yield f"cluster.instanceGroups[{gi}].instanceType", g.instance_type
    for ti, team in enumerate(spec.teams):
        for qi, q in enumerate(team.quota):
            yield f"teams[{ti}].quota[{qi}].instanceType", q.instance_type
        for bi, b in enumerate(team.sharing.absolute_borrow_limits):
            yield f"teams[{ti}].sharing.absoluteBorrowLimits[{bi}].instanceType", b.instance_type


@rule("HPG-I001", "error", "A type declared under instanceTypes is not one the catalog already has (the catalog's "
      "facts are used).")
def declared_types_are_new(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for name in spec.instance_types:
        if name in catalog.CATALOG:
            yield SpecIssue(
                f"instanceTypes[{name}]", "is already in the catalog, whose facts hyperpod-gov uses", name,
                "remove the declaration (catalog.py cites where its facts come from)",
            )


@rule("HPG-I002", "warning", "A type declared under instanceTypes is not in the catalog: its quotas rest on the "
      "declared facts, and CloudFormation may not accept the type yet.")
def declared_types_are_uncatalogued(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    for name in spec.instance_types:
        if name not in catalog.CATALOG:
            yield SpecIssue(
                f"instanceTypes[{name}]", "is not in hyperpod-gov's catalog: quotas on it rest on the facts "
                "declared here, and CloudFormation or the SageMaker API may not accept the type yet", name,
                "check the facts against the EC2 instance type specifications, and ask for the type to be added "
                "to catalog.py",
            )


@rule("HPG-I003", "error", "Every instance type the spec names (groups, quotas, borrow limits) is a HyperPod type "
      "the catalog knows or one declared under instanceTypes.")
def instance_types_are_known(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    for path, itype in _instance_type_refs(spec):
        if itype not in cat:
            # In a known family an unknown size is a typo: name the sizes meant, never suggest declaring it. An
            # unknown family may be a type newer than the catalog: then declaring its facts is the way.
            close = difflib.get_close_matches(itype, cat.known_types(), n=3, cutoff=0.8)
            family = itype.rsplit(".", 1)[0]
            near = [t for t in cat.known_types() if t.startswith(family + ".")]
            if near:
                fix = f"did you mean {' or '.join(close)}?" if close else f"use one of: {', '.join(near)}"
            else:
                fix = (f"did you mean {' or '.join(close)}? " if close else
                       "see hyperpod_gov/catalog.py for the supported types; ") + \
                      "or, for a type newer than the catalog, declare its facts under instanceTypes"
            yield SpecIssue(path, "is not a HyperPod instance type this library knows", itype, fix)


@rule("HPG-I004", "error", "An instance group's MIG profile is one its type's GPUs offer, and every group of one "
      "type is partitioned the same way.")
def mig_groups_are_consistent(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cat = spec_catalog(spec)
    first: dict[str, tuple[int, str | None]] = {}
    for gi, g in enumerate(spec.cluster.instance_groups):
        facts = cat.get(g.instance_type)
        profile = g.mig.profile if g.mig else None
        if facts is None:
            continue
        if profile is not None:
            path = f"cluster.instanceGroups[{gi}].mig.profile"
            if facts.accelerator_kind != catalog.NVIDIA_GPU:
                yield SpecIssue(path, f"{g.instance_type} has no NVIDIA GPUs to partition", profile,
                                "remove mig from this group")
                continue
            if facts.mig_profile(profile) is None:
                offered = ", ".join(p.name for p in facts.mig_profiles)
                yield SpecIssue(
                    path, f"is not a MIG profile of {g.instance_type}'s GPUs ({facts.accelerator_model or 'GPU'})",
                    profile, f"use one of: {offered}" if offered else "remove mig: these GPUs have no MIG",
                )
                continue
        if g.instance_type in first:
            other, other_profile = first[g.instance_type]
            if other_profile != profile:
                yield SpecIssue(
                    f"cluster.instanceGroups[{gi}].mig",
                    f"differs from cluster.instanceGroups[{other}] of the same type "
                    f"({other_profile or 'whole GPUs'}): quotas are per instance type",
                    profile or "whole GPUs",
                    "partition every group of one instance type the same way (or use another type)",
                )
        else:
            first[g.instance_type] = (gi, profile)


@rule("HPG-I005", "warning", "With task governance, a partitioned (MIG) group's type is one HyperPod's GPU "
      "partitioning lists.")
def mig_types_are_listed_by_hyperpod(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.scheduler.mode != "task-governance":
        return
    cat = spec_catalog(spec)
    for gi, g in enumerate(spec.cluster.instance_groups):
        facts = cat.get(g.instance_type)
        if facts is None or g.mig is None or facts.accelerator_kind != catalog.NVIDIA_GPU \
                or facts.mig_profile(g.mig.profile) is None:
            continue  # HPG-I003 or HPG-I004 reports it
        if g.instance_type not in catalog.HYPERPOD_MIG_TYPES and g.instance_type not in cat.declared:
            yield SpecIssue(
                f"cluster.instanceGroups[{gi}].mig.profile",
                f"{g.instance_type} is not among the types HyperPod's GPU partitioning lists", g.mig.profile,
                "check that HyperPod partitions this type before relying on partition quotas",
            )
