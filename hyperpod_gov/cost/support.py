"""Which EKS support tier a Kubernetes version is in on a given day, and what the control plane costs in it.

The dates are Amazon EKS's Kubernetes release calendar (``CALENDAR_SOURCE``), in UTC: extended support (and its
billing) starts on the day a version reaches the end of standard support; past the end of extended support EKS
upgrades the control plane itself. The rates are the EKS pricing page's (``PRICING_SOURCE``; AWS's extended support
pricing post states both): the total per cluster-hour, extended support included.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

CALENDAR_SOURCE = ("https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html"
                   "#kubernetes-release-calendar")
PRICING_SOURCE = "https://aws.amazon.com/eks/pricing/"
EXTENDED_PRICING_POST = ("https://aws.amazon.com/blogs/containers/"
                         "amazon-eks-extended-support-for-kubernetes-versions-pricing/")

# version -> (end of standard support, end of extended support); 1.34's row as the calendar (and endoflife.date's
# copy of it, endoflife.date/amazon-eks) gives it since its release on EKS.
CALENDAR: dict[str, tuple[dt.date, dt.date]] = {
    "1.30": (dt.date(2025, 7, 23), dt.date(2026, 7, 23)),
    "1.31": (dt.date(2025, 11, 26), dt.date(2026, 11, 26)),
    "1.32": (dt.date(2026, 3, 23), dt.date(2027, 3, 23)),
    "1.33": (dt.date(2026, 7, 29), dt.date(2027, 7, 29)),
    "1.34": (dt.date(2026, 12, 2), dt.date(2027, 12, 2)),
}

# USD per cluster-hour, the whole control-plane charge in each tier.
HOURLY_USD = {"standard": 0.10, "extended": 0.60}

Tier = Literal["standard", "extended", "ended"]


@dataclass(frozen=True)
class Support:
    """A version's tier on ``day``, the day that tier ends (``ended``: the day extended support ended) and the
    control plane's hourly charge in it (``ended``: the extended rate, until EKS upgrades the cluster)."""

    version: str
    day: dt.date
    tier: Tier
    until: dt.date

    @property
    def hourly_usd(self) -> float:
        return HOURLY_USD["standard" if self.tier == "standard" else "extended"]

    def words(self) -> str:
        if self.tier == "standard":
            return (f"Kubernetes {self.version} is in EKS standard support on {self.day} (until {self.until}; "
                    f"then extended support, USD {HOURLY_USD['extended']:.2f} a cluster-hour)")
        if self.tier == "extended":
            return (f"Kubernetes {self.version} is in EKS extended support on {self.day} (standard support ended; "
                    f"USD {HOURLY_USD['extended']:.2f} a cluster-hour instead of {HOURLY_USD['standard']:.2f}) "
                    f"until {self.until}, when EKS upgrades the control plane itself")
        return (f"Kubernetes {self.version} is past the end of EKS extended support on {self.day} (ended "
                f"{self.until}): EKS upgrades the control plane itself; upgrade the spec's kubernetesVersion")


def support(version: str, day: dt.date) -> Support:
    """The support tier of EKS Kubernetes ``version`` on ``day`` (a date of the calendar: billing changes at the
    start of the end-of-standard-support day, UTC)."""
    if version not in CALENDAR:
        raise KeyError(f"Kubernetes {version}: not in the EKS release calendar of hyperpod_gov/cost/support.py")
    standard_end, extended_end = CALENDAR[version]
    if day < standard_end:
        return Support(version, day, "standard", standard_end)
    if day < extended_end:
        return Support(version, day, "extended", extended_end)
    return Support(version, day, "ended", extended_end)
