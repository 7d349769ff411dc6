"""How the benchmark report prints a figure: at a fixed number of decimals (Markdown) or
significant digits (CSV), the same on every library version."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

import numpy as np
import pandas as pd


def num(value: Any, digits: int = 3, sign: str = "") -> str:
    """``value`` at ``digits`` decimals. A mean of accuracies often lies exactly halfway
    between two printed values (10 seeds of k / 40), and summation order (it differs between
    library versions) puts its float on either side of the half, so the value is taken as a
    decimal first (:func:`_decimal`), whose halves round away from zero."""
    if missing(value):
        return "-"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    value = float(value)
    if not math.isfinite(value):
        return f"{value:{sign}}"
    return f"{_rounded(_decimal(value), Decimal(1).scaleb(-digits)):{sign}f}"


def significant(value: Any, digits: int = 6) -> Any:
    """``value`` at ``digits`` significant digits, rounded as :func:`num` rounds (so
    ``%.6g`` prints it the same on every library version); missing values as they are."""
    if missing(value) or not math.isfinite(value) or value == 0:
        return value
    exact = _decimal(value)
    return float(_rounded(exact, Decimal(1).scaleb(exact.adjusted() - digits + 1)))


def _decimal(value: float) -> Decimal:
    """``value`` at 12 significant digits, below which sums of the same numbers in another
    order differ."""
    return Decimal(f"{value:.12g}")


def _rounded(value: Decimal, step: Decimal) -> Decimal:
    with localcontext() as context:
        context.prec = max(28, value.adjusted() - step.adjusted() + 2)  # room for every digit
        return value.quantize(step, rounding=ROUND_HALF_UP)


def missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # not a scalar
        return False


def count(value: Any) -> str:
    return "-" if missing(value) else str(int(value))


def pm(mean: Any, sd: Any) -> str:
    if missing(sd):
        return num(mean)
    return f"{num(mean)} ± {num(sd)}"
