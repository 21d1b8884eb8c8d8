from decimal import Decimal

import pytest

from stockroom.parsing import parse_quantity
from stockroom.units import IncompatibleUnitsError, UnknownUnitError, convert, get_unit


def test_convert_kg_to_g():
    assert convert(2, "kg", "g") == Decimal("2000")


def test_convert_pounds_to_kilograms():
    assert convert("10", "lb", "kg") == Decimal("4.5359237")


def test_convert_accepts_aliases_and_case():
    assert convert(1, "KG", "grams") == Decimal("1000")
    assert get_unit(" Litres ").symbol == "l"


def test_convert_between_dimensions_fails():
    with pytest.raises(IncompatibleUnitsError):
        convert(1, "kg", "l")


def test_unknown_unit():
    with pytest.raises(UnknownUnitError, match="bushel"):
        get_unit("bushel")


def test_parse_quantity():
    assert parse_quantity("2,5 KG") == (Decimal("2.5"), "kg")
    assert parse_quantity("12") == (Decimal("12"), "each")
    with pytest.raises(ValueError):
        parse_quantity("a few")
