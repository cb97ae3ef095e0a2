"""Kubernetes quantities as whole numbers in a base unit (cpu: millicores, memory: bytes)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, Optional

_SUFFIX = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "m": Decimal("0.001"),
}
_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P|m)?\s*$")


def scale(resource: str) -> int:
    """How many base units one plain unit of ``resource`` is (cpu counts in millicores)."""
    return 1000 if resource == "cpu" else 1


def parse_quantity(resource: str, value: Any) -> Optional[int]:
    """``45`` / ``"500m"`` / ``"64Gi"`` -> base units, or None if it is not a non-negative quantity.

    A fraction of a base unit rounds up, as Kubernetes does.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value * scale(resource) if value >= 0 else None
    if isinstance(value, float):
        value = repr(value)
    if not isinstance(value, str):
        return None
    m = _QUANTITY.match(value)
    if not m:
        return None
    try:
        number = Decimal(m.group(1)) * Decimal(_SUFFIX[m.group(2) or ""]) * scale(resource)
    except InvalidOperation:  # pragma: no cover - the regex admits only decimals
        return None
    whole = int(number.to_integral_value(rounding="ROUND_CEILING"))
    return whole


def show_quantity(resource: str, amount: int) -> Any:
    """Base units -> the shortest readable quantity: cpu in cores (or millicores), memory in Gi when whole."""
    if resource == "cpu":
        return amount // 1000 if amount % 1000 == 0 else f"{amount}m"
    if amount and amount % 2**30 == 0:
        return f"{amount // 2**30}Gi"
    if amount and amount % 2**20 == 0:
        return f"{amount // 2**20}Mi"
    return amount
