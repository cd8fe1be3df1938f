"""Unit conversions shared by the cost formulas: prices are per hour, times in seconds."""

from __future__ import annotations

#: Seconds per hour. Plain integers: exact inside SymPy expressions, and formattable as numbers.
SECONDS_PER_HOUR = 3600

#: Hours per day, for tokens or requests per day.
HOURS_PER_DAY = 24


def usd_per_million_tokens(gpu_seconds_per_token, price_per_hour):
    """Dollars per million tokens from GPU-seconds per token and a $/GPU-hour price (arrays allowed)."""
    return gpu_seconds_per_token * price_per_hour / SECONDS_PER_HOUR * 1e6
