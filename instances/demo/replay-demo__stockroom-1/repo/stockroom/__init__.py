"""Stock levels for a small warehouse."""

from stockroom.inventory import InsufficientStockError, Inventory, Item
from stockroom.parsing import parse_quantity
from stockroom.units import (
    IncompatibleUnitsError,
    Unit,
    UnknownUnitError,
    convert,
    get_unit,
)

__all__ = [
    "IncompatibleUnitsError",
    "InsufficientStockError",
    "Inventory",
    "Item",
    "Unit",
    "UnknownUnitError",
    "convert",
    "get_unit",
    "parse_quantity",
]
__version__ = "0.4.1"
