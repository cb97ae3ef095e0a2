"""What a spec's stacks create that is billed, per CloudFormation type, and the base platform's monthly cost with
the EKS support tier of its Kubernetes version on a given day."""

from .inventory import BILLED_TYPES, UNBILLED_TYPES, resource_counts
from .page import CostLine, cost_lines, cost_summary, cost_table, explain_cost, monthly_total
from .support import CALENDAR, HOURLY_USD, Support, support

__all__ = ["BILLED_TYPES", "CALENDAR", "HOURLY_USD", "UNBILLED_TYPES", "CostLine", "Support", "cost_lines",
           "cost_summary", "cost_table", "explain_cost", "monthly_total", "resource_counts", "support"]
