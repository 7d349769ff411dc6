"""What an epoch of an ensemble (``n_members``) costs on the shipped defaults, one thread.

    python benchmarks/speed_ensemble.py [--rows 5000] [--columns 40] [--members 1,2,3] [--epochs 4] [--repeats 2]

On ``speed_defaults.py``'s seeded mixed table, the shipped defaults with ``n_members=M``
are fitted for ``--epochs`` epochs (no early stopping), the member counts alternating so a
slow spell of the machine hits each of them. Seconds per epoch are the median over a fit's
epochs after the first, then the median over ``--repeats``; ratios are to one member
(which runs no ensemble code). Prints one JSON line per M and a summary line.
(``benchmarks/ensemble.py`` measures the same for the paper's tiny network, where vmap's
one batched pass makes five members cost about 2.2x one.)
"""

from __future__ import annotations

import argparse
import json
import statistics

from speed_defaults import mixed_table

from tabmoe import TabularMoEClassifier
from tabmoe.bench import limited_threads


def epoch_seconds(X, y, members: int, epochs: int) -> float:
    clf = TabularMoEClassifier(
        n_members=members, max_epochs=epochs, early_stopping=False, random_state=0, device="cpu", n_jobs=1
    )
    clf.fit(X, y)
    return statistics.median(h["seconds"] for h in clf.history_[1:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--columns", type=int, default=40)
    parser.add_argument("--members", default="1,2,3")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if args.epochs < 2 or args.repeats < 1:
        parser.error("--epochs must be at least 2 and --repeats at least 1")
    X, y = mixed_table(args.rows, args.columns)
    sizes = [int(m) for m in args.members.split(",")]
    times: dict[int, list[float]] = {m: [] for m in sizes}
    with limited_threads(1):
        for _ in range(args.repeats):
            for m in sizes:
                times[m].append(epoch_seconds(X, y, m, args.epochs))
    single = statistics.median(times[1]) if 1 in sizes else None
    for m, values in times.items():
        seconds = statistics.median(values)
        line = {"members": m, "seconds_per_epoch": round(seconds, 3), "runs": [round(v, 3) for v in values]}
        if single:
            line["ratio_to_one_member"] = round(seconds / single, 2)
        print(json.dumps(line))
    print(json.dumps({"rows": args.rows, "columns": args.columns, "epochs": args.epochs, "repeats": args.repeats, "threads": 1}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
