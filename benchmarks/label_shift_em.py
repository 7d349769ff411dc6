"""Does moving predictions to the OOD rows' own class balance (EM) help on openml-ood?

    python benchmarks/label_shift_em.py --openml-cache ../shared/openml-cache --seeds 0-2 \
        [--splits a,b] [--models tabmoe,logistic_regression] [--out FILE]

For every split and seed (made exactly as ``tabmoe-bench run`` makes them) each model is
fitted as a user constructs it (the ``defaults`` protocol: the class, not the registry's
``make()``) with ``random_state=seed`` on the training rows, one
thread. Its ``predict_proba`` on the OOD test rows, which needs no labels, goes through
:func:`tabmoe.data.label_shift.em_label_shift` with the training rows' class balance as
the source prior; the line records OOD accuracy before and after, the estimated and the
true OOD class balance, and whether every OOD row got one class. The same is done on the
ID test rows as a control (their balance is the training one's, so EM should move little).
This uses the OOD rows' features, as the ``unlabeled-target`` protocol allows; it chooses
nothing. Appends JSON lines to ``--out`` (default
``benchmarks/results/openml-ood/label_shift_em.jsonl``) and prints a summary;
``--summary-only`` prints the summary of ``--out`` alone (no fit, no ``--openml-cache``).
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np
from research import wtl  # rounded: a difference of exactly the tie width is a tie

from tabmoe.bench import limited_threads
from tabmoe.bench.plan import parse_seed_list
from tabmoe.bench.suites import load_suite
from tabmoe.data.label_shift import em_label_shift
from tabmoe.registry import get_model

OUT = Path(__file__).parent / "results" / "openml-ood" / "label_shift_em.jsonl"


def scores(estimator, X, y, source_prior: np.ndarray) -> dict:
    proba = estimator.predict_proba(X)
    est = em_label_shift(proba, source_prior)
    classes, y = estimator.classes_, np.asarray(y)
    plain, moved = classes[proba.argmax(1)], classes[est.proba.argmax(1)]
    return {"accuracy": float(np.mean(plain == y)), "accuracy_em": float(np.mean(moved == y)),
            "prior_true": [float(np.mean(y == c)) for c in classes],
            "prior_em": [round(float(p), 6) for p in est.prior], "em_iterations": est.n_iter,
            "single_class": bool(len(np.unique(plain)) == 1),
            "single_class_em": bool(len(np.unique(moved)) == 1)}


def summary(lines: list[dict]) -> None:
    for model in sorted({line["model"] for line in lines}):
        rows = [line for line in lines if line["model"] == model]
        for part in ("ood_test", "id_test"):
            diff = np.array([r[part]["accuracy_em"] - r[part]["accuracy"] for r in rows])
            single = sum(r[part]["single_class"] for r in rows), sum(r[part]["single_class_em"] for r in rows)
            print(f"{model:20s} {part:8s} n={len(rows)} accuracy "
                  f"{np.mean([r[part]['accuracy'] for r in rows]):.4f} -> "
                  f"{np.mean([r[part]['accuracy_em'] for r in rows]):.4f} "
                  f"(diff {diff.mean():+.4f}, SD {diff.std(ddof=1) if len(diff) > 1 else 0:.4f}, "
                  f"W/T/L {wtl(diff)}); one-class {single[0]} -> {single[1]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openml-cache", help="required unless --summary-only")
    parser.add_argument("--seeds", default="0-2")
    parser.add_argument("--splits", default="")
    parser.add_argument("--models", default="tabmoe,logistic_regression")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summary-only", action="store_true", help="print the summary of --out")
    args = parser.parse_args(argv)
    if not args.summary_only and not args.openml_cache:
        parser.error("--openml-cache is required to fit (not with --summary-only)")
    done = [json.loads(line) for line in args.out.read_text().splitlines()] if args.out.is_file() else []
    if not args.summary_only:
        suite = load_suite("openml-ood")
        names = args.splits.split(",") if args.splits else [s.name for s in suite.splits]
        finished = {(d["split"], d["seed"], d["model"]) for d in done}
        for seed in parse_seed_list(args.seeds):
            for name in names:
                models = [m for m in args.models.split(",") if (name, seed, m) not in finished]
                if not models:
                    continue
                split = suite.split(name).make(seed, openml_cache=args.openml_cache)
                X, y = split.features("train"), np.asarray(split.train[split.target])
                for model in models:
                    estimator = get_model(model).factory()
                    estimator.set_params(**{k: seed for k in estimator.get_params() if k == "random_state"})
                    with limited_threads(1), warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        estimator.fit(X, y)
                        source = np.array([np.mean(y == c) for c in estimator.classes_])
                        line = {"split": name, "seed": seed, "model": model,
                                **{part: scores(estimator, split.features(part), split.parts[part][split.target], source)
                                   for part in ("ood_test", "id_test")}}
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    with open(args.out, "a", encoding="utf8") as fh:
                        fh.write(json.dumps(line) + "\n")
                    done.append(line)
                    print(json.dumps({k: line[k] for k in ("split", "seed", "model")}
                                     | {"ood": [line["ood_test"]["accuracy"], line["ood_test"]["accuracy_em"]]}),
                          flush=True)
    summary(done)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
