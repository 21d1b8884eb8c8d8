"""Money: an exact Decimal amount in one currency."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_EVEN, Decimal

from tally.currencies import CURRENCIES, Currency
from tally.format import format_money


class UnknownCurrencyError(ValueError):
    """A code that is not in the ISO 4217 table."""

    def __init__(self, code: str) -> None:
        super().__init__(f"unknown currency code: {code!r}")
        self.code = code


class CurrencyMismatchError(ValueError):
    """An operation on amounts in two different currencies."""


def get_currency(code: str | Currency) -> Currency:
    """The currency for an ISO 4217 code, in any case."""
    if isinstance(code, Currency):
        return code
    try:
        return CURRENCIES[code.strip().upper()]
    except KeyError:
        raise UnknownCurrencyError(code) from None


class Money:
    """An amount and a currency. The amount stays exact until `rounded()` is called."""

    __slots__ = ("amount", "currency")

    def __init__(self, amount: Decimal | int | str, currency: str | Currency) -> None:
        if isinstance(amount, float):
            raise TypeError("pass the amount as str, int or Decimal, not float")
        self.amount = Decimal(amount)
        self.currency = get_currency(currency)

    @classmethod
    def from_minor(cls, units: int, currency: str | Currency) -> Money:
        """Money from an integer count of minor units (cents, fils, ...)."""
        found = get_currency(currency)
        return cls(Decimal(units).scaleb(-found.exponent), found)

    def to_minor(self) -> int:
        """The rounded amount as an integer count of minor units."""
        return int(self.rounded().amount.scaleb(self.currency.exponent))

    def rounded(self) -> Money:
        """The amount rounded half-even to the currency's minor unit."""
        quantum = Decimal(1).scaleb(-self.currency.exponent)
        return Money(self.amount.quantize(quantum, rounding=ROUND_HALF_EVEN), self.currency)

    def allocate(self, ratios: Sequence[int]) -> list[Money]:
        """Split into parts proportional to `ratios`, in whole minor units, losing nothing."""
        total = sum(ratios)
        if not ratios or total <= 0 or any(r < 0 for r in ratios):
            raise ValueError(f"ratios must be non-negative with a positive sum: {ratios}")
        minor = self.to_minor()
        parts = [minor * ratio // total for ratio in ratios]
        for index in range(minor - sum(parts)):
            parts[index % len(parts)] += 1
        return [Money.from_minor(part, self.currency) for part in parts]

    def _same_currency(self, other: Money) -> None:
        if other.currency != self.currency:
            raise CurrencyMismatchError(
                f"cannot combine {self.currency.code} and {other.currency.code}"
            )

    def __add__(self, other: object) -> Money:
        if not isinstance(other, Money):
            return NotImplemented
        self._same_currency(other)
        return Money(self.amount + other.amount, self.currency)

    def __sub__(self, other: object) -> Money:
        if not isinstance(other, Money):
            return NotImplemented
        self._same_currency(other)
        return Money(self.amount - other.amount, self.currency)

    def __mul__(self, factor: object) -> Money:
        if not isinstance(factor, (int, Decimal)) or isinstance(factor, bool):
            return NotImplemented
        return Money(self.amount * factor, self.currency)

    __rmul__ = __mul__

    def __neg__(self) -> Money:
        return Money(-self.amount, self.currency)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Money):
            return NotImplemented
        return self.currency == other.currency and self.amount == other.amount

    def __hash__(self) -> int:
        return hash((self.amount, self.currency.code))

    def __lt__(self, other: Money) -> bool:
        self._same_currency(other)
        return self.amount < other.amount

    def __repr__(self) -> str:
        return f"Money({str(self.amount)!r}, {self.currency.code!r})"

    def __str__(self) -> str:
        return format_money(self)
