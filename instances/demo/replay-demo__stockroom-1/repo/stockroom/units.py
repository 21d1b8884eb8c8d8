"""Units of measure and conversion between units of the same dimension."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal


class UnknownUnitError(KeyError):
    """A unit name that is neither a symbol nor an alias in the table."""

    def __str__(self) -> str:
        return f"unknown unit: {self.args[0]!r}"


class IncompatibleUnitsError(ValueError):
    """A conversion between different dimensions, e.g. mass to volume."""


@dataclass(frozen=True)
class Unit:
    symbol: str
    dimension: str  # "mass", "volume" or "count"
    factor: Decimal  # how many base units (g, ml, each) one of this unit holds


UNITS: dict[str, Unit] = {
    unit.symbol: unit
    for unit in (
        Unit("mg", "mass", Decimal("0.001")),
        Unit("g", "mass", Decimal("1")),
        Unit("kg", "mass", Decimal("1000")),
        Unit("oz", "mass", Decimal("28.349523125")),
        Unit("lb", "mass", Decimal("453.59237")),
        Unit("ml", "volume", Decimal("1")),
        Unit("cl", "volume", Decimal("10")),
        Unit("l", "volume", Decimal("1000")),
        Unit("each", "count", Decimal("1")),
        Unit("dozen", "count", Decimal("12")),
    )
}

# Spellings people type, mapped to a symbol in UNITS.
ALIASES: dict[str, str] = {
    "gram": "g", "grams": "g",
    "kilo": "kg", "kilos": "kg", "kilogram": "kg", "kilograms": "kg",
    "ounce": "oz", "ounces": "oz",
    "lbs": "lb", "pound": "lb", "pounds": "lb",
    "litre": "l", "litres": "l", "liter": "l", "liters": "l",
    "millilitre": "ml", "milliliter": "ml",
    "ea": "each", "pc": "each", "pcs": "each", "piece": "each", "pieces": "each",
}


def get_unit(name: str) -> Unit:
    """Look a unit up by symbol or alias, ignoring case and surrounding spaces."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    try:
        return UNITS[key]
    except KeyError:
        raise UnknownUnitError(name) from None


def convert(quantity: Decimal | int | str, from_unit: str, to_unit: str) -> Decimal:
    """Convert `quantity` from one unit to another of the same dimension."""
    source = get_unit(from_unit)
    target = get_unit(to_unit)
    if source.dimension != target.dimension:
        raise IncompatibleUnitsError(
            f"cannot convert {source.dimension} ({source.symbol}) "
            f"to {target.dimension} ({target.symbol})"
        )
    return Decimal(quantity) * source.factor / target.factor
