"""Live state with boto3: ``drift`` (deployed vs planned) and ``import`` (a spec from a live cluster). Read-only."""

from .aws import RETRY_CONFIG, ClientFactory, LiveError, boto3_clients
from .cli import configure_drift, configure_import, drift, import_spec, run_drift, run_import
from .drift import DriftItem, compare, to_json, to_text
from .expected import Expected, expected_state
from .importer import ImportResult, spec_from_live

__all__ = [
    "RETRY_CONFIG",
    "ClientFactory",
    "DriftItem",
    "Expected",
    "ImportResult",
    "LiveError",
    "boto3_clients",
    "compare",
    "configure_drift",
    "configure_import",
    "drift",
    "expected_state",
    "import_spec",
    "run_drift",
    "run_import",
    "spec_from_live",
    "to_json",
    "to_text",
]
