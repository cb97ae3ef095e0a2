"""Preemption (Kueue's ``pkg/scheduler/preemption``): classic and fair-sharing, behind one preemptor."""

from .common import IN_CLUSTER_QUEUE, IN_COHORT_FAIR_SHARING, IN_COHORT_RECLAIM_WHILE_BORROWING, IN_COHORT_RECLAMATION
from .preemptor import Preemptor

__all__ = [
    "IN_CLUSTER_QUEUE",
    "IN_COHORT_FAIR_SHARING",
    "IN_COHORT_RECLAIM_WHILE_BORROWING",
    "IN_COHORT_RECLAMATION",
    "Preemptor",
]
