"""The paper's two tabular experiments (docs/paper.md sections 3 and 4), reproduced exactly.

* :func:`correlation_shift_simulation`: the authors' generator, same RNG call order, so
  ``seed`` gives the authors' data.
* :func:`auto_mpg_origin_split`: UCI Auto MPG, discretised into tertiles, trained on US cars
  and tested on non-US cars.

Both return integer-coded DataFrames with the label ``y`` as the last column.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .table import Table

#: The paper's 12 simulation configurations (num_corefea, corr, x_noise).
SIMULATION_GRID: tuple[tuple[int, float, float], ...] = tuple(
    (k, c, n) for k in (1, 5) for c in (0.1, 0.9) for n in (0.0, 0.5, 1.5)
)
AUTO_MPG_FEATURES = ["cylinders", "displacement", "horsepower", "weight", "acceleration", "model year"]
#: Features of the simulation (``correlation_shift_simulation``'s ``d``), of which
#: ``num_corefea`` drive the label.
SIMULATION_FEATURES = 5
#: Column of :func:`simulation_table` saying which distribution a row was drawn from.
SIMULATION_DOMAIN = "domain"


def paper_simulation_seeds(n: int = 20) -> list[int]:
    """The first ``n`` of the authors' seeds: ``np.random.seed(2023); np.random.randint(10000,
    size=20)``."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 0 <= n <= 20:
        # else a slice: 25 gave the 20 seeds, -1 the first 19, without a word
        raise ValueError(f"n must be an integer in [0, 20] (the authors ran 20 seeds), got {n!r}")
    return [int(s) for s in np.random.RandomState(2023).randint(10000, size=20)[:n]]


@dataclass
class PaperSplit:
    """Train and OOD test frames; ``y`` is the label column (last)."""

    train: pd.DataFrame
    test: pd.DataFrame
    target: str = "y"

    @property
    def X_train(self) -> pd.DataFrame:
        return self.train.drop(columns=self.target)

    @property
    def y_train(self) -> pd.Series:
        return self.train[self.target]

    @property
    def X_test(self) -> pd.DataFrame:
        return self.test.drop(columns=self.target)

    @property
    def y_test(self) -> pd.Series:
        return self.test[self.target]


def correlation_shift_simulation(
    num_corefea: int,
    corr: float,
    x_noise: float,
    seed: int,
    *,
    n: int = 2000,
    d: int = SIMULATION_FEATURES,
    y_noise: float = 2.0,
    n_cat: int = 10,
    shift: bool = True,
) -> PaperSplit:
    """The correlation-shift simulation of docs/paper.md section 3, bit for bit where
    numpy's ``multivariate_normal`` draws the authors' basis (it depends on the BLAS
    kernels: see docs/paper.md and tests/authors_data.py).

    RNG calls in the authors' order on a ``RandomState(seed)`` (the same stream as
    ``np.random.seed(seed)``): train x, test x, train noise, test noise, beta, train y noise,
    test y noise. Every column is cut into ``n_cat`` quantile bins pooled over train + test.
    """
    for name, value in (("n", n), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"simulation: {name} must be an integer >= 1, got {value!r}")
    check_simulation_args(num_corefea, corr, x_noise, d)
    if isinstance(n_cat, bool) or not isinstance(n_cat, numbers.Integral) or not 1 <= n_cat <= 2 * n:
        # else pandas' "Bin edges must be unique" once the quantiles repeat
        raise ValueError(f"simulation: n_cat must be an integer in [1, {2 * n}] (2 n rows pooled), got {n_cat!r}")
    if isinstance(y_noise, bool) or not isinstance(y_noise, numbers.Real) or not 0 <= y_noise < math.inf:
        raise ValueError(f"simulation: y_noise must be a finite number >= 0, got {y_noise!r}")
    rs = np.random.RandomState(seed)
    mean = np.zeros(d)
    signs = np.concatenate([-np.ones(d // 2), np.ones(d - d // 2)])
    train_cov = np.ones((d, d)) * corr + np.eye(d) * (1 - corr)
    train_true = rs.multivariate_normal(mean, train_cov, size=n) * signs
    test_cov = np.ones((d, d)) * (1 - corr) + np.eye(d) * corr if shift else train_cov
    test_true = rs.multivariate_normal(mean, test_cov, size=n) * signs
    scale = np.array([0.4] * num_corefea + [0.3] * (d - num_corefea)) * x_noise
    train_x = train_true + scale * rs.normal(size=[n, d])
    test_x = test_true + scale * rs.normal(size=[n, d])
    beta = rs.uniform(size=num_corefea) * 10
    train_y = train_true[:, :num_corefea] @ beta + y_noise * rs.normal(size=n)
    test_y = test_true[:, :num_corefea] @ beta + y_noise * rs.normal(size=n)
    columns = [f"x{i}" for i in range(d)]
    data = pd.DataFrame(np.vstack([train_x, test_x]), columns=columns)
    data["y"] = np.concatenate([train_y, test_y])
    for column in data.columns:
        data[column] = pd.qcut(data[column], n_cat, labels=False)
    return PaperSplit(data.iloc[:n].reset_index(drop=True), data.iloc[n:].reset_index(drop=True))


def check_simulation_args(num_corefea: int, corr: float, x_noise: float, d: int = SIMULATION_FEATURES) -> None:
    """ValueError naming the first of ``num_corefea`` (an integer in [0, d]), ``corr`` (in
    [0, 1]) and ``x_noise`` (finite, >= 0) outside its range. Else a TypeError naming nothing
    ("can't multiply sequence by non-int of type 'str'"), a broadcast error (more core
    features than columns), or, for corr outside [0, 1], a covariance that is not positive
    semi-definite: numpy warns and samples anyway."""
    if isinstance(num_corefea, bool) or not isinstance(num_corefea, numbers.Integral) or not 0 <= num_corefea <= d:
        raise ValueError(f"simulation: num_corefea must be an integer in [0, {d}], got {num_corefea!r}")
    if isinstance(corr, bool) or not isinstance(corr, numbers.Real) or not 0 <= corr <= 1:
        raise ValueError(f"simulation: corr must be a number in [0, 1], got {corr!r}")
    if isinstance(x_noise, bool) or not isinstance(x_noise, numbers.Real) or not 0 <= x_noise < math.inf:
        raise ValueError(f"simulation: x_noise must be a finite number >= 0, got {x_noise!r}")


def default_auto_mpg_path() -> Path:
    """``$TABMOE_AUTO_MPG``, else ``$TABMOE_SHARED/data/auto-mpg.csv`` if that file exists,
    else the copy shipped in the checkout (``benchmarks/data/auto-mpg.csv``, with its source
    and licence in that folder's README), else the first ``shared/data/auto-mpg.csv`` found
    in an ancestor of this package (``../shared`` beside a checkout)."""
    env = os.environ.get("TABMOE_AUTO_MPG")
    if env:
        return Path(env).expanduser()
    relative = Path("data") / "auto-mpg.csv"
    shared = os.environ.get("TABMOE_SHARED")
    if shared and (Path(shared).expanduser() / relative).is_file():
        return Path(shared).expanduser() / relative
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "benchmarks" / relative).is_file():
            return parent / "benchmarks" / relative
    for parent in here.parents:
        if (parent / "shared" / relative).is_file():
            return parent / "shared" / relative
    return Path(shared) / relative if shared else here.parents[3] / "shared" / relative


def simulation_table(num_corefea: int, corr: float, x_noise: float, seed: int, **kwargs: Any) -> Table:
    """:func:`correlation_shift_simulation` as one :class:`Table` with a domain column.

    Rows ``0..n-1`` are the authors' training rows, rows ``n..2n-1`` their shifted test rows,
    in generation order; column ``domain`` is ``"train"`` or ``"test"`` accordingly, so the
    paper's split is the value split ``domain: train -> test``. ``kwargs`` go to the generator.
    """
    split = correlation_shift_simulation(num_corefea, corr, x_noise, seed, **kwargs)
    data = pd.concat([split.train, split.test], ignore_index=True)
    data.insert(0, SIMULATION_DOMAIN, ["train"] * len(split.train) + ["test"] * len(split.test))
    return Table(
        data=data,
        target=split.target,
        name=f"simulation-{num_corefea}-{corr}-{x_noise}",
        source="paper:correlation_shift_simulation",
        description=(
            f"Correlation-shift simulation (docs/paper.md section 3), num_corefea={num_corefea}, "
            f"corr={corr}, x_noise={x_noise}, seed={seed}; bins pooled over train + test."
        ),
        meta={"seed": seed},
    )


def auto_mpg_table(path: str | os.PathLike | None = None) -> Table:
    """Auto MPG discretised as in docs/paper.md section 4, with the ``origin`` column kept.

    385 rows (horsepower '?' or blank dropped, cylinders in {4, 6, 8}); cylinders -> {0, 1,
    2}; mpg -> label ``y`` in tertiles; displacement, horsepower, weight, acceleration and
    model year -> tertiles pooled over all rows; ``origin`` is 1 (US), 2 (Europe) or 3
    (Japan); car name is dropped.
    """
    path = Path(path).expanduser() if path is not None else default_auto_mpg_path()
    if not path.exists():
        raise FileNotFoundError(
            f"auto-mpg CSV not found at {path}: set TABMOE_AUTO_MPG to the file (a suite can "
            "also name it: data: {auto_mpg: {path: ...}}; in Python: auto_mpg_table(path=...))"
        )
    raw = pd.read_csv(path)
    absent = [c for c in ["mpg", *AUTO_MPG_FEATURES, "origin"] if c not in raw.columns]
    if absent:  # else KeyError: 'horsepower' (UCI's auto-mpg.data has no header row)
        raise ValueError(
            f"auto-mpg CSV {path} has no column {', '.join(map(repr, absent))} (its header: "
            f"{', '.join(map(str, raw.columns[:9]))}): give a CSV whose header names mpg, "
            f"{', '.join(AUTO_MPG_FEATURES)} and origin, as benchmarks/data/auto-mpg.csv does."
        )
    # unknown horsepower: '?' in UCI's file, blank (NaN) in other copies; both are dropped
    horsepower = raw["horsepower"]
    raw = raw[horsepower.notna() & (horsepower.astype(str).str.strip() != "?")].copy()
    raw["horsepower"] = raw["horsepower"].astype(float)
    raw = raw[raw["cylinders"].isin([4, 6, 8])].reset_index(drop=True)
    data = pd.DataFrame({"cylinders": raw["cylinders"].map({4: 0, 6: 1, 8: 2})})
    for column in AUTO_MPG_FEATURES[1:]:
        data[column] = pd.qcut(raw[column], 3, labels=False)
    data.insert(0, "origin", raw["origin"].astype(int))
    data["y"] = pd.qcut(raw["mpg"], 3, labels=False)
    return Table(data=data, target="y", name="auto-mpg", source=f"file:{path}",
                 description="UCI Auto MPG, discretised as in docs/paper.md section 4.")


def auto_mpg_origin_split(path: str | os.PathLike | None = None) -> PaperSplit:
    """Auto MPG as in docs/paper.md section 4: train on origin 1 (US), test on origins 2 and 3.

    Rows with horsepower '?' are dropped and cylinders kept in {4, 6, 8} (385 rows);
    cylinders -> {0, 1, 2}; mpg -> label ``y`` in tertiles; displacement, horsepower,
    weight, acceleration and model year -> tertiles (pooled over all rows); origin and car
    name are dropped. 245 training rows, 140 test rows.
    """
    data = auto_mpg_table(path).data
    us = (data["origin"] == 1).to_numpy()
    data = data.drop(columns="origin")
    return PaperSplit(data[us].reset_index(drop=True), data[~us].reset_index(drop=True))
