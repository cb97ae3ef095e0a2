"""The dashboards' names and the cluster dashboard's pages (the stack layout gives each further page a stack)."""

from __future__ import annotations

from .watches import TEAMS_PER_CLUSTER_DASHBOARD


def team_dashboard_name(spec_name: str, team: str) -> str:
    return f"{spec_name}-team-{team}"


def cluster_dashboard_pages(teams: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The teams (in plan order) on each cluster dashboard page: 50 a page, at least one page."""
    return tuple(teams[i:i + TEAMS_PER_CLUSTER_DASHBOARD]
                 for i in range(0, len(teams), TEAMS_PER_CLUSTER_DASHBOARD)) or ((),)


def cluster_dashboard_names(spec_name: str, pages: int) -> tuple[str, ...]:
    base = f"{spec_name}-governance"
    return (base,) if pages <= 1 else tuple(f"{base}-{i + 1}" for i in range(pages))
