"""Paired research study of tabmoe variants on a suite's real OOD splits.

    # run: every variant on every (split, seed); resumable (finished lines are skipped)
    python benchmarks/research.py run --study width --openml-cache ../shared/openml-cache \
        --seeds 0-2 --variant base: --variant wide:d_model=64,n_heads=4,ff_dim=128
    # read: each variant paired with --baseline on the same (split, seed)
    python benchmarks/research.py summary --study width --baseline base

Each (split, seed) is made exactly as ``tabmoe-bench run`` makes it (same ID sample, same
train / validation / ID-test / OOD-test rows). A variant is a set of
``TabularMoEClassifier`` parameters on top of ``--base`` (default: the estimator's own
defaults), with ``random_state = seed``; ``--model`` runs another registry model instead, at
its defaults plus the variant's parameters (a reference row, e.g. logistic regression). One JSON line per
(variant, split, seed) goes to ``benchmarks/results/research/<study>.jsonl``: ID-validation,
ID-test and OOD-test accuracy, fit seconds, epochs, and whether all OOD predictions are one
class. Decisions are made on the ID-validation column (docs/research.md); OOD is reported
beside it.

``run --unseen-check`` adds an ID-only check of how unseen categories are read (study 12):
every ID-validation row gets, in one categorical column drawn at random (seeded), a value
never seen at fit, and the fitted network predicts those rows with ``unknown="token"`` and
with ``"exclude"`` (``validation_unseen_token`` / ``_exclude``); ``unseen`` pairs the two.

``run --held-out-value`` adds study 52's ID-only check of unseen values that are real: one
(categorical column, value) a (split, seed), drawn by :func:`held_out_pick`, is taken out of
training (every training row holding it is dropped), each variant is fitted again on the
rest, and the ID-validation rows holding that value are scored with ``unknown="token"`` and
``"exclude"`` (``held_out_token`` / ``held_out_exclude``; ``held_out_rest``: the other
validation rows); ``held-out`` pairs the variants on them.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from held_out import held_out_pick, unseen_scores
from research_args import run_plan, seed_list
from research_models import (  # the variants' estimators, research.X for the tests and docs
    STOPPED,
    ErrorStoppedClassifier,
    ObjectiveStoppedClassifier,
    TrainerOptionsClassifier,
    label_error_loss,
    make_tabmoe,
    prior_log_loss,
    resolve_rules,
    trainer_extra,
)
from sklearn.metrics import log_loss

from tabmoe.bench import limited_threads
from tabmoe.bench._environment import cpu_model
from tabmoe.bench.report import DECIMALS
from tabmoe.registry import get_model
from tabmoe.tuning import set_random_states

RESULTS = Path(__file__).parent / "results" / "research"
PARTS = ("validation", "id_test", "ood_test")
__all__ = ["STOPPED", "ErrorStoppedClassifier", "ObjectiveStoppedClassifier", "TrainerOptionsClassifier",
           "label_error_loss", "make_tabmoe", "prior_log_loss", "resolve_rules", "trainer_extra", "main"]


def read_lines(path: Path, repair: bool = False) -> list[dict]:
    """The JSON lines of ``path``. A last line that does not parse and has no newline is a
    write cut short (a run killed mid-line): left out, said on stderr, and with ``repair``
    (before appending) cut from the file, whose last line then ends in a newline. Any other
    line that does not parse is named."""
    if not path.is_file():
        return []
    text, out = path.read_text(encoding="utf8"), []
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if number < len(lines) or text.endswith("\n"):
                raise SystemExit(f"{path}: line {number} is not JSON ({exc})") from None
            print(f"{path}: its last line is cut short (an interrupted write), left out"
                  f"{' and removed' if repair else ''}", file=sys.stderr)
            text = text[: len(text) - len(line)]
    if repair and text and not text.endswith("\n"):
        text += "\n"
    if repair and text != path.read_text(encoding="utf8"):
        path.write_text(text, encoding="utf8")
    return out


def study_lines(names: str) -> list[dict]:
    """The lines of the comma-separated studies ``names``; a study without a file is named."""
    lines = []
    for name in names.split(","):
        if not (path := RESULTS / f"{name}.jsonl").is_file():
            raise SystemExit(f"--study: no study {name!r} ({path} does not exist)")
        lines += read_lines(path)
    return lines


def fit_and_score(estimator, X, y, parts: dict) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator.fit(X, y)
        fit_seconds = time.perf_counter() - start
        out = {"fit_seconds": round(fit_seconds, 3)}
        for name, (X_part, y_part) in parts.items():
            pred = estimator.predict(X_part)
            out[name] = float(np.mean(pred == np.asarray(y_part)))
            for reading, other in getattr(estimator, "readings", lambda _: {})(X_part).items():  # study 55
                out[f"{name}_{reading}"] = float(np.mean(other == np.asarray(y_part)))
            if name == "validation":
                # None where a class absent from training appears (its probability is 0)
                known = bool(np.isin(np.asarray(y_part), estimator.classes_).all())
                proba = estimator.predict_proba(X_part) if known else None
                out["validation_log_loss"] = (
                    float(log_loss(y_part, proba, labels=estimator.classes_)) if known else None
                )
            if name == "ood_test":
                out["ood_single_class"] = bool(len(np.unique(pred)) == 1)
    out["epochs"] = getattr(estimator, "n_iter_", None)
    out["best_epoch"] = getattr(estimator, "best_epoch_", None)
    return out


def held_out_scores(config: dict, seed: int, X: pd.DataFrame, y, X_val: pd.DataFrame, y_val, pick) -> dict:
    """Fit the variant ``config`` on the training rows without ``pick``'s value (its table
    rules resolved on those rows); accuracy on the
    validation rows holding it, read as the UNKNOWN token and left out (the same network), and
    on the other validation rows."""
    column, value = pick

    def holds(frame: pd.DataFrame) -> np.ndarray:  # as held_out_pick counts: str of non-missing
        return (frame[column].astype(str).eq(value) & frame[column].notna()).to_numpy()

    has, val_has = holds(X), holds(X_val)
    X_fit, y_fit = X[~has], np.asarray(y)[~has]
    y_val = np.asarray(y_val)
    estimator = make_tabmoe(resolve_rules(config, len(X_fit), X.shape[1]), seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        estimator.fit(X_fit, y_fit)
        out = {"held_out_column": column, "held_out_value": value, "held_out_rows": int(val_has.sum()),
               "held_out_train_dropped": int(has.sum()),
               "held_out_fit_seconds": round(time.perf_counter() - start, 3)}
        for mode in ("token", "exclude"):
            reader = copy.copy(estimator).set_params(unknown=mode)
            pred = reader.predict(X_val[val_has])
            out[f"held_out_{mode}"] = float(np.mean(pred == y_val[val_has]))
        for reading, pred in getattr(estimator, "readings", lambda _: {})(X_val[val_has]).items():
            out[f"held_out_{reading}"] = float(np.mean(pred == y_val[val_has]))
        out["held_out_rest"] = float(np.mean(estimator.predict(X_val[~val_has]) == y_val[~val_has]))
    return out


def check_variants(args, base: dict, variants: list) -> None:
    """Each variant's estimator built and its values checked as its fit would check them (the
    estimator's parameter constraints and cross-parameter checks, the research-only settings,
    the table rules on a stand-in table) before anything is fitted or written: a bad value
    stopped the run at that variant's first fit, after the variants before it were written."""
    for variant, params in variants:
        try:
            if args.model:
                estimator = get_model(args.model).make(**params)
            else:
                estimator = make_tabmoe(resolve_rules({**base, **params}, 1000, 10), 0)
            for check in ("_validate_params", "_check_params"):
                getattr(estimator, check, lambda: None)()
        except (SystemExit, ValueError, TypeError, ZeroDivisionError) as exc:
            raise SystemExit(f"--variant {variant}: {exc}") from None


def run(args) -> int:
    suite, seeds, names, base, variants = run_plan(args)
    check_variants(args, base, variants)
    out_path = Path(args.out or RESULTS / f"{args.study}.jsonl")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    lines = read_lines(out_path, repair=True)
    for variant, params in variants:  # a finished line is skipped: only if it is this variant's
        config = json.loads(json.dumps({"model": args.model, **params} if args.model else {**base, **params}))
        if other := next((r.get("params") for r in lines if r["variant"] == variant and r.get("params") != config), None):
            raise SystemExit(f"--variant {variant}: {out_path} has lines of {variant!r} with other parameters "
                             f"({other}, not {config}); name the variant otherwise")
    done = {(r["variant"], r["split"], r["seed"]) for r in lines}
    for seed in seeds:
        for name in names:
            todo = [(v, p) for v, p in variants if (v, name, seed) not in done]
            if not todo:
                continue
            definition = suite.split(name)
            if args.max_id_rows is not None:
                definition = dataclasses.replace(definition, max_id_rows=args.max_id_rows or None)
            split = definition.make(seed, openml_cache=args.openml_cache, download=args.download)
            X, y = split.features("train"), split.train[split.target]
            parts = {p: (split.features(p), split.parts[p][split.target])
                     for p in PARTS if p in split.parts and len(split.parts[p])}
            pick = held_out_pick(X, parts["validation"][0], seed) if args.held_out_value else None
            for variant, params in todo:
                if args.model:
                    # every random_state, nested too: a reference tree's is estimator__random_state
                    estimator = set_random_states(get_model(args.model).make(**params), seed)
                    config = {"model": args.model, **params}
                else:
                    config = {**base, **params}
                    resolved = resolve_rules(config, len(X), X.shape[1])
                    estimator = make_tabmoe(resolved, seed)
                with limited_threads(args.threads):
                    scores = fit_and_score(estimator, X, y, parts)
                    if args.unseen_check and hasattr(estimator, "tokenizer_") and "validation" in parts:
                        scores.update(unseen_scores(estimator, *parts["validation"], seed))
                    if pick is not None and not args.model:
                        scores.update(held_out_scores(config, seed, X, y, *parts["validation"], pick))
                line = {"study": args.study, "variant": variant, "split": name, "seed": seed,
                        "params": config, **scores, "n_train": len(X), "cpu": cpu_model()}
                with open(out_path, "a", encoding="utf8") as fh:
                    fh.write(json.dumps(line) + "\n")
                print(json.dumps(line), flush=True)
    return 0


def import_records(args) -> int:
    """Committed harness records (``tabmoe-bench run``) as study lines: the same rows and
    seeds, so a variant pairs with them without refitting (they are bit-reproducible:
    ``run`` on the fixed-budget parameters gave the records' accuracies)."""
    out_path = Path(args.out or RESULTS / f"{args.study}.jsonl")
    done = {(r["variant"], r["split"], r["seed"]) for r in read_lines(out_path, repair=True)}
    runs = Path(args.results) / "runs"
    if not runs.is_dir():
        raise SystemExit(f"--results: {args.results} is not a results folder of tabmoe-bench run (no {runs})")
    if not (paths := sorted(runs.glob(f"*/*/{args.model}/{args.protocol}-seed*.json"))):
        raise SystemExit(f"no records of --model {args.model!r} --protocol {args.protocol!r} in {runs}")
    lines = []
    for path in paths:
        record = json.loads(path.read_text())
        key = (args.variant, record["split"], record["seed"])
        if key in done:
            continue
        lines.append({
            "study": args.study, "variant": args.variant, "split": record["split"],
            "seed": record["seed"], "params": {"model": args.model, **record["params"]},
            "fit_seconds": record["fit_seconds"],
            **{p: record[p]["accuracy"] if record.get(p) else None for p in PARTS},
            "ood_single_class": None, "epochs": None, "n_train": record["n_rows"]["train"],
            "cpu": record.get("cpu"),
            "source": str(path.relative_to(Path(args.results).parent.parent.parent)),
        })
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "a", encoding="utf8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    print(f"{len(lines)} records imported into {out_path}")
    return 0


def wtl(diff: np.ndarray, tie: float = 0.005) -> str:
    """Wins / ties / losses of paired differences, "W/T/L" (a tie within ``tie``); "-" when
    no pair has the part (the paper simulation has no validation part: 0/0/0 read as counts)."""
    if not np.isfinite(diff).any():
        return "-"
    diff = np.round(diff, DECIMALS)  # 5 of 1,000 rows is 0.0050000000000000044 unrounded: a tie
    return f"{int((diff > tie).sum())}/{int((abs(diff) <= tie).sum())}/{int((diff < -tie).sum())}"


def one_class_cell(rows: dict, keys: list) -> str:
    """The one-class OOD column: fits of ``keys`` that predicted one class for every OOD row.
    Lines without the flag (imported harness records) are not counted as "no": "-" when no
    line has it, else the count and how many lines lack it."""
    known = [rows[k]["ood_single_class"] for k in keys if rows[k].get("ood_single_class") is not None]
    if not known:
        return "-"
    single = sum(bool(flag) for flag in known)
    return str(single) if len(known) == len(keys) else f"{single} ({len(keys) - len(known)} unknown)"


def over_pairs(values: np.ndarray, show=lambda v: f"{v.mean():.3f}") -> str:
    """``show(values)`` of the pairs that have the part: "-" where none has it (the paper
    simulation has no validation or ID-test part: "nan" was printed), " of k" after it where
    k of them have it, as the log-loss cell says."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return "-"
    return show(finite) + ("" if len(finite) == len(values) else f" of {len(finite)}")


def diff_sd(diff: np.ndarray) -> str:
    return f"{diff.mean():+.4f} ({diff.std():.3f})"


def no_pairs(variant: str, rows: dict) -> None:
    """Say on stderr that ``variant`` has no pair with the baseline: it was left out of the
    table without a word, as if it had not been run."""
    print(f"{variant}: left out, no pair with the baseline (none of its {len(rows)} (split, seed) "
          f"line(s) has a baseline line on the same rows; splits {sorted({k[0] for k in rows})})", file=sys.stderr)


def split_cells(keys: list, *diffs: np.ndarray, tie: float = 0.005):
    """Per split of ``keys`` ((split, seed) pairs): the split, its pairs and, for each of
    ``diffs``, the table cells "mean | W/T/L" of its paired differences."""
    for split in sorted({k[0] for k in keys}):
        on = [i for i, k in enumerate(keys) if k[0] == split]
        yield split, len(on), [f"{np.nanmean(d[on]) if np.isfinite(d[on]).any() else np.nan:+.4f} | {wtl(d[on], tie)}"
                               .replace("+nan", "-") for d in diffs]


def by_variant(lines: list) -> dict:
    """``{variant: {(split, seed): line}}``; a (variant, split, seed) given more than once (a
    file listed twice, a check refitted into a later study's file) keeps the last line read
    (files in ``--study`` order), and how many, and how many of them differ in accuracy, is
    said on stderr."""
    by: dict = {}
    repeated: dict = {}
    for r in lines:
        rows, key = by.setdefault(r["variant"], {}), (r["split"], r["seed"])
        if key in rows:
            n, differ = repeated.get(r["variant"], (0, 0))
            repeated[r["variant"]] = (n + 1, differ + any(rows[key].get(p) != r.get(p) for p in PARTS))
        rows[key] = r
    for variant, (n, differ) in repeated.items():
        print(f"{variant}: {n} (split, seed) line(s) repeated, the last read kept ({differ} with other "
              "accuracies)", file=sys.stderr)
    return by


def paired_keys(variant: str, rows: dict, base: dict, same: tuple = ("n_train",)) -> list:
    """The (split, seed) keys of ``rows`` that ``base`` has too, less those whose lines differ in
    a field of ``same`` (where both have it), named on stderr: a split drawn differently on
    another machine (vote-swing-bloc's KMeans, before its clusters were pinned) has other rows,
    and such a pair is not a pair (docs/research.md#vote-rows)."""
    keys = sorted(set(rows) & set(base))
    unpaired = [k for k in keys if any(None not in (rows[k].get(f), base[k].get(f)) and rows[k][f] != base[k][f]
                                       for f in same)]
    if unpaired:
        print(f"{variant}: {len(unpaired)} pair(s) left out, drawn on other rows than the baseline "
              f"({'training rows' if len(same) == 1 else 'training rows or held-out value'} differ): "
              f"{sorted({k[0] for k in unpaired})}", file=sys.stderr)
    return [k for k in keys if k not in unpaired]


def summary(args) -> int:
    lines = study_lines(args.study)
    if args.seeds:  # e.g. the deciding seeds of a study whose replication shares its file
        seeds = set(seed_list(args.seeds))
        lines = [r for r in lines if r["seed"] in seeds]
    by = by_variant(lines)
    base: dict = {}
    for name in reversed(args.baseline.split(",")):  # the first name listed wins a (split, seed)
        if name not in by:
            among = f" among the lines of seeds {args.seeds}" if args.seeds else ""
            raise SystemExit(f"no variant {name!r}{among} in {', '.join(args.study.split(','))}: "
                             f"its variants{among} are {sorted(by) or 'none'}")
        base.update(by[name])
    tie = args.tie
    header = ("| variant | n | val | id | ood | val diff (SD) | val W/T/L | ood diff (SD) | ood W/T/L "
              "| fit s (mean / max) | epochs ratio (median) | fit-s ratio (median) | val log-loss diff "
              "| one-class OOD |")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for variant, rows in by.items():
        keys = paired_keys(variant, rows, base)
        # Kept, but said: on another CPU kind the same fit rounds differently (a reseeded fit's
        # noise, not other rows; docs/reliability.md#determinism).
        other_cpu = [k for k in keys if None not in (rows[k].get("cpu"), base[k].get("cpu"))
                     and rows[k]["cpu"] != base[k]["cpu"]]
        if other_cpu:
            print(f"{variant}: {len(other_cpu)} pair(s) fitted on another CPU than the baseline's",
                  file=sys.stderr)
        if not keys:
            no_pairs(variant, rows)
            continue
        def get(src: dict, part: str, keys: list = keys) -> np.ndarray:
            return np.array([np.nan if src[k].get(part) is None else src[k][part] for k in keys])

        dv = get(rows, "validation") - get(base, "validation")
        do = get(rows, "ood_test") - get(base, "ood_test")
        fit = get(rows, "fit_seconds")
        epochs = get(rows, "epochs") / get(base, "epochs")  # paired, free of the machine's load
        epochs_ratio = f"{np.nanmedian(epochs):.2f}" if np.isfinite(epochs).any() else "-"
        fit_ratio = fit / get(base, "fit_seconds")
        fit_ratio = f"{np.nanmedian(fit_ratio):.2f}" if np.isfinite(fit_ratio).any() else "-"
        dl = get(rows, "validation_log_loss") - get(base, "validation_log_loss")  # study 30 on
        # None where a validation class is absent from training: over the pairs that have it, said
        dl, of = dl[np.isfinite(dl)], "" if np.isfinite(dl).all() else f" of {np.isfinite(dl).sum()}"
        log_loss_diff = f"{dl.mean():+.4f} ({int((dl < 0).sum())} lower{of})" if len(dl) else "-"
        print(
            f"| {variant} | {len(keys)} | {over_pairs(get(rows, 'validation'))} | {over_pairs(get(rows, 'id_test'))} "
            f"| {over_pairs(get(rows, 'ood_test'))} | {over_pairs(dv, diff_sd)} | {wtl(dv, tie)} "
            f"| {over_pairs(do, diff_sd)} | {wtl(do, tie)} | {over_pairs(fit, lambda v: f'{v.mean():.1f} / {v.max():.0f}')} "
            f"| {epochs_ratio} | {fit_ratio} | {log_loss_diff} | {one_class_cell(rows, keys)} |"
        )
        if args.by_split:
            for split, n, (v, o) in split_cells(keys, dv, do, tie=tie):
                print(f"|   {split} | {n} | | | | {v} | {o} | | | | | |")
    return 0


def unseen(args) -> int:
    lines = [r for r in study_lines(args.study) if "validation_unseen_token" in r]
    if not lines:
        raise SystemExit(f"no unseen-check lines in study {args.study!r} (run it with --unseen-check)")
    print("| variant | n | ID val | altered, token | altered, exclude | exclude - token (SD) | W/T/L |")
    print("|---|---|---|---|---|---|---|")
    for variant, rows in by_variant(lines).items():  # each variant's own fits, not pooled
        token = np.array([r["validation_unseen_token"] for r in rows.values()])
        exclude = np.array([r["validation_unseen_exclude"] for r in rows.values()])
        plain = np.array([r["validation"] for r in rows.values()])
        d = exclude - token
        print(f"| {variant} | {len(d)} | {plain.mean():.3f} | {token.mean():.3f} | {exclude.mean():.3f} "
              f"| {d.mean():+.4f} ({d.std():.3f}) | {wtl(d)} |")
    return 0


def held_out(args) -> int:
    """Study 52: each reading of a held-out value paired with ``--baseline``'s token reading
    on the same (split, seed) and value; the plain ID-validation difference beside it."""
    lines = study_lines(args.study)
    if args.seeds:
        seeds = set(seed_list(args.seeds))
        lines = [r for r in lines if r["seed"] in seeds]
    if without := sorted({(r["variant"], r["split"], r["seed"]) for r in lines if "held_out_token" not in r}):
        # a (split, seed) with no eligible value has no held-out fields: counted, not paired
        print(f"{len(without)} line(s) without a held-out value, left out: "
              f"{sorted({(v, s) for v, s, _ in without})}", file=sys.stderr)
    lines = [r for r in lines if "held_out_token" in r]
    by = by_variant(lines)
    if args.baseline not in by:
        raise SystemExit(f"no held-out lines of {args.baseline!r} in {sorted(by)}")
    base = by[args.baseline]
    print("| reading | n | held-out rows (mean) | held out | diff (SD) | W/T/L | rest diff | ID val diff (SD) "
          "| W/T/L | OOD diff, not used | W/T/L |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for variant, rows in by.items():
        # the held-out value is drawn from the training rows: on other rows, another value
        keys = paired_keys(variant, rows, base, ("n_train", "held_out_column", "held_out_value"))
        if not keys:
            no_pairs(variant, rows)
            continue
        def get(src: dict, part: str, keys: list = keys) -> np.ndarray:
            return np.array([src[k][part] for k in keys], dtype=float)

        # Study 55's readings of the same network: fields "held_out_<r>" with "validation_<r>"
        first = rows[keys[0]]
        others = sorted(k[11:] for k in first if k.startswith("validation_") and f"held_out_{k[11:]}" in first)
        for mode in ("token", "exclude", *others):
            if variant == args.baseline and mode == "token":
                continue
            read = mode in others  # a reading: its own validation and OOD fields
            dv = get(rows, f"validation_{mode}" if read else "validation") - get(base, "validation")
            ood = get(rows, f"ood_test_{mode}" if read else "ood_test") - get(base, "ood_test")
            if mode == "exclude":  # not read out of distribution
                ood[:] = np.nan
            rest = get(rows, "held_out_rest") - get(base, "held_out_rest")
            d = get(rows, f"held_out_{mode}") - get(base, "held_out_token")
            print(f"| {variant}, {mode} | {len(keys)} | {get(rows, 'held_out_rows').mean():.0f} "
                  f"| {get(rows, f'held_out_{mode}').mean():.3f} | {d.mean():+.4f} ({d.std():.3f}) | {wtl(d)} "
                  f"| {rest.mean():+.4f} | {dv.mean():+.4f} ({dv.std():.3f}) | {wtl(dv)} "
                  f"| {ood.mean():+.4f} | {wtl(ood)} |".replace("+nan", "-"))
            if args.by_split:
                for split, n, (h, v, o) in split_cells(keys, d, dv, ood):
                    print(f"|   {split} | {n} | | | {h} | | {v} | {o} |")
    return 0


def tie_width(text: str) -> float:
    """``--tie``: a number >= 0 (a negative one counted a pair as a win and a loss at once:
    56/0/58 of 70 pairs at -0.01; NaN counted none)."""
    value = float(text)
    if not 0 <= value < np.inf:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    out_help = "the study file (default: benchmarks/results/research/<study>.jsonl)"
    r = sub.add_parser("run", help="fit every variant on every (split, seed): a JSON line each, resumable")
    r.add_argument("--study", required=True, help="the study's name (its file: see --out)")
    r.add_argument("--variant", action="append", required=True,
                   help="NAME:key=value,... (repeatable): parameters on top of --base, values read as Python "
                        "literals where they parse, else strings, split at every comma; NAME: alone is --base")
    r.add_argument("--base", default="", help="key=value,...: tabmoe parameters shared by every variant "
                                                "(default: the estimator's defaults; not used with --model)")
    r.add_argument("--model", default=None,
                   help="a registry model instead of tabmoe: its defaults plus each variant's parameters")
    r.add_argument("--suite", default="openml-ood", help="the suite whose splits are made (default: %(default)s)")
    r.add_argument("--seeds", default="0", help="seeds, e.g. 0-2 or 0,3 (default: %(default)s)")
    r.add_argument("--splits", default=None, help="comma-separated split names (default: every split of the suite)")
    r.add_argument("--openml-cache", default=None, help="folder of cached OpenML data")
    r.add_argument("--download", action="store_true", help="fetch OpenML data the cache lacks (needs network)")
    r.add_argument("--threads", type=int, default=1, help="torch threads per fit (default: %(default)s)")
    r.add_argument("--out", default=None, help=out_help)
    r.add_argument("--max-id-rows", type=int, default=None,
                   help="override the suite's cap on ID rows (0: every ID row; study 30)")
    r.add_argument("--unseen-check", action="store_true", help="add the unseen-value check (study 12)")
    r.add_argument("--held-out-value", action="store_true",
                   help="add study 52's check: a categorical value taken out of training, scored on ID validation")
    baseline = "the variant(s) the others are paired with on the same (split, seed) and training rows; "
    s = sub.add_parser("summary", help="each variant paired with --baseline: mean difference (SD), W/T/L")
    s.add_argument("--study", required=True, help="study name(s), comma-separated")
    s.add_argument("--baseline", required=True, help=baseline + "comma-separated: the first listed wins a pair")
    s.add_argument("--by-split", action="store_true", help="also each split's mean paired differences")
    s.add_argument("--tie", type=tie_width, default=0.005, help="W/T/L: a tie is within this (study 30: 0.002)")
    s.add_argument("--seeds", default=None, help="only these seeds' pairs (e.g. 0-2)")
    u = sub.add_parser("unseen", help="the unseen-value check: 'exclude' paired with 'token'")
    u.add_argument("--study", required=True, help="study name(s), comma-separated")
    h = sub.add_parser("held-out", help="study 52's check: each reading paired with the baseline's token")
    h.add_argument("--study", required=True, help="study name(s), comma-separated")
    h.add_argument("--baseline", required=True, help=baseline + "its token reading is the reference")
    h.add_argument("--seeds", default=None, help="only these seeds' pairs (e.g. 0-2)")
    h.add_argument("--by-split", action="store_true", help="also each split's mean paired differences")
    i = sub.add_parser("import-records", help="committed harness records as study lines")
    i.add_argument("--study", required=True, help="the study the lines are added to")
    i.add_argument("--variant", required=True, help="the name the records get in the study")
    i.add_argument("--results", required=True, help="a results folder of tabmoe-bench run")
    i.add_argument("--model", required=True, help="the records' model (a registry name)")
    i.add_argument("--protocol", required=True, help="the records' protocol (e.g. fixed-budget)")
    i.add_argument("--out", default=None, help=out_help)
    args = parser.parse_args(argv)
    commands = {"run": run, "summary": summary, "unseen": unseen, "held-out": held_out, "import-records": import_records}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
