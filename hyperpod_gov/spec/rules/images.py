"""HPG-A011: each team says where its images come from."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import NO_VALUE, SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule


@rule("HPG-A011", "warning", "A team on an EKS cluster names the registries its images come from (teams[].images): "
      "without, its pods may run any image, from any registry the nodes reach.")
def teams_name_their_image_registries(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.cluster.orchestrator == "slurm":  # no admission policy on a Slurm cluster: images is EKS-only
        return
    account, region = spec.accounts.capacity.id, spec.accounts.capacity.region
    for ti, team in enumerate(spec.teams):
        if not team.images and not team.retiring:
            yield SpecIssue(
                f"teams[{ti}].images", "is empty, so the team's pods may run any image (a public image with a "
                "miner, an old one with known holes)", NO_VALUE,
                f"list the registries the team pulls from, e.g. [{account}.dkr.ecr.{region}.amazonaws.com/"
                f"{team.name}/, public.ecr.aws/docker/library/], or acknowledge HPG-A011 with the reason",
            )
