"""Defaults on scikit-learn's small tables: 5-fold CV accuracy of every model as constructed.

    python benchmarks/sklearn_datasets.py [--models tabmoe,logistic_regression,...] \
        [--datasets breast_cancer,wine,iris,digits] [--threads 1] \
        [--params d_model=32,n_bins=20 --label NAME]

``--params`` sets parameters on every model that has them (a research variant; the label
names it in the results, and each line records the parameters its model took); a parameter
none of ``--models`` has is refused before any fit; without it every model is exactly as
constructed.

Each model is the registry's estimator exactly as a user constructs it (only
``random_state`` set), fitted on the DataFrame of ``sklearn.datasets.load_<name>(as_frame=True)``
in a stratified 5-fold cross-validation (shuffled, seed 0; the same folds for every model).
Prints one JSON line per (dataset, model) and a Markdown table of mean accuracy (SD over
folds) and fit seconds; appends the lines to
``benchmarks/results/sklearn-datasets/cv.jsonl`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from ood_variants import parse_variant as parse_params  # "a=1,b=x" -> {"a": 1, "b": "x"}
from sklearn import datasets
from sklearn.model_selection import StratifiedKFold

from tabmoe.bench import limited_threads
from tabmoe.registry import get_model

OUT = Path(__file__).parent / "results" / "sklearn-datasets" / "cv.jsonl"
DATASETS = ("breast_cancer", "wine", "iris", "digits")
MODELS = ("tabmoe", "logistic_regression", "hist_gradient_boosting")


def load(name: str):
    bunch = getattr(datasets, f"load_{name}")(as_frame=True)
    return bunch.data, bunch.target.to_numpy()


def applied(model: str, params: dict) -> dict:
    """The part of ``params`` that ``model``'s estimator has (the rest is not set on it)."""
    own = get_model(model).factory().get_params()
    return {k: v for k, v in params.items() if k in own}


def cross_validate(model: str, X, y, folds: int = 5, params: dict | None = None) -> dict:
    accuracies, seconds = [], []
    splitter = StratifiedKFold(folds, shuffle=True, random_state=0)
    for fold, (train, test) in enumerate(splitter.split(X, y)):
        estimator = get_model(model).factory()  # as a user constructs it
        own = estimator.get_params()
        estimator.set_params(**applied(model, params or {}))
        estimator.set_params(**{k: fold for k in own if k == "random_state"})
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # predict's too: e.g. the values a test fold alone holds
            estimator.fit(X.iloc[train], y[train])
            seconds.append(time.perf_counter() - start)
            accuracies.append(float(np.mean(estimator.predict(X.iloc[test]) == y[test])))
    return {
        "accuracy": float(np.mean(accuracies)),
        "accuracy_sd": float(np.std(accuracies)),
        "folds": accuracies,
        "fit_seconds": float(np.mean(seconds)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--params", default="", help="k=v,... set on every model that has k")
    parser.add_argument(
        "--label", default="", help="free text stored with each line (e.g. the git revision)"
    )
    args = parser.parse_args(argv)
    params = parse_params(args.params)
    models = args.models.split(",")
    # a key no model has (a typo) would be dropped from every fit, and the defaults' figures
    # recorded under the variant's params and label
    if unknown := set(params) - {k for m in models for k in applied(m, params)}:
        parser.error(f"--params {', '.join(sorted(unknown))}: not a parameter of {', '.join(models)}")
    rows = []
    for name in args.datasets.split(","):
        X, y = load(name)
        for model in models:
            with limited_threads(args.threads):
                result = cross_validate(model, X, y, params=params)
            line = {
                "dataset": name,
                "model": model,
                "label": args.label,
                "params": applied(model, params),  # what this model took of --params
                **result,
            }
            rows.append(line)
            print(json.dumps(line), flush=True)
            if args.out:
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                with open(args.out, "a", encoding="utf8") as fh:
                    fh.write(json.dumps(line) + "\n")
    print("\n| dataset | model | accuracy (SD) | fit s |\n|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['dataset']} | {r['model']} | {r['accuracy']:.3f} ({r['accuracy_sd']:.3f}) | {r['fit_seconds']:.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
