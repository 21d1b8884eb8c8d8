from decimal import Decimal

import pytest

from tally import CurrencyMismatchError, Money, UnknownCurrencyError


def test_amount_stays_exact_until_rounded():
    money = Money("10.005", "EUR")
    assert money.amount == Decimal("10.005")
    assert money.rounded() == Money("10.00", "EUR")
    assert Money("10.015", "EUR").rounded() == Money("10.02", "EUR")


def test_minor_units_follow_the_currency_exponent():
    assert Money.from_minor(1250, "KWD") == Money("1.250", "KWD")
    assert Money("1250", "JPY").to_minor() == 1250
    assert Money("19.99", "usd").to_minor() == 1999


def test_arithmetic():
    price = Money("19.99", "EUR")
    assert price * 3 == Money("59.97", "EUR")
    assert 2 * price - Money("0.98", "EUR") == Money("39.00", "EUR")
    assert -price == Money("-19.99", "EUR")


def test_currencies_do_not_mix():
    with pytest.raises(CurrencyMismatchError):
        Money("1", "EUR") + Money("1", "USD")


def test_allocate_loses_nothing():
    parts = Money("100.00", "EUR").allocate([1, 1, 1])
    assert parts == [Money("33.34", "EUR"), Money("33.33", "EUR"), Money("33.33", "EUR")]
    assert sum((part.amount for part in parts), Decimal(0)) == Decimal("100.00")


def test_funds_are_accepted():
    assert Money("1.2345", "CLF").to_minor() == 12345


def test_unknown_currency():
    with pytest.raises(UnknownCurrencyError, match="XYZ"):
        Money("1", "XYZ")


def test_float_amount_is_refused():
    with pytest.raises(TypeError):
        Money(0.1, "EUR")
