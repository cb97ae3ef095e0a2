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
APPROVED_WORKLOADS: tuple[str, ...] = (TRAINING, FINE_TUNING, INFERENCE, INTERACTIVE, EXPERIMENTATION)
