"""The connection contract's lifecycle: the record a reviewer approves, the review schedule, and the events
that call for a review before it is due. No CDK import."""

from .events import events, retirement_notes
from .record import render_record, render_records, write_records

__all__ = ["events", "render_record", "render_records", "retirement_notes", "write_records"]
