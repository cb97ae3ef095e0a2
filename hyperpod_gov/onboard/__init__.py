"""``hyperpod-gov onboard SPEC TEAM``: one page from a laptop to a running job (``page.py``)."""

from ..plan.workloads import PRIORITY_LABEL
from .jobs import example_kinds, example_model_source, example_priority, first_job, placement, plain_yaml
from .page import onboarding_blocks, onboarding_team, render_onboarding, render_onboarding_html

__all__ = ["PRIORITY_LABEL", "example_kinds", "example_model_source", "example_priority", "first_job",
           "onboarding_blocks", "onboarding_team", "placement", "plain_yaml", "render_onboarding",
           "render_onboarding_html"]
