"""Study 70's research-only reader: a value unseen in its column, but kept by another column,
read as that column's token of the same value, not as the untrained UNKNOWN token.

Many tables write one alphabet in several columns: a board's squares (x / o / b), a DNA
window (A / C / G / T), yes / no answers, ordinal scales (low / med / high / vhigh in
car's `buying` and `maint`). With a vocabulary per column, a value column j never held at
fit is UNKNOWN there even when column j' learned a token for the very same value. The
paper's one code space (``vocabulary="shared"``) reads it as that token, and study 38
(refitted after the fix that does so) lost in distribution on the shared space itself; this
reader keeps the per-column network and borrows only for such values: the row is predicted
as the mean of the label probabilities with x_j read as column j'`s token of the value, over
every categorical column j' != j that kept it,

    p(y | x) = mean_{j'} p(y | x_-j, x_j = token_{j'}(v)),

each embedding entering at column j's position (token_{j'}(v)'s embedding plus column j's).
Only rows with exactly one UNKNOWN cell whose value another column kept are re-read (the
held-out check of study 52 alters one column); every other row keeps the UNKNOWN reading.
The fit is the estimator's, unchanged, and so is its own ``predict`` (``unknown="token"``,
as ``research.py`` builds it): :meth:`readings` gives the borrowed reading's predictions
beside it, so ``research.py`` pairs both on the same network. The reading is the estimator's
``unknown="borrow"`` (``tabmoe/_estimator_predict.py``); study 70's records were made by a
copy of it written here first, which gave the option's predictions exactly (checked then on
every row of this script's table) and was replaced by the option itself.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pandas as pd

from tabmoe import TabularMoEClassifier


class BorrowedUnknownClassifier(TabularMoEClassifier):
    """Research-only (study 70): the defaults' fit and predictions, with :meth:`readings`."""

    def readings(self, X: Any) -> dict[str, np.ndarray]:
        """``{"borrow": predictions}``: the same network read with ``unknown="borrow"``."""
        return {"borrow": copy.copy(self).set_params(unknown="borrow").predict(X)}


def main(argv: list[str] | None = None) -> int:
    """Predict seconds of ``unknown="token"`` and ``"borrow"`` on rows that all hold one unseen
    value that the five other columns kept, one thread."""
    import argparse
    import time

    from tabmoe.bench import limited_threads

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args(argv)
    rng = np.random.RandomState(0)
    levels = ["low", "med", "high", "vhigh"]
    X = pd.DataFrame({f"c{i}": rng.choice(levels, args.rows) for i in range(6)})
    y = (X["c0"].isin(["high", "vhigh"]) ^ X["c1"].isin(["low"])).to_numpy().astype(int)
    seen = (X["c0"] != "vhigh").to_numpy()  # c0 never holds "vhigh" at fit; c1-c5 do
    test = X[~seen]
    with limited_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = TabularMoEClassifier(random_state=0).fit(X[seen], y[seen])
        for mode in ("token", "borrow") * 2:
            model.set_params(unknown=mode)
            start = time.perf_counter()
            model.predict(test)
            print(f"unknown={mode!r}: {time.perf_counter() - start:.3f} s for {len(test)} rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
