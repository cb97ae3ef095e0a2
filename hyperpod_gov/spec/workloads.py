"""The approved-workload words of a team contract (``teams[].contract.approvedWorkloads``).

``plan/workloads.py`` says which Kubernetes kinds each word admits; the words live here so that the spec can
refuse a word that admits nothing without knowing the plan.
"""

from __future__ import annotations

TRAINING = "training"
FINE_TUNING = "fine-tuning"
INFERENCE = "inference"
INTERACTIVE = "interactive"
# The examples' contracts say "experimentation" for notebook work: it admits what "interactive" admits.
EXPERIMENTATION = "experimentation"
# Ray on HyperPod (RayJob, RayCluster, RayService; sagemaker-hyperpod-ray-getting-started.html), run by KubeRay.
RAY = "ray"
APPROVED_WORKLOADS: tuple[str, ...] = (TRAINING, FINE_TUNING, INFERENCE, INTERACTIVE, EXPERIMENTATION, RAY)

# The HyperPod operator (cluster.operators) that runs every kind a word admits, and those kinds: a team approved for
# the word can run nothing on a cluster without it (rule HPG-D009). plan/workloads.py ``WORKLOAD_KINDS`` is the
# source; a test keeps the two in step. Training and fine-tuning admit Kubernetes Jobs, which need no operator.
OPERATOR_NEEDED: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (INFERENCE, "inference", ("InferenceEndpointConfig", "JumpStartModel")),
    (INTERACTIVE, "spaces", ("Workspace",)),
    (EXPERIMENTATION, "spaces", ("Workspace",)),
    (RAY, "ray", ("RayJob", "RayCluster", "RayService")),
)


def operator_needed(word: str) -> tuple[str, tuple[str, ...]] | None:
    """(operator, the kinds it runs) that approved-workload ``word`` needs, or None if Kubernetes runs it alone."""
    return next(((op, kinds) for w, op, kinds in OPERATOR_NEEDED if w == word), None)
