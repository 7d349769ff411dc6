"""``benchmarks/research.py``'s arguments, checked before anything is fitted or written:
a bad one stops the command naming it (not a traceback, not hours into a run)."""

from __future__ import annotations

import argparse

from ood_variants import parse_variant as parse_params  # "a=1,b=x" -> {"a": 1, "b": "x"}

from tabmoe import TabularMoEClassifier
from tabmoe.bench.plan import parse_seed_list
from tabmoe.bench.suites import load_suite
from tabmoe.registry import get_model


def parse_items(text: str, flag: str) -> dict:
    """``"a=1,b=x"`` -> ``{"a": 1, "b": "x"}``, as :func:`ood_variants.parse_variant`, but an
    item without ``=`` (``d_model``, read as ``d_model=""``; the second half of a value split
    at its comma, ``categorical_features=[0,1]``) or a key given twice (the last won) is named."""
    keys = []
    for item in filter(None, text.split(",")):
        key, eq, _ = item.partition("=")
        if not eq or not key.strip():
            raise SystemExit(f"{flag}: {item!r} is not key=value (values are split at every comma)")
        keys.append(key.strip())
    if repeated := sorted({k for k in keys if keys.count(k) > 1}):
        raise SystemExit(f"{flag}: {repeated} given more than once")
    return parse_params(text)


def parse_variant(text: str) -> tuple[str, dict]:
    """``"name:a=1,b=2"`` -> ``("name", {...})``; a name with ``=`` in it (``d_model=64``, the
    name left out) is refused: it would run the defaults under that name."""
    name, _, params = text.partition(":")
    if not name or "=" in name:
        raise SystemExit(f"--variant needs NAME:params, got {text!r}")
    return name, parse_items(params, f"--variant {name}")


def seeds_arg(text: str) -> list[int]:
    """An argparse ``type`` for ``--seeds``, read as ``tabmoe-bench run`` reads it (``42``,
    ``42-51``, ``42,45-47``); argparse names a bad one."""
    try:
        return parse_seed_list(text)
    except ValueError as exc:  # "--seeds: 'x' is not an integer or a range like 0-4"
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--seeds: ")) from None


def seed_list(text: str) -> list[int]:
    try:
        return parse_seed_list(text)
    except ValueError as exc:  # "--seeds: 'x' is not an integer or a range like 0-4"
        raise SystemExit(str(exc)) from None


#: Research-only variant parameters, read by :func:`make_tabmoe`, not by the estimator.
RESEARCH_PARAMS = {"stop_on", "row_weight", "embedding_weight_decay", "start_from_epoch", "restore_best_weights",
                   "patience_rate", "adam_beta2", "lr_cosine", "prior_margin", "prior_bias",
                   "tie_heads", "impute_unknown", "separate_members", "tree_bins", "swap_rate", "null_key", "periodic", "borrow_unknown",
                   "soup_top", "soup_greedy"}


def model_takes(name: str, key: str, value) -> bool:
    """Whether registry model ``name``'s ``make`` takes ``key``: its names, not its
    ``get_params()``'s (a one-hot reference's ``make(C=0.1)`` sets ``estimator__C``, and
    ``make(estimator__C=0.1)`` is a TypeError). A bad value is left to the fit's checks.
    A constructor that takes any keyword (XGBoost's and LightGBM's ``**kwargs``) takes a
    misspelt name too, so the name must also be a parameter of the model as ``make`` builds
    it, bare or nested (``estimator__C`` for ``C``): ``max_dept`` is refused, and so is an
    alias such as XGBoost's ``eta`` (its parameter is ``learning_rate``)."""
    try:
        get_model(name).make(**{key: value})
    except TypeError as exc:
        return repr(key) not in str(exc)
    except Exception:  # a value the constructor refuses: the key is known
        return True
    params = get_model(name).make().get_params()
    return key in params or any(p.endswith(f"__{key}") for p in params)


def run_plan(args) -> tuple:
    """``run``'s suite, seeds, splits, base and variants, checked before anything is fitted or
    written: a bad argument stops the run naming it, not a traceback hours into it."""
    try:  # an unknown suite is a KeyError, a bad suite file a ValueError
        suite = load_suite(args.suite)
    except (KeyError, ValueError) as exc:
        raise SystemExit(f"--suite: {exc.args[0]}") from None
    try:
        model = get_model(args.model).make() if args.model else None
    except ValueError as exc:
        raise SystemExit(f"--model: {exc.args[0]}") from None
    seeds = seed_list(args.seeds)
    names = args.splits.split(",") if args.splits else [s.name for s in suite.splits]
    if unknown := [n for n in names if n not in {s.name for s in suite.splits}]:
        raise SystemExit(f"--splits: suite {suite.name!r} has no split {unknown}; splits are "
                         f"{[s.name for s in suite.splits]}")
    if args.threads < 1:
        raise SystemExit(f"--threads must be at least 1, got {args.threads}")
    base, variants = parse_items(args.base, "--base"), [parse_variant(v) for v in args.variant]
    if repeated := sorted({v for v, _ in variants if [w for w, _ in variants].count(v) > 1}):
        raise SystemExit(f"--variant: {repeated} named more than once (both would be fitted, one line kept)")
    known = set(TabularMoEClassifier().get_params()) | RESEARCH_PARAMS
    checked = [(f"--variant {v}", p) for v, p in variants] + ([] if model else [("--base", base)])
    for flag, params in checked:  # --base is tabmoe's, unused with --model
        if unknown := sorted(k for k in params if not (model_takes(args.model, k, params[k]) if model else k in known)):
            raise SystemExit(f"{flag}: unknown parameter(s) {unknown} of {args.model or 'tabmoe'}")
    return suite, seeds, names, base, variants
