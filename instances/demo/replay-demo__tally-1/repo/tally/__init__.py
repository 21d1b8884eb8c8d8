"""Exact money amounts in ISO 4217 currencies."""

from tally.currencies import Currency
from tally.format import format_money
from tally.money import CurrencyMismatchError, Money, UnknownCurrencyError, get_currency

__all__ = [
    "Currency",
    "CurrencyMismatchError",
    "Money",
    "UnknownCurrencyError",
    "format_money",
    "get_currency",
]
__version__ = "0.4.0"
