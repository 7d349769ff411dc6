"""How often ``fit``'s plateau warning fires off the suite, and whether its advice helps.

    python benchmarks/plateau_warning.py [--shard 0/2] [--tables A,B] [--out FILE]
    python benchmarks/plateau_warning.py --summary        # from the committed lines

R's tables as ``r_tables.py`` takes them (its rule, its 3 stratified folds, ``random_state`` =
the fold): ``TabularMoEClassifier()`` as a user constructs it is fitted on every fold,
recording whether ``fit`` warned that early stopping ended it less than 5% below the class
prior's validation loss (``ConvergenceWarning``, tabmoe/nn/_plateau.py), its epochs and
its test accuracy. Each fold that warned is fitted again with the warning's advice,
``n_iter_no_change=100``, and its accuracy recorded beside. One JSON line per table,
appended to ``benchmarks/results/r-tables/plateau.jsonl`` (``--out``), tables that file
holds skipped; ``--shard i/n`` takes every n-th table from the i-th (two processes).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from r_tables import FOLDS, TIE, prepared, r_datasets, read_lines, record, tasks
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold

OUT = Path(__file__).parent / "results" / "r-tables" / "plateau.jsonl"
PATIENCE = 100


def fit_fold(X, y, train, test, fold: int, **params) -> dict:
    """One default fit (``params`` on top): accuracy, epochs, seconds, whether it warned."""
    from tabmoe import TabularMoEClassifier

    model = TabularMoEClassifier(random_state=fold, **params)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X.iloc[train], y[train])
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(model.predict(X.iloc[test]) == y[test]))
    warned = any(w.category is ConvergenceWarning and "early stopping ended" in str(w.message) for w in caught)
    return {"accuracy": accuracy, "epochs": model.n_iter_, "best_epoch": model.best_epoch_,
            "seconds": round(seconds, 2), "warned": warned}


def table_line(table: str, target: str, X, y) -> dict:
    folds = []
    splitter = StratifiedKFold(FOLDS, shuffle=True, random_state=0)  # r_tables.py's folds
    for fold, (train, test) in enumerate(splitter.split(X, y)):
        try:
            line = fit_fold(X, y, train, test, fold)
            if line["warned"]:
                longer = fit_fold(X, y, train, test, fold, n_iter_no_change=PATIENCE)
                line["patience_100"] = {k: longer[k] for k in ("accuracy", "epochs", "best_epoch", "seconds", "warned")}
        except Exception as error:  # a finding: recorded, the other fits go on
            line = {"error": f"{type(error).__name__}: {error}"[:300]}
        folds.append(line)
    return {"table": table, "target": target, "rows": len(X), "columns": X.shape[1], "folds": folds}


def summary(lines: list[dict]) -> str:
    fits = [f for line in lines for f in line["folds"] if "error" not in f]
    warned = [(line["table"], f) for line in lines for f in line["folds"] if f.get("warned")]
    out = [f"{len(lines)} tables, {len(fits)} fits; {len(warned)} warned "
           f"({len({t for t, _ in warned})} tables)"]
    if warned:
        diffs = np.array([f["patience_100"]["accuracy"] - f["accuracy"] for _, f in warned])
        wins, losses = int((diffs > TIE).sum()), int((diffs < -TIE).sum())
        out.append(f"warned fits: accuracy {np.mean([f['accuracy'] for _, f in warned]):.3f} -> "
                   f"{np.mean([f['patience_100']['accuracy'] for _, f in warned]):.3f} with "
                   f"n_iter_no_change={PATIENCE} (mean {diffs.mean():+.4f}, W/T/L "
                   f"{wins}/{len(diffs) - wins - losses}/{losses}); their epochs: mean "
                   f"{np.mean([f['patience_100']['epochs'] for _, f in warned]):.0f} (a patience of {PATIENCE} "
                   f"runs to max_epochs, so none stops early or warns)")
        for table, f in warned:
            out.append(f"  {table}: {f['accuracy']:.3f} (epoch {f['best_epoch']} of {f['epochs']}) -> "
                       f"{f['patience_100']['accuracy']:.3f} (epoch {f['patience_100']['best_epoch']} of "
                       f"{f['patience_100']['epochs']})")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="", help="only these tables (comma-separated)")
    parser.add_argument("--shard", default="0/1", help="i/n: every n-th table from the i-th")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--summary", action="store_true", help="print the summary of --out; fit nothing")
    args = parser.parse_args(argv)
    index, _, count = args.shard.partition("/")
    if not (index.isdigit() and count.isdigit() and int(index) < int(count)):
        parser.error(f"--shard must be i/n with 0 <= i < n, got {args.shard!r}")
    out = Path(args.out)
    lines = read_lines(out)
    if not args.summary:
        from tabmoe.bench import limited_threads

        have = {line["table"] for line in lines}
        wanted = set(args.tables.split(",")) if args.tables else None
        for k, (table, target, frame) in enumerate(tasks(r_datasets(parser))):
            if k % int(count) != int(index) or table in have or (wanted is not None and table not in wanted):
                continue
            X, y = prepared(frame, target)
            with limited_threads(args.threads):
                line = table_line(table, target, X, y)
            lines.append(line)
            record(line, out)
    print(summary(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
