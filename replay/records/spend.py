"""What model calls spent, summed: tokens, the providers' prompt caching, cost and its saving
(a cell keeps what its own calls spent, `CellResult.spent`).

Two caches are kept apart in every word: *cached tokens* are prompt tokens a provider read from
its own prompt cache (billed at its cached price); a reply *replayed from the call cache* is
replay's own store answering, with no provider called and nothing spent, so it adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

FIELDS = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost", "saved")
MONEY = ("cost", "saved")


@dataclass
class Spend:
    """Sums over model calls: `input_tokens` counts whole prompts, `cached_tokens` of them read
    from the providers' prompt caches and `cache_write_tokens` written to them; `saved` is what
    the same calls would have cost with nothing cached, minus `cost`."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    saved: float = 0.0

    def add(self, spent: Spend | Mapping[str, float]) -> None:
        """Add one record of spend: another sum (a cell's `spent`), or named values (names it
        lacks count 0)."""
        values = asdict(spent) if isinstance(spent, Spend) else spent
        for name in FIELDS:
            value = values.get(name, 0)
            setattr(self, name, getattr(self, name)
                    + (float(value) if name in MONEY else int(value)))

    @classmethod
    def of(cls, values: Mapping[str, float]) -> Spend:
        """The sum that named values make (a cell's `spent` as stores keep it)."""
        spend = cls()
        spend.add(values)
        return spend

    @property
    def cached_share(self) -> float | None:
        """The share of prompt tokens read from a prompt cache; None before any prompt."""
        return self.cached_tokens / self.input_tokens if self.input_tokens else None

    @property
    def uncached_cost(self) -> float:
        """What the same calls would have cost with nothing cached."""
        return self.cost + self.saved

    def text(self) -> str:
        """One line: `1.2M tokens in (64% cached, saved $0.4100), 3.4k out, $0.1234`."""
        caching = ""
        if self.cached_tokens or self.cache_write_tokens:
            caching = f" ({100 * (self.cached_share or 0):.0f}% cached, {self.saving_text()})"
        return (f"{tokens_text(self.input_tokens)} tokens in{caching}, "
                f"{tokens_text(self.output_tokens)} out, ${self.cost:.4f}")

    def saving_text(self) -> str:
        """`saved $0.4100`, or what cache writes cost beyond what reads saved."""
        if self.saved >= 0:
            return f"saved ${self.saved:.4f}"
        return f"cache writes cost ${-self.saved:.4f} more"

    def to_json(self) -> dict[str, Any]:
        """The sums with the cached share and the uncached cost."""
        return {**asdict(self), "cached_share": self.cached_share,
                "uncached_cost": self.uncached_cost}


def tokens_text(count: int) -> str:
    """A token count in a few characters: `950`, `12.3k`, `1.2M`."""
    if count >= 1_000_000:
        return f"{count / 1e6:.1f}M"
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)
