"""Default pins of the EKS add-ons whose versions follow the Kubernetes version, and the kubectl layer that does.

The table (``assets/eks/addon_defaults.json``) names its sources. ``pinned`` fills every version the spec leaves
out, so each add-on the stacks install carries a version and a deploy never takes whatever EKS defaults to that
day. A version the spec gives always wins.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..spec.models import AddonVersions

DEFAULTS_FILE = Path(__file__).resolve().parent.parent / "assets" / "eks" / "addon_defaults.json"

# AddonVersions attribute -> EKS add-on name, for the add-ons the table pins
FOLLOWS_KUBERNETES = {
    "vpc_cni": "vpc-cni",
    "coredns": "coredns",
    "kube_proxy": "kube-proxy",
    "pod_identity_agent": "eks-pod-identity-agent",
    "ebs_csi_driver": "aws-ebs-csi-driver",
}


@lru_cache(maxsize=1)
def table() -> dict:
    """The defaults file: ``versions`` (add-on -> Kubernetes version -> add-on version) and ``sources``."""
    return json.loads(DEFAULTS_FILE.read_text())


def default_version(addon: str, kubernetes_version: str) -> str:
    """The default pin of ``addon`` on ``kubernetes_version`` (KeyError when the table has none)."""
    return table()["versions"][addon][kubernetes_version]


def kubectl_layer(kubernetes_version: str) -> tuple[str, str]:
    """The Python module and class of the kubectl/helm Lambda layer built for ``kubernetes_version`` (kubectl
    supports one minor version of skew: the layer follows the cluster, as the add-ons do)."""
    minor = kubernetes_version.split(".")[1]
    return f"aws_cdk.lambda_layer_kubectl_v{minor}", f"KubectlV{minor}Layer"


def pinned(versions: AddonVersions, kubernetes_version: str) -> AddonVersions:
    """``versions`` with every add-on the spec left unpinned set to the table's version for the cluster."""
    missing = {attr: default_version(addon, kubernetes_version)
               for attr, addon in FOLLOWS_KUBERNETES.items() if getattr(versions, attr) is None}
    return versions.model_copy(update=missing) if missing else versions
