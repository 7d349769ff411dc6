"""Raw pytorch-tabnet at its defaults on the auto-mpg origin split: the small-data defect.

    python benchmarks/tabnet_raw_defaults.py [--seeds 42-51]

``--seeds`` takes what ``tabmoe-bench run --seeds`` takes: one seed, a range, or a comma list
(``42``, ``42-51``, ``42,45-47``).

With ``batch_size=1024`` and ``drop_last=True``, 245 training rows give ZERO optimisation
steps, and the returned model still predicts. Prints the step counts and the untrained
model's OOD accuracy per seed (compare ``TabNetClassifier``, whose batches are bounded by
the data, in the ``paper`` suite's auto-mpg-origin runs). Same encoding as every baseline.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch
from research_args import seeds_arg

from tabmoe.baselines import TableEncoder
from tabmoe.baselines.tabnet import StepCounter, quiet
from tabmoe.data import auto_mpg_origin_split


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=seeds_arg, default="42-51")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from pytorch_tabnet.tab_model import TabNetClassifier

    split = auto_mpg_origin_split()
    encoder = TableEncoder(categorical_features="all").fit(split.X_train)
    Z_train = encoder.transform(split.X_train).astype(np.float32)
    Z_test = encoder.transform(split.X_test).astype(np.float32)
    cardinalities = [int(c) for c in encoder.cardinalities_]
    steps, accuracy = [], []
    for seed in args.seeds:
        counter = StepCounter()
        clf = TabNetClassifier(
            seed=seed,
            verbose=0,
            device_name="cpu",
            cat_idxs=list(range(len(cardinalities))),
            cat_dims=cardinalities,
        )
        with quiet(0):
            clf.fit(Z_train, split.y_train.to_numpy(), callbacks=[counter])  # its defaults
        steps.append(counter.n_steps)
        accuracy.append(float(np.mean(clf.predict(Z_test) == split.y_test.to_numpy())))
    acc = np.array(accuracy)
    print(
        json.dumps(
            {
                "training_rows": len(Z_train),
                "steps_per_seed": steps,
                "ood_accuracy": acc.round(4).tolist(),
                "mean": round(float(acc.mean()), 4),
                "sd_population": round(float(acc.std()), 4),
            }
        )
    )


if __name__ == "__main__":
    main()
