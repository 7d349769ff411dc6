"""The estimators of ``benchmarks/research.py``'s variants: the research-only rules and
settings a ``--variant`` may name on top of ``TabularMoEClassifier``'s parameters (moved out of
research.py, which imports them from here)."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from borrow_unknown import BorrowedUnknownClassifier
from impute_unknown import ImputedUnknownClassifier
from null_key import NullKeyClassifier
from periodic import PeriodicClassifier
from prior_bias import PRIOR_BIAS, PriorBiasClassifier
from research_args import RESEARCH_PARAMS
from row_scoring import RowScoredClassifier
from separate_members import SeparateMembersClassifier
from swap_noise import SwapNoiseClassifier
from tied_heads import TIE_HEADS, TiedHeadsClassifier
from tree_bins import TreeBinsClassifier

from tabmoe import TabularMoEClassifier
from tabmoe._paper_config import AUTO_PATIENCE, AUTO_VALIDATION_FRACTION, AUTO_VALIDATION_ROWS
from tabmoe.nn._base import validation_split
from tabmoe.nn._plateau import prior_log_loss


def resolve_rules(params: dict, n_rows: int, n_columns: int) -> dict:
    """Research-only rules that depend on the table, resolved to plain parameters:

    * ``batch_size="rows/D:LO:HI"``: ``clip(n_rows // D, LO, HI)`` rows per batch;
    * ``feature_loss_weight="share:S"``: the label gets share S of the loss, the L - 1
      features share the rest, i.e. weight ``(1 - S) / (S * (L - 1))`` per feature;
    * ``validation_fraction="floor:P"``: study 29's hold-out (10% of the rows, at most 100)
      but never fewer than a share P of the rows (study 30), as a number of rows;
    * ``n_bins="rice:F"``: F times the Rice rule's bins, ``max(2, round(F * 2 n^(1/3)))`` for
      the ``n`` rows given to fit (``"rice:1"`` is ``n_bins="auto"``; study 63);
    * ``n_iter_no_change="steps:S"`` / ``max_epochs="steps:S"``: at least S optimisation steps,
      ``max(default, ceil(S / steps an epoch))`` epochs, the steps an epoch being the defaults'
      (:func:`auto_steps_per_epoch`; study 73);
    * ``stop_on="error"`` / ``"objective"`` is read by :func:`make_tabmoe` (studies 46, 58).
    """
    out = dict(params)
    for key in ("n_iter_no_change", "max_epochs"):
        rule = out.get(key)
        if isinstance(rule, str) and rule.startswith("steps:"):
            steps = int(rule[6:])
            if steps < 1:
                raise ValueError(f"{key}={rule!r}: the steps must be at least 1")
            # study 73's base: the fixed patience of its day (10) and the epoch cap (100)
            default = AUTO_PATIENCE if key == "n_iter_no_change" else TabularMoEClassifier().get_params()[key]
            out[key] = max(default, math.ceil(steps / auto_steps_per_epoch(n_rows, params)))
    rule = out.get("n_bins")
    if isinstance(rule, str) and rule.startswith("rice:"):
        factor = float(rule[5:])
        if not factor > 0:  # (a factor of 0 or below was 2 bins, said nothing)
            raise ValueError(f"n_bins={rule!r}: the factor must be above 0")
        out["n_bins"] = max(2, round(factor * 2 * n_rows ** (1 / 3)))
    rule = out.get("batch_size")
    if isinstance(rule, str) and rule.startswith("rows/"):
        d, lo, hi = (int(x) for x in rule[5:].split(":"))
        out["batch_size"] = int(np.clip(n_rows // d, lo, hi))
    rule = out.get("feature_loss_weight")
    if isinstance(rule, str) and rule.startswith("share:"):
        share = float(rule[6:])
        out["feature_loss_weight"] = (1 - share) / (share * max(1, n_columns))
    rule = out.get("validation_fraction")
    if isinstance(rule, str) and rule.startswith("floor:"):
        share = int(np.ceil(AUTO_VALIDATION_FRACTION * n_rows))
        floor = int(np.ceil(float(rule[6:]) * n_rows))
        out["validation_fraction"] = min(share, max(AUTO_VALIDATION_ROWS, floor))
    return out


def auto_steps_per_epoch(n_rows: int, params: dict) -> int:
    """Optimisation steps an epoch of an early-stopped fit on ``n_rows`` rows with the defaults'
    ``validation_fraction="auto"`` hold-out and ``batch_size="auto"``, by the estimator's own
    rules (``validation_split``, ``_rows_per_batch``); other settings of either are refused."""
    for key in ("validation_fraction", "batch_size"):
        if params.get(key, "auto") != "auto":
            raise ValueError(f"a steps rule counts the defaults' steps: {key} must be 'auto', got {params[key]!r}")
    n_train = len(validation_split(np.zeros(n_rows, dtype=np.int64), "auto", seed=0)[0])
    return math.ceil(n_train / TabularMoEClassifier()._rows_per_batch(n_train, 2, "leave_one_out"))


def label_error_loss(model, batch: dict) -> tuple:
    """Study 46's early-stopping score, in the trainer's ``(sum, weight)`` protocol: the
    label's error rate on the hold-out, plus 0.01 x its log loss to order epochs of equal
    accuracy (one row of a 100-row hold-out is 0.01; the log loss moves by far less than 1
    between epochs). Rows whose label token is not a class are skipped, as ``label_loss``."""
    tokens = batch["tokens"].long()
    logits = model.label_logits(tokens, batch.get("attend"), batch.get("fraction"))
    target = torch.searchsorted(model.label_ids, tokens[:, -1].contiguous()).clamp_max(len(model.label_ids) - 1)
    valid = model.label_ids[target] == tokens[:, -1]
    nll = F.cross_entropy(logits.float(), target, reduction="none")
    wrong = (logits.argmax(-1) != target).float()
    w = batch["weight"] * valid
    return ((wrong + 0.01 * nll) * w).sum(), w.sum()


class ErrorStoppedClassifier(TabularMoEClassifier):
    """Research-only (study 46): early stopping, and the epoch kept, on ``label_error_loss``
    instead of the label's log loss."""

    def _get_val_loss(self):
        return label_error_loss


class ObjectiveStoppedClassifier(TabularMoEClassifier):
    """Research-only (study 58): early stopping, and the epoch kept, on the hold-out's whole
    training objective (the label's log loss plus ``feature_loss_weight`` x each feature's,
    every column left out in turn) instead of the label's log loss alone."""

    def _get_val_loss(self):
        masking = self._masking()
        if masking != "leave_one_out":  # random masking would score each epoch on another draw
            raise ValueError(f"stop_on='objective' needs leave-one-out masking (one layer), got {masking!r}")
        return self._objective(masking)


class TrainerOptionsClassifier(TabularMoEClassifier):
    """Research-only: the estimator with settings of the trainer that it takes no parameter
    for, ``trainer_extra`` (``TrainerConfig`` fields): ``embedding_weight_decay``, AdamW's
    decay on the token embeddings, which ``weight_decay`` leaves out by rtdl's rule (study
    49); ``start_from_epoch``, epochs before early stopping watches the hold-out (study 50);
    ``restore_best_weights=False``, the last epoch's weights kept when early stopping ends
    the fit (study 51); ``patience_rate``, AutoGluon's adaptive patience (study 59);
    ``adam_beta2``, AdamW's second-moment decay, 0.999 in the estimator (study 64);
    ``lr_cosine``, cosine annealing of the learning rate over ``max_epochs`` (study 65);
    ``prior_margin``, patience waiting for the hold-out to beat the class prior (study 71);
    ``soup_top`` / ``soup_greedy``, the weights kept averaged over the best epochs (study 74)."""

    # Set on the instance after construction, not an __init__ parameter: clone/get_params
    # drop it (research.py never clones).
    trainer_extra: dict = {}

    def _train(self, inputs, validation, early, unlabeled=None) -> None:
        # prior_margin m (study 71): patience counts once the hold-out's label log loss is below
        # (1 - m) x that of the training rows' class frequencies (the constant model)
        margin, self._watch_below = self.trainer_extra.get("prior_margin", 0.0), None
        if margin > 0 and early and validation is None:
            rows, held = inputs.validation_split(self.validation_fraction)
            self._watch_below = (1 - margin) * prior_log_loss(
                inputs.y_codes[rows], inputs.weight[rows], inputs.y_codes[held], inputs.weight[held])
        super()._train(inputs, validation, early, unlabeled)

    def _trainer_options(self) -> dict:
        extra = {k: v for k, v in self.trainer_extra.items() if k != "prior_margin"}
        if getattr(self, "_watch_below", None) is not None:
            extra["watch_below"] = self._watch_below
        return {**super()._trainer_options(), **extra}


#: ``stop_on``'s values: the early-stopping score each estimator reads.
STOPPED = {"log_loss": TabularMoEClassifier, "error": ErrorStoppedClassifier, "objective": ObjectiveStoppedClassifier}


def pop_number(params: dict, key: str, default, minimum, integer: bool = False):
    """``params.pop(key, default)``, refused (naming it) unless a number (an integer where
    ``integer``) at least ``minimum``: a bool (``True`` was read as 1.0) or NaN too."""
    value = params.pop(key, default)
    kinds = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not value >= minimum:
        raise SystemExit(f"{key} must be {'an integer' if integer else 'a number'} >= {minimum}, got {value!r}")
    return value


def trainer_extra(params: dict) -> dict:
    """Pop the research-only trainer settings of a variant out of ``params``, checked; the
    settings at their trainer defaults are dropped, so a variant naming them is the plain
    estimator."""
    extra = {}
    decay = pop_number(params, "embedding_weight_decay", 0.0, 0)
    if decay > 0:
        extra["embedding_weight_decay"] = float(decay)
    start = pop_number(params, "start_from_epoch", 0, 0, integer=True)
    if start > 0:
        extra["start_from_epoch"] = start
    rate = pop_number(params, "patience_rate", 0.0, 0)
    if rate > 0:
        extra["patience_rate"] = float(rate)
    beta2 = pop_number(params, "adam_beta2", 0.999, 0)
    if not beta2 < 1:
        raise SystemExit(f"adam_beta2 must be in [0, 1), got {beta2!r}")
    if beta2 != 0.999:
        extra["betas"] = (0.9, float(beta2))
    cosine = params.pop("lr_cosine", False)
    if not isinstance(cosine, bool):
        raise SystemExit(f"lr_cosine must be True or False, got {cosine!r}")
    if cosine:
        if params.get("refit", False):  # the refit's shorter fit would anneal on another horizon
            raise SystemExit("lr_cosine does not combine with refit")
        extra["lr_cosine"] = True
    margin = pop_number(params, "prior_margin", 0.0, 0)
    if not margin < 1:
        raise SystemExit(f"prior_margin must be in [0, 1), got {margin!r}")
    if margin > 0:
        extra["prior_margin"] = float(margin)
    top = pop_number(params, "soup_top", 1, 1, integer=True)
    greedy = params.pop("soup_greedy", True)
    if not isinstance(greedy, bool):
        raise SystemExit(f"soup_greedy must be True or False, got {greedy!r}")
    if top > 1:
        extra["soup_top"], extra["soup_greedy"] = top, greedy
    restore = params.pop("restore_best_weights", True)
    if not isinstance(restore, bool):
        raise SystemExit(f"restore_best_weights must be True or False, got {restore!r}")
    if not restore:
        extra["restore_best_weights"] = False
    return extra


def make_tabmoe(params: dict, seed: int) -> TabularMoEClassifier:
    """The estimator of a variant; the research-only ``stop_on="error"`` (study 46) picks
    :class:`ErrorStoppedClassifier`, ``stop_on="objective"`` (study 58)
    :class:`ObjectiveStoppedClassifier`, the trainer settings of :func:`trainer_extra` (studies
    49-51, 59, 64, 65) :class:`TrainerOptionsClassifier`, ``row_weight`` > 0 (study 53)
    :class:`~row_scoring.RowScoredClassifier`, ``tie_heads`` (study 54)
    :class:`~tied_heads.TiedHeadsClassifier`, ``impute_unknown`` (study 55; alone)
    :class:`~impute_unknown.ImputedUnknownClassifier`, ``separate_members`` > 1 (study 60; alone)
    :class:`~separate_members.SeparateMembersClassifier`, ``tree_bins`` = a leaf's rows > 0 (study
    61; alone) :class:`~tree_bins.TreeBinsClassifier`, ``swap_rate`` > 0 (study 62; alone)
    :class:`~swap_noise.SwapNoiseClassifier`, ``null_key=True`` (study 67; alone)
    :class:`~null_key.NullKeyClassifier`, ``periodic`` = a frequency scale > 0 (study 68; alone)
    :class:`~periodic.PeriodicClassifier`, ``borrow_unknown=True`` (study 70; alone)
    :class:`~borrow_unknown.BorrowedUnknownClassifier`, ``prior_bias`` = ``"label"`` or ``"all"``
    (study 72; alone) :class:`~prior_bias.PriorBiasClassifier`."""
    params = dict(params)
    prior = params.pop("prior_bias", None)
    if prior is not None:
        if prior not in PRIOR_BIAS:
            raise SystemExit(f"prior_bias must be one of {', '.join(PRIOR_BIAS)}, got {prior!r}")
        if set(params) & RESEARCH_PARAMS or params.get("n_members", 1) != 1 or params.get("vocabulary", "per_column") != "per_column":
            raise SystemExit("prior_bias does not combine with other research-only settings, n_members or vocabulary")
        model = PriorBiasClassifier(**params, random_state=seed)
        model.prior_bias = prior
        return model
    scale = pop_number(params, "periodic", 0.0, 0)
    if scale > 0:
        if set(params) & RESEARCH_PARAMS or params.get("n_members", 1) != 1 or "numeric_embedding" in params:
            raise SystemExit("periodic does not combine with other research-only settings, n_members or numeric_embedding")
        model = PeriodicClassifier(**params, numeric_embedding="piecewise", random_state=seed)
        model.frequency_init_scale = float(scale)
        return model
    null = params.pop("null_key", False)
    if not isinstance(null, bool):  # as impute_unknown: "true" or 1 would fit the plain estimator
        raise SystemExit(f"null_key must be True or False, got {null!r}")
    if null:
        if set(params) & RESEARCH_PARAMS or params.get("n_members", 1) != 1 or params.get("gate", "softmax") != "softmax":
            raise SystemExit("null_key does not combine with other research-only settings, n_members or gate")
        return NullKeyClassifier(**params, random_state=seed)
    swap = pop_number(params, "swap_rate", 0.0, 0)
    if swap > 0:
        if set(params) & RESEARCH_PARAMS or swap >= 1:
            raise SystemExit("swap_rate must be below 1 and does not combine with other research-only settings")
        model = SwapNoiseClassifier(**params, random_state=seed)
        model.swap_rate = float(swap)
        return model
    leaf = pop_number(params, "tree_bins", 0, 0, integer=True)
    if leaf > 0:
        if set(params) & RESEARCH_PARAMS:
            raise SystemExit("tree_bins does not combine with other research-only settings")
        model = TreeBinsClassifier(**params, random_state=seed)
        model.min_samples_leaf = leaf
        return model
    members = pop_number(params, "separate_members", 1, 1, integer=True)
    if members > 1:
        if set(params) & RESEARCH_PARAMS or params.get("n_members", 1) != 1:
            raise SystemExit("separate_members does not combine with other research-only settings or n_members")
        return SeparateMembersClassifier(params, random_state=seed, members=members)
    borrow = params.pop("borrow_unknown", False)
    if not isinstance(borrow, bool):  # as impute_unknown: "true" or 1 would fit the plain estimator
        raise SystemExit(f"borrow_unknown must be True or False, got {borrow!r}")
    if borrow:
        if set(params) & RESEARCH_PARAMS or params.get("n_members", 1) != 1:
            raise SystemExit("borrow_unknown does not combine with other research-only settings or n_members")
        # its own predictions are the "token" reading it pairs with (the default until study 70)
        return BorrowedUnknownClassifier(**{"unknown": "token", **params}, random_state=seed)
    impute = params.pop("impute_unknown", False)
    if not isinstance(impute, bool):  # "true" or 1 fitted the plain estimator, said nothing
        raise SystemExit(f"impute_unknown must be True or False, got {impute!r}")
    if impute:
        if set(params) & RESEARCH_PARAMS or params.get("n_members", 1) != 1:
            raise SystemExit("impute_unknown does not combine with other research-only settings or n_members")
        return ImputedUnknownClassifier(**{"unknown": "token", **params}, random_state=seed)  # as study 55's
    stop_on = params.pop("stop_on", "log_loss")
    if stop_on not in STOPPED:
        raise SystemExit(f"stop_on must be one of {', '.join(STOPPED)}, got {stop_on!r}")
    extra = trainer_extra(params)
    if extra and stop_on != "log_loss":
        raise SystemExit(f"stop_on={stop_on} does not combine with {', '.join(extra)}")
    row_weight = pop_number(params, "row_weight", 0, 0)
    tie = params.pop("tie_heads", "none")
    if tie not in TIE_HEADS:
        raise SystemExit(f"tie_heads must be one of {', '.join(TIE_HEADS)}, got {tie!r}")
    if row_weight > 0:
        if extra or stop_on != "log_loss" or tie != "none":
            raise SystemExit("row_weight does not combine with the research-only trainer settings or tie_heads")
        if params.get("n_layers", "auto") not in ("auto", 1) or params.get("n_members", 1) != 1:
            raise SystemExit("row_weight reads one leave-one-out pass: n_layers 1 and n_members 1 only")
        model = RowScoredClassifier(**params, random_state=seed)
        model.row_weight = float(row_weight)
        return model
    if tie != "none":
        if extra or stop_on != "log_loss" or params.get("n_members", 1) != 1:
            raise SystemExit("tie_heads does not combine with other research-only settings or n_members")
        model = TiedHeadsClassifier(**params, random_state=seed)
        model.tie_mode = tie
        return model
    if extra:
        model = TrainerOptionsClassifier(**params, random_state=seed)
        model.trainer_extra = extra
        return model
    return STOPPED[stop_on](**params, random_state=seed)
