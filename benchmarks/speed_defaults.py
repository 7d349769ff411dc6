"""Fit time of the shipped defaults, side by side: tabmoe vs FT-Transformer (and references).

    python benchmarks/speed_defaults.py [--rows 5000] [--columns 40] [--models tabmoe,ft_transformer]

A model entry may set parameters after ``+`` (a research variant, timed beside the
defaults), e.g. ``--models tabmoe,tabmoe+numeric_embedding=bins+n_bins=10``.

Every model is the registry's estimator exactly as a user constructs it (only
``random_state`` set), one thread, on the same seeded table of ``--rows`` rows and
``--columns`` mixed columns (half categorical with 3-30 string levels, half numeric, 5%
missing each) and a binary label from a noisy additive rule. The models run one after
the other in this process, so their ratio is measured side by side. Prints one JSON line
per model (fit seconds, epochs, accuracy on 2,000 held-out rows) and the ratio of each
model's fit time to tabmoe's; appends to ``benchmarks/results/speed/defaults.jsonl``.
``--extrapolate ft_transformer:5`` times a slow default fit from 5 of its epochs (stated
in the line): a fit without early stopping is scaled to its ``max_epochs``; an early-stopped
one (FT-Transformer's default since 0.1.0) to the fewest epochs its early stopping can run,
``n_iter_no_change + 1``, a lower bound of its fit time (``"bound": "lower"``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from ood_variants import parse_variant as parse_params  # "a=1,b=x" -> {"a": 1, "b": "x"}

from tabmoe._paper_config import AUTO_PATIENCE
from tabmoe.bench import limited_threads
from tabmoe.registry import get_model

OUT = Path(__file__).parent / "results" / "speed" / "defaults.jsonl"


def mixed_table(n_rows: int, n_columns: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    columns, score = {}, np.zeros(n_rows)
    for j in range(n_columns):
        if j % 2 == 0:
            levels = np.array([f"c{j}_{k}" for k in range(3 + j % 28)])
            codes = rng.integers(0, len(levels), n_rows)
            score += rng.normal(size=len(levels))[codes] / np.sqrt(n_columns)
            values = levels[codes].astype(object)
            values[rng.random(n_rows) < 0.05] = None
        else:
            values = rng.normal(size=n_rows)
            score += rng.normal() * np.tanh(values) / np.sqrt(n_columns)
            values[rng.random(n_rows) < 0.05] = np.nan
        columns[f"x{j}"] = values
    score += rng.normal(scale=0.3, size=n_rows)
    return pd.DataFrame(columns), np.where(score > np.median(score), "yes", "no")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--columns", type=int, default=40)
    parser.add_argument("--models", default="tabmoe,ft_transformer")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--extrapolate", default="", metavar="MODEL:EPOCHS",
                        help="fit MODEL for EPOCHS epochs only and scale its time to its default "
                        "max_epochs, or, when it early-stops, to n_iter_no_change + 1 epochs (a "
                        "lower bound; EPOCHS must not exceed n_iter_no_change), e.g. ft_transformer:5")
    args = parser.parse_args(argv)
    short = dict(item.split(":") for item in filter(None, args.extrapolate.split(",")))
    # a name that is no --models entry (exactly, "+" overrides included) would leave that
    # model to run its whole default fit, with nothing said (FT-Transformer: up to 200 epochs)
    if unknown := set(short) - set(args.models.split(",")):
        parser.error(f"--extrapolate {', '.join(sorted(unknown))}: not an entry of --models {args.models}")
    X, y = mixed_table(args.rows + 2000, args.columns)
    X_train, y_train, X_test, y_test = X[: args.rows], y[: args.rows], X[args.rows:], y[args.rows:]
    results = {}
    for model in args.models.split(","):
        name, *overrides = model.split("+")
        estimator = get_model(name).factory()  # the estimator as a user constructs it
        estimator.set_params(**{k: 0 for k in estimator.get_params() if k == "random_state"})
        estimator.set_params(**parse_params(",".join(overrides)))
        default_epochs = estimator.get_params().get("max_epochs")
        if model in short:
            estimator.set_params(max_epochs=int(short[model]))
        with limited_threads(args.threads), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            estimator.fit(X_train, y_train)
            seconds = time.perf_counter() - start
        epochs = getattr(estimator, "n_iter_", None)
        line = {"model": model, "rows": args.rows, "columns": args.columns, "threads": args.threads,
                "fit_seconds": round(seconds, 2), "epochs": epochs,
                "test_accuracy": float(np.mean(estimator.predict(X_test) == y_test))}
        if model in short:
            if epochs != int(short[model]):
                raise SystemExit(f"{model} stopped early after {epochs} epochs: its time cannot be scaled")
            stops_early = any("val_loss" in h for h in estimator.history_)
            # with early stopping, the fewest epochs a fit can run: the first, then patience
            # ("auto" waits at least its base, after a best at epoch 1)
            patience = estimator.get_params()["n_iter_no_change"]
            patience = AUTO_PATIENCE if patience == "auto" else patience
            fewest = patience + 1 if stops_early else default_epochs
            if fewest <= epochs:
                raise SystemExit(f"{model}: measure fewer than {fewest} epochs to bound its fit")
            line.update(measured_epochs=epochs, scaled_to_epochs=fewest,
                        fit_seconds=round(seconds * fewest / epochs, 2),
                        measured_seconds=round(seconds, 2), extrapolated=True,
                        bound="lower" if stops_early else "exact")
        results[model] = line
        print(json.dumps(line), flush=True)
    first = next(iter(results))
    ratios = {m: round(r["fit_seconds"] / results[first]["fit_seconds"], 2) for m, r in results.items()}
    summary = {"fit_time_ratio_to": first, "ratios": ratios}
    print(json.dumps(summary))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "a", encoding="utf8") as fh:
            for line in [*results.values(), summary]:
                fh.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
