"""How often the research rule passes a variant that changes nothing (a check, measured).

Studies 56-74 judge a variant on 140 pairs (14 splits x seeds 0-9) against the defaults'
``def56`` lines: a positive mean ID-validation difference, more wins than losses (ties within
0.005), and a positive mean on seeds 0-4 and on seeds 5-9 apart (study 58's form also asks
for at least +0.001); a pass is refitted on fresh seeds 10-14 and must show a positive mean
and more wins than losses there. Five variants passed the first stage and failed the second.

Under a variant with no effect, each pair's difference is as likely to have either sign (the
pair's two fits differ by noise alone), so flipping the signs of a study's observed
differences at random draws from that null (a sign-flip permutation test, with the study's
own spread, ties and split mix). For each variant judged on 140 pairs this prints the
observed mean, whether it passed, the one-sided p-value of its mean (the share of flips with
a mean at least as large) and the share of flips that pass each form of the rule; and, on
the fresh seeds' 70 pairs of the variants refitted there, the share that pass the
replication. Nothing is fitted: the committed records of ``results/research/`` are read.

    python benchmarks/rule_null_rate.py            # 10,000 sign flips a variant, seed 0
"""

from __future__ import annotations

import argparse

import numpy as np
import research

#: (study file, variant): every variant judged on the 140 pairs of seeds 0-9 against def56
#: (studies 56-72; 71's and 73's pairs are nearly all ties by construction), and the fresh
#: seeds' refits against init05
FIRST = [
    ("r56-embedding-init", "init125"), ("r56-embedding-init", "init25"), ("r58-objective-stopping", "obj"),
    ("r59-adaptive-patience", "ada"), ("r60-separate-members", "sep2"), ("r61-tree-bins", "tree64"),
    ("r61-tree-bins", "tree16"), ("r62-swap-noise", "swap05"), ("r62-swap-noise", "swap15"),
    ("r63-rice-scale", "rice05"), ("r63-rice-scale", "rice2"), ("r64-adam-beta2", "b99"),
    ("r64-adam-beta2", "b95"), ("r65-cosine", "cos100"), ("r65-cosine", "cos30"),
    ("r66-missing-exclude", "miss_out"), ("r67-null-key", "null"), ("r68-periodic", "plr001"),
    ("r68-periodic", "plr1"), ("r72-prior-bias", "bias_label"), ("r72-prior-bias", "bias_all"),
]
FRESH = [
    ("r57-embedding-init-fresh", "init25"), ("r69-init125-fresh", "init125"), ("r59-adaptive-patience", "ada"),
    ("r60-separate-members", "sep2"), ("r66-missing-exclude", "miss_out"),
]
TIE = 0.005


def paired(study: str, variant: str, base_study: str, base_variant: str, seeds: range) -> tuple[np.ndarray, np.ndarray]:
    """(ID-validation differences, their seeds) of ``variant`` minus ``base_variant`` on ``seeds``."""
    names = base_study if study == base_study else f"{base_study},{study}"
    lines = [r for r in research.study_lines(names) if r["seed"] in seeds]
    by = research.by_variant(lines)
    rows, base = by[variant], by[base_variant]
    keys = research.paired_keys(variant, rows, base)
    diff = np.array([rows[k]["validation"] - base[k]["validation"] for k in keys])
    return np.round(diff, research.DECIMALS), np.array([k[1] for k in keys])


def passes(diff: np.ndarray, seeds: np.ndarray, halves: bool, floor: float = 0.0) -> np.ndarray:
    """Whether each row of ``diff`` (draws x pairs) passes: mean above ``floor`` (and above 0),
    more wins than losses, and, with ``halves``, a positive mean on seeds 0-4 and 5-9 apart."""
    mean = diff.mean(-1)
    ok = (mean > 0) & (mean >= floor) & ((diff > TIE).sum(-1) > (diff < -TIE).sum(-1))
    if halves:
        low = seeds <= 4
        ok &= (diff[..., low].mean(-1) > 0) & (diff[..., ~low].mean(-1) > 0)
    return ok


def flips(diff: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` draws of ``diff`` with each pair's sign flipped at random (n x pairs)."""
    return diff * rng.choice([-1.0, 1.0], size=(n, len(diff)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| variant (seeds 0-9, 140 pairs) | mean | p (mean) | passes: positive mean | >= +0.001 "
          "| null passes: positive mean | >= +0.001 |")
    print("|---|---|---|---|---|---|---|")
    first_rates = []
    for study, variant in FIRST:
        diff, seeds = paired(study, variant, "r56-embedding-init", "def56", range(10))
        null = flips(diff, args.draws, rng)
        rate, rate_floor = passes(null, seeds, True).mean(), passes(null, seeds, True, 0.001).mean()
        first_rates.append((rate, rate_floor))
        p = (null.mean(-1) >= diff.mean() - 1e-12).mean()
        yes = ["yes" if passes(diff, seeds, True, floor) else "no" for floor in (0.0, 0.001)]
        print(f"| {variant} ({study}) | {diff.mean():+.4f} | {p:.3f} | {yes[0]} | {yes[1]} "
              f"| {rate:.3f} | {rate_floor:.3f} |")
    print(f"| mean over the {len(FIRST)} | | | | | {np.mean([r for r, _ in first_rates]):.3f} "
          f"| {np.mean([r for _, r in first_rates]):.3f} |")
    print()
    print("| variant (fresh seeds 10-14, 70 pairs) | mean | passes | p (mean) | null passes |")
    print("|---|---|---|---|---|")
    fresh_rates = []
    for study, variant in FRESH:
        diff, seeds = paired(study, variant, "r57-embedding-init-fresh", "init05", range(10, 15))
        null = flips(diff, args.draws, rng)
        rate = passes(null, seeds, False).mean()
        fresh_rates.append(rate)
        p = (null.mean(-1) >= diff.mean() - 1e-12).mean()
        print(f"| {variant} ({study}) | {diff.mean():+.4f} | {'yes' if passes(diff, seeds, False) else 'no'} "
              f"| {p:.3f} | {rate:.3f} |")
    print(f"| mean over the {len(FRESH)} | | | | {np.mean(fresh_rates):.3f} |")
    for form, i in (("a positive mean", 0), ("+0.001", 1)):
        both = np.mean([r[i] for r in first_rates]) * np.mean(fresh_rates)
        print(f"A variant with no effect passes both stages ({form} on seeds 0-9) at about {both:.3f} "
              "(the two rates' product: the stages use other seeds, so their draws are independent).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
