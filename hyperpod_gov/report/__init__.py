"""`hyperpod-gov report`: measured usage per team against the spec's intent, and the spec patch it argues for."""

from .analysis import FlavorUsage, TeamUsage, Window
from .metrics import ReadError
from .proposals import PatchOp, Proposal, apply_patch
from .report import Report, build_report, render_json, render_text, window_ending

__all__ = [
    "FlavorUsage",
    "PatchOp",
    "Proposal",
    "ReadError",
    "Report",
    "TeamUsage",
    "Window",
    "apply_patch",
    "build_report",
    "render_json",
    "render_text",
    "window_ending",
]
