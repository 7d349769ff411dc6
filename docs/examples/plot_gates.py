"""The MoE view on auto-mpg: writes docs/img/gates.png and prints the numbers as JSON.

    python docs/examples/plot_gates.py [--out docs/img/gates.png] [--seed 42]

Fits two models on the paper's auto-mpg origin split (train: US cars): the paper's
configuration, and the same with ``block="attention"`` (attention + linear readout, whose
logits are an exact sum of per-column contributions). Offline, about 20-40 s on one core.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from tabmoe import TabularMoEClassifier, paper_config  # noqa: E402
from tabmoe.data import auto_mpg_origin_split  # noqa: E402

CLASS_NAMES = {0: "low mpg", 1: "mid mpg", 2: "high mpg"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "img" / "gates.png"))
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    split = auto_mpg_origin_split()
    paper = TabularMoEClassifier(**paper_config(), random_state=args.seed, device="cpu")
    paper.fit(split.X_train, split.y_train)
    linear = TabularMoEClassifier(**{**paper_config(), "block": "attention"}, random_state=args.seed, device="cpu")
    linear.fit(split.X_train, split.y_train)

    e_train = paper.explain(split.X_train)
    e_test = paper.explain(split.X_test)
    e_lin = linear.explain(split.X_test)
    columns = list(e_train.gates.columns)
    head_means = e_train.head_gates.mean().unstack("column")[columns]  # (H, L)
    contrib = e_lin.contributions.mean().unstack("column")[columns]  # (C, L)

    fig, axes = plt.subplots(1, 3, figsize=(17, 4.6), gridspec_kw={"width_ratios": [1.1, 1.1, 1.1]})
    ax = axes[0]
    im = ax.imshow(head_means.to_numpy(), cmap="viridis", vmin=0)
    ax.set_xticks(range(len(columns)), columns, rotation=40, ha="right")
    ax.set_yticks(range(len(head_means)), [f"head {h}" for h in head_means.index])
    ax.set_title("Label gates per head\n(paper model, mean over US training cars)")
    fig.colorbar(im, ax=ax, shrink=0.8)

    ax = axes[1]
    ax.boxplot(
        [e_test.gates[c] for c in columns], tick_labels=columns, showfliers=False,
        medianprops={"color": "black"},
    )
    ax.plot(range(1, len(columns) + 1), e_train.gates.mean(), "o", color="C3", label="mean, US (train)")
    ax.plot(range(1, len(columns) + 1), e_test.gates.mean(), "s", color="C2", label="mean, non-US (OOD)")
    ax.tick_params(axis="x", rotation=40)
    ax.set_ylabel("head-averaged gate")
    ax.set_title("Per-car gates on non-US cars (paper model)\nboxes: spread over cars")
    ax.legend(fontsize=8)

    ax = axes[2]
    lim = float(np.abs(contrib.to_numpy()).max())
    im = ax.imshow(contrib.to_numpy(), cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.set_xticks(range(len(columns)), columns, rotation=40, ha="right")
    ax.set_yticks(range(len(contrib)), [CLASS_NAMES.get(c, str(c)) for c in contrib.index])
    ax.set_title('Mean contribution to each class logit\n(block="attention", non-US cars)')
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)

    summed = e_lin.contributions.T.groupby(level="class").sum().T + e_lin.bias
    print(json.dumps({
        "out": os.path.relpath(out.resolve(), Path(__file__).resolve().parents[2]),
        "seed": args.seed,
        "ood_accuracy": {"paper": paper.score(split.X_test, split.y_test),
                         "attention_block": linear.score(split.X_test, split.y_test)},
        "mean_gates_train": e_train.gates.mean().round(3).to_dict(),
        "mean_gates_ood": e_test.gates.mean().round(3).to_dict(),
        "feature_importances": dict(zip(split.X_train.columns, paper.feature_importances_.round(3).tolist(), strict=True)),
        "mean_contributions_attention_block": contrib.round(3).to_dict(orient="index"),
        "contributions_plus_bias_minus_logits_max": float(np.abs(summed - e_lin.logits).to_numpy().max()),
    }, default=str, indent=1))


if __name__ == "__main__":
    main()
