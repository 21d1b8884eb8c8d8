"""Stock levels per item, each kept in the item's own stock unit."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from stockroom.units import UNITS, IncompatibleUnitsError, convert, get_unit


class InsufficientStockError(ValueError):
    """A pick larger than what is on the shelf."""


@dataclass
class Item:
    sku: str
    name: str
    unit: str  # symbol of the stock unit
    quantity: Decimal = Decimal(0)


class Inventory:
    """Items by SKU. Quantities may be given in any unit of the item's dimension."""

    def __init__(self) -> None:
        self._items: dict[str, Item] = {}

    def register(self, sku: str, name: str, unit: str) -> Item:
        if sku in self._items:
            raise ValueError(f"SKU already registered: {sku}")
        item = Item(sku, name, get_unit(unit).symbol)
        self._items[sku] = item
        return item

    def item(self, sku: str) -> Item:
        try:
            return self._items[sku]
        except KeyError:
            raise KeyError(f"unknown SKU: {sku}") from None

    def add(self, sku: str, quantity: Decimal | int | str, unit: str | None = None) -> Decimal:
        """Receive stock; returns the new level in the stock unit."""
        item = self.item(sku)
        amount = Decimal(quantity)
        if unit is not None:
            source = UNITS[unit]
            target = UNITS[item.unit]
            if source.dimension != target.dimension:
                raise IncompatibleUnitsError(f"{sku} is counted in {item.unit}, not {unit}")
            amount = amount * source.factor / target.factor
        if amount <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        item.quantity += amount
        return item.quantity

    def remove(self, sku: str, quantity: Decimal | int | str, unit: str | None = None) -> Decimal:
        """Pick stock; returns the new level in the stock unit."""
        item = self.item(sku)
        amount = Decimal(quantity)
        if unit is not None:
            source = UNITS[unit]
            target = UNITS[item.unit]
            if source.dimension != target.dimension:
                raise IncompatibleUnitsError(f"{sku} is counted in {item.unit}, not {unit}")
            amount = amount * source.factor / target.factor
        if amount <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        if amount > item.quantity:
            raise InsufficientStockError(
                f"{sku}: cannot remove {amount} {item.unit}, only {item.quantity} in stock"
            )
        item.quantity -= amount
        return item.quantity

    def level(self, sku: str, unit: str | None = None) -> Decimal:
        """The stock level, in the stock unit or converted to `unit`."""
        item = self.item(sku)
        if unit is None:
            return item.quantity
        return convert(item.quantity, item.unit, unit)

    def report(self) -> list[tuple[str, str, Decimal, str]]:
        """(sku, name, quantity, unit) for every item, sorted by SKU."""
        return [
            (item.sku, item.name, item.quantity, item.unit)
            for item in sorted(self._items.values(), key=lambda it: it.sku)
        ]
