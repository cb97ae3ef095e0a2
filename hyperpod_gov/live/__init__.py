"""Live state: ``drift`` (deployed vs planned, AWS and Kubernetes), ``import`` (a spec from a live cluster) and
``preflight`` (an existing cluster's prerequisites). Read-only."""

from .aws import RETRY_CONFIG, ClientFactory, LiveError, boto3_clients
from .cli import configure_drift, configure_import, drift, import_spec, run_drift, run_import
from .drift import DriftItem, compare, to_json, to_text
from .expected import Expected, expected_state
from .importer import ImportResult, spec_from_live
from .k8s import KubernetesSide, kubernetes_drift
from .preflight import configure_preflight, run_preflight

__all__ = [
    "RETRY_CONFIG",
    "ClientFactory",
    "DriftItem",
    "Expected",
    "ImportResult",
    "KubernetesSide",
    "LiveError",
    "boto3_clients",
    "compare",
    "configure_drift",
    "configure_import",
    "configure_preflight",
    "drift",
    "expected_state",
    "import_spec",
    "kubernetes_drift",
    "run_drift",
    "run_import",
    "run_preflight",
    "spec_from_live",
    "to_json",
    "to_text",
]
