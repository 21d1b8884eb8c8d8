"""Money as text for people: digit grouping, the currency's minor unit, optional symbol."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tally.currencies import SYMBOLS

if TYPE_CHECKING:
    from tally.money import Money


def format_money(money: Money, *, symbol: bool = False, grouping: bool = True) -> str:
    """'1,234.50 USD', or '$1,234.50' with `symbol` where the currency has one."""
    amount = money.rounded().amount
    places = money.currency.exponent
    spec = f",.{places}f" if grouping else f".{places}f"
    code = money.currency.code
    if symbol and code in SYMBOLS:
        sign = "-" if amount < 0 else ""
        return f"{sign}{SYMBOLS[code]}{abs(amount):{spec}}"
    return f"{amount:{spec}} {code}"
