"""Token rates: what a million tokens of each agent cost, and the default GPU price.

A rates file is TOML validated by ``Rates``. ``reclaim-2026.toml`` ships the rates the RECLAIM
paper publishes; its GPU price is a setting (``reclaim report --gpu-price`` overrides it).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated

import msgspec

from eventlog.events.base import Doc

from ..packaged import text_of

DEFAULT = "reclaim-2026"
SHIPPED = (DEFAULT,)
PER_MILLION = 1_000_000

Rate = Annotated[float, msgspec.Meta(ge=0)]


class AgentRates(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One agent's token rates, USD per million tokens."""

    model: Annotated[str, Doc("The served model the rates are for.")]
    name: Annotated[str, Doc("Display name.")] = ""
    prompt: Annotated[Rate, Doc("Prompt tokens not served from the cache.")]
    cached: Annotated[
        Rate | None, Doc("Cached prompt tokens; absent: they bill at the prompt rate.")
    ] = None
    completion: Annotated[Rate, Doc("Completion tokens (reasoning included).")]

    def token_cost(self, prompt: int, cached: int, completion: int) -> float:
        """USD for these token counts; ``prompt`` includes the ``cached`` tokens."""
        cached_rate = self.prompt if self.cached is None else self.cached
        per_million = (
            (prompt - cached) * self.prompt + cached * cached_rate + completion * self.completion
        )
        return per_million / PER_MILLION


class Rates(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A rates file: token rates by agent key and the default GPU price."""

    id: Annotated[str, Doc("Rates id, e.g. 'reclaim-2026'.")]
    description: Annotated[str, Doc("Where the rates come from.")] = ""
    gpu_usd_per_h100_hour: Annotated[Rate, Doc("Default GPU price, USD per H100-hour.")]
    agents: Annotated[dict[str, AgentRates], Doc("Token rates by agent key.")] = {}


class RatesError(ValueError):
    """A rates file that cannot be read, is not valid TOML or not valid rates."""


def parse_rates(text: str, name: str = "rates") -> Rates:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RatesError(f"{name}: not valid TOML: {exc}") from exc
    try:
        return msgspec.convert(data, Rates)
    except msgspec.ValidationError as exc:
        raise RatesError(f"{name}: not valid rates: {exc}") from exc


def shipped(name: str = DEFAULT) -> Rates:
    """A rates file shipped inside the package, by id."""
    return load(name)


def load(path_or_name: str | Path) -> Rates:
    """Rates from a file, or shipped ones by id (``reclaim-2026``)."""
    return parse_rates(*text_of(__name__, path_or_name, SHIPPED, RatesError))
