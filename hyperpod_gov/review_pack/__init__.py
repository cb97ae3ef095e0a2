"""The allocation review as a page: charts of quotas, borrowing, simulated waits, measured usage and contracts."""

from .page import Inputs, build_sections, page_html, report_html, simulation_html, summary_md, write_pack
from .svg import Chart, Datum

__all__ = ["Chart", "Datum", "Inputs", "build_sections", "page_html", "report_html", "simulation_html", "summary_md",
           "write_pack"]
