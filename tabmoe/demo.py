"""Offline demo: the paper's model vs the paper's logistic regression on its simulation.

    python -m tabmoe.demo [--seed 4951] [--epochs 60]

The data are generated (docs/paper.md section 3, config 5/0.9/0), so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import time


def _int_in(low: int, high: int | None = None):
    """An argparse type: an integer in [low, high] (no upper bound if ``high`` is None)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"in [{low}, {high}]"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


def _seed(text: str) -> int:
    """--seed's type: numpy's seed range, read only when --seed is given (``--help`` loads no
    pandas, scikit-learn or torch: they load after the arguments parse)."""
    from .data._spec import MAX_SEED

    return _int_in(0, MAX_SEED)(text)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tabmoe.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--seed",
        type=_seed,
        default=4951,
        help="simulation seed in [0, 2**32) (default: %(default)s, the authors' first seed)",
    )
    parser.add_argument(
        "--epochs",
        type=_int_in(1),
        default=60,
        help="training epochs (default: %(default)s; the paper: 200; 20 is too few to leave "
             "chance level)",
    )
    args = parser.parse_args(argv)
    from . import TabularMoEClassifier, paper_config
    from .baselines.reference import logistic_regression
    from .data import correlation_shift_simulation

    split = correlation_shift_simulation(5, 0.9, 0.0, args.seed)
    print(f"simulation 5/0.9/0 seed {args.seed}: {len(split.train)} train rows, "
          f"{len(split.test)} shifted test rows, {split.X_train.shape[1]} features")
    start = time.perf_counter()
    clf = TabularMoEClassifier(**{**paper_config(), "max_epochs": args.epochs},
                               random_state=0, verbose=1)
    clf.fit(split.X_train, split.y_train)
    print(f"tabmoe (paper config, {args.epochs} epochs): OOD accuracy "
          f"{clf.score(split.X_test, split.y_test):.4f}  ({time.perf_counter() - start:.1f} s)")
    # The paper's: one-hot with each column's first level dropped, LogisticRegression(max_iter=2000)
    lr = logistic_regression(categorical_features="all").fit(split.X_train, split.y_train)
    print(f"logistic regression (the paper's):     OOD accuracy {lr.score(split.X_test, split.y_test):.4f}")


if __name__ == "__main__":
    main()
