"""What model calls spent, summed: tokens, the providers' prompt caching, cost and its saving,
the calls made and the seconds they took (a cell keeps what its own calls spent,
`CellResult.spent`).

Two caches are kept apart in every word: *cached tokens* are prompt tokens a provider read from
its own prompt cache (billed at its cached price); a reply *replayed from the call cache* is
replay's own store answering, with no provider called and nothing spent, so it adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

FIELDS = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "cost", "saved",
          "calls", "call_seconds")
REAL = ("cost", "saved", "call_seconds")  # the fields that are not counts


@dataclass
class Spend:
    """Sums over model calls: `input_tokens` counts whole prompts, `cached_tokens` of them read
    from the providers' prompt caches and `cache_write_tokens` written to them; `saved` is what
    the same calls would have cost with nothing cached, minus `cost`. `calls` counts the
    replies the providers sent (refused requests are not replies) and `call_seconds` the
    seconds they took, retries and waits for the server included (`ChatResponse.latency`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    saved: float = 0.0
    calls: int = 0
    call_seconds: float = 0.0

    def add(self, spent: Spend | Mapping[str, float]) -> None:
        """Add one record of spend: another sum (a cell's `spent`), or named values (names it
        lacks count 0)."""
        values = asdict(spent) if isinstance(spent, Spend) else spent
        for name in FIELDS:
            value = values.get(name, 0)
            setattr(self, name, getattr(self, name)
                    + (float(value) if name in REAL else int(value)))

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

    @property
    def seconds_per_call(self) -> float | None:
        """The mean seconds of a call made; None before the first."""
        return self.call_seconds / self.calls if self.calls else None

    @property
    def output_per_second(self) -> float | None:
        """Output tokens per second of the calls' time; None before any time was measured."""
        return self.output_tokens / self.call_seconds if self.call_seconds > 0 else None

    def speed_text(self) -> str:
        """The calls made and their speed, in at most 80 characters: `12 calls made, 3.4
        s/call, 41 tok/s out (call cache replays not counted)`."""
        made = f"{self.calls} call{'' if self.calls == 1 else 's'} made"
        if self.calls:
            made += f", {figure_text(self.seconds_per_call or 0.0)} s/call"
        rate = self.output_per_second
        if rate is not None:
            made += f", {figure_text(rate)} tok/s out"
        return made + " (call cache replays not counted)"

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


def figure_text(value: float) -> str:
    """A figure in a few characters, to two significant digits at least: `0.042`, `3.4`,
    `125`."""
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 1 else f"{value:.2g}"
