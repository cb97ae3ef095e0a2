"""The evidence record of a change: ``write_evidence`` writes it, ``verify_manifest`` checks it."""

from .manifest import MANIFEST, Verification, verify_manifest, write_manifest
from .record import Request, write_evidence

__all__ = ["MANIFEST", "Request", "Verification", "verify_manifest", "write_evidence", "write_manifest"]
