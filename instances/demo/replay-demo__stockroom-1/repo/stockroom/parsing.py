"""Quantities written as text, as they come from delivery notes: "2.5 kg", "12 pcs"."""

from __future__ import annotations

import re
from decimal import Decimal

from stockroom.units import get_unit

_QUANTITY = re.compile(r"^\s*(?P<number>[0-9]+(?:[.,][0-9]+)?)\s*(?P<unit>[A-Za-z]+)?\s*$")


def parse_quantity(text: str, default_unit: str = "each") -> tuple[Decimal, str]:
    """Split "2,5 KG" into (Decimal("2.5"), "kg"); the unit comes back as its symbol."""
    match = _QUANTITY.match(text)
    if match is None:
        raise ValueError(f"not a quantity: {text!r}")
    number = Decimal(match["number"].replace(",", "."))
    unit = get_unit(match["unit"] or default_unit)
    return number, unit.symbol
