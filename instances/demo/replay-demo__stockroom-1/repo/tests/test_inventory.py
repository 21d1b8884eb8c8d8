from decimal import Decimal

import pytest

from stockroom.inventory import InsufficientStockError, Inventory
from stockroom.units import IncompatibleUnitsError


@pytest.fixture
def inv():
    inventory = Inventory()
    inventory.register("FLOUR", "Bread flour", "kg")
    inventory.register("OIL", "Olive oil", "l")
    inventory.register("EGGS", "Eggs", "dozen")
    return inventory


def test_add_in_stock_unit(inv):
    assert inv.add("FLOUR", 25) == Decimal("25")
    assert inv.level("FLOUR") == Decimal("25")


def test_add_and_remove_with_conversion(inv):
    inv.add("FLOUR", 25)
    inv.add("FLOUR", 500, "g")
    inv.remove("FLOUR", 2, "lb")
    assert inv.level("FLOUR") == Decimal("24.59281526")
    assert inv.level("FLOUR", "g") == Decimal("24592.81526")


def test_remove_more_than_in_stock(inv):
    inv.add("OIL", 1)
    with pytest.raises(InsufficientStockError):
        inv.remove("OIL", 1500, "ml")
    assert inv.level("OIL") == Decimal("1")


def test_incompatible_unit(inv):
    with pytest.raises(IncompatibleUnitsError):
        inv.add("OIL", 1, "kg")


def test_count_units(inv):
    inv.add("EGGS", 30, "each")
    assert inv.level("EGGS") == Decimal("2.5")
    assert inv.level("EGGS", "each") == Decimal("30")


def test_register_twice(inv):
    with pytest.raises(ValueError, match="already registered"):
        inv.register("OIL", "Olive oil", "l")


def test_report_sorted_by_sku(inv):
    inv.add("OIL", 2)
    assert [row[0] for row in inv.report()] == ["EGGS", "FLOUR", "OIL"]
    assert inv.report()[2] == ("OIL", "Olive oil", Decimal("2"), "l")
