"""What every tabmoe classifier does around training: targets, weights, seeds, hold-out split,
and :class:`TorchClassifier`, the one fit sequence of the torch classifiers.

Shared by :class:`~tabmoe.TabularMoEClassifier` and the torch baselines in
:mod:`tabmoe.baselines`, so that all of them validate input, weight rows and hold out
early-stopping rows the same way.
"""

from __future__ import annotations

import contextlib
import copy
import numbers
import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_consistent_length, validate_data

from .. import _paper_config as defaults
from .._column_warnings import warn_label_column
from .._frame import check_other_columns
from .._stack import user_stacklevel, warnings_about
from ..tokenizer import ColumnTokenizer, to_frame
from ._class_weight import checked_sample_weight, class_weighted
from ._plateau import warn_if_at_prior
from ._targets import encode_targets, eval_pair, validate_targets
from ._threads import scoped_threads
from .trainer import LossFn, Trainer, TrainerConfig, TrainResult, autocast, resolve_device, seeded

#: Constraints of the speed parameters of every estimator trained by the shared trainer
#: (``TabularMoEClassifier``, FT-Transformer, TabTransformer, TabM); see :class:`FitInputs`.
SPEED_PARAMETER_CONSTRAINTS: dict = {
    "compile": ["boolean"],
    "mixed_precision": [StrOptions({"auto"}), "boolean"],
}

#: Constraints of the training parameters every torch classifier takes (TabularMoEClassifier
#: and the baselines; each adds its architecture, ``batch_size`` and, when trained by the
#: shared trainer, SPEED_PARAMETER_CONSTRAINTS). Declared here only.
FIT_PARAMETER_CONSTRAINTS: dict = {
    # the tokenizer's, which every front end passes them on to
    **{name: ColumnTokenizer._parameter_constraints[name] for name in ("categorical_features", "min_frequency")},
    "max_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
    "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
    "weight_decay": [Interval(numbers.Real, 0, None, closed="left")],
    "early_stopping": [StrOptions({"auto"}), "boolean"],
    # A share in (0, 1), a number of rows (an integer >= 1, as HistGradientBoosting's) or
    # "auto" (a share with a cap in rows).
    "validation_fraction": [
        Interval(numbers.Real, 0, 1, closed="neither"),
        Interval(numbers.Integral, 1, None, closed="left"),
        StrOptions({"auto"}),
    ],
    "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
    "tol": [Interval(numbers.Real, 0, None, closed="left")],
    "class_weight": [dict, StrOptions({"balanced"}), None],
    "device": [str, torch.device],
    "random_state": ["random_state"],
    "n_jobs": [Interval(numbers.Integral, None, -1, closed="right"), Interval(numbers.Integral, 1, None, closed="left"), None],
    "verbose": ["verbose"],
}


def resolve_mixed_precision(
    mixed_precision: bool | str, device: torch.device, warn: bool = True
) -> bool:
    """Whether to run in bf16 autocast on ``device``.

    ``"auto"``: on CUDA devices with native bf16 only (compute capability 8.0+; the CPU stays
    float32: its gain depends on the CPU's bf16 support). ``True``: on those and on the CPU;
    on any other device (or a CUDA device without bf16) it has no effect, and a UserWarning
    says so when ``warn`` (at ``fit``). ``False``: never.
    """
    cuda_bf16 = device.type == "cuda" and _native_bf16(device)
    if isinstance(mixed_precision, str):  # "auto"
        return cuda_bf16
    if not mixed_precision:
        return False
    if cuda_bf16 or device.type == "cpu":
        return True
    if warn:
        where = "a CUDA device without bf16" if device.type == "cuda" else f"device {str(device)!r}"
        warnings.warn(
            f"mixed_precision=True has no effect on {where}: bf16 autocast is used on CUDA "
            "devices with bf16 and on the CPU only. Training runs in float32.",
            UserWarning,
            stacklevel=user_stacklevel(),  # the caller of fit: through start_fit, _fit, its thread scope, fit and _fit_context
        )
    return False


def _native_bf16(device: torch.device) -> bool:
    """Whether the CUDA ``device`` (not the current one) computes in bf16 natively: compute
    capability 8 (Ampere) or later. ``torch.cuda.is_bf16_supported()`` also counts emulated
    bf16, which is slower than float32 and no more useful."""
    return torch.cuda.get_device_capability(device)[0] >= 8


def use_early_stopping(early_stopping: bool | str, has_eval_set: bool, n_rows: int) -> bool:
    """Resolve ``early_stopping="auto"``: on with an ``eval_set`` or above 10,000 rows."""
    if early_stopping == "auto":
        return has_eval_set or n_rows > defaults.AUTO_EARLY_STOPPING_ROWS
    return bool(early_stopping)


def check_validation_fraction(validation_fraction: Any) -> None:
    """``True`` passes scikit-learn's integer interval; it is surely not a number of rows."""
    if isinstance(validation_fraction, bool):
        raise ValueError(
            "validation_fraction must be a float in (0, 1), a number of rows >= 1 or 'auto', "
            f"got {validation_fraction!r}."
        )


def validation_split(
    y_codes: np.ndarray, validation_fraction: float | int | str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, validation); stratified when every class can appear in both. Every
    class keeps a training row: the row of a class seen once stays on the training side, and
    where a split (not stratified, e.g. fewer rows held out than classes) took every row of a
    class, one of them trades places with a training row of a class that keeps another. Where
    ``validation_fraction`` holds out more rows than that allows (every class seen once), a
    UserWarning says that some class is held out whole, and the split is drawn as before.

    ``validation_fraction``: a share of the rows (float in (0, 1), rounded up), a number of
    rows (an integer >= 1), or ``"auto"``: ``AUTO_VALIDATION_FRACTION`` of the rows, at most
    ``AUTO_VALIDATION_ROWS`` where there are at most ``AUTO_VALIDATION_CAPPED_ROWS`` rows."""
    n = len(y_codes)
    check_validation_fraction(validation_fraction)
    if isinstance(validation_fraction, str) and validation_fraction == "auto":
        n_val = int(np.ceil(defaults.AUTO_VALIDATION_FRACTION * n))  # as the float 0.1 rounds
        if n <= defaults.AUTO_VALIDATION_CAPPED_ROWS:
            n_val = min(n_val, defaults.AUTO_VALIDATION_ROWS)
    elif isinstance(validation_fraction, numbers.Integral):
        n_val = int(validation_fraction)
    else:
        n_val = int(np.ceil(validation_fraction * n))
    if n_val < 1 or n - n_val < 1:
        raise ValueError(
            f"validation_fraction={validation_fraction!r} leaves no rows to train or "
            f"validate on with {n} samples; set early_stopping=False."
        )
    counts = np.bincount(y_codes)
    spare = n - int(np.count_nonzero(counts))  # rows held out with every class keeping one
    if n_val > spare:  # a class held out whole is never learnt (it was, silently)
        fewer = f", set early_stopping=False or validation_fraction={spare} (rows)" if spare else " or set early_stopping=False"
        warnings.warn(
            f"validation_fraction={validation_fraction!r} holds out {n_val} of {n} rows, more than the "
            f"{spare} that leave each of the {n - spare} classes a training row: every row of at "
            f"least {n_val - spare} class{'es' * (n_val - spare > 1)} is held out for early stopping, "
            f"and the network never learns it. Pass eval_set=(X_val, y_val){fewer}.",
            UserWarning, stacklevel=user_stacklevel(),
        )
    single = counts[y_codes] < 2
    if single.any() and n - single.sum() > n_val:
        # a class seen once keeps its row in training (held out, it would never be learnt),
        # and the other classes are still split stratified
        rest = np.flatnonzero(~single)
        idx_train, idx_val = _split(y_codes[rest], n_val, seed, n_val <= spare)
        return np.concatenate([rest[idx_train], np.flatnonzero(single)]), rest[idx_val]
    return _split(y_codes, n_val, seed, n_val <= spare)


def _split(y_codes: np.ndarray, n_val: int, seed: int, every_class: bool) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(y_codes)
    counts = counts[counts > 0]
    # Stratify only when every class can appear on both sides.
    stratify = y_codes if counts.min() >= 2 and min(n_val, len(y_codes) - n_val) >= len(counts) else None
    idx_train, idx_val = train_test_split(np.arange(len(y_codes)), test_size=n_val, stratify=stratify,
                                          random_state=seed)
    return _keep_every_class(y_codes, idx_train, idx_val, seed) if every_class else (idx_train, idx_val)


def _keep_every_class(
    y_codes: np.ndarray, idx_train: np.ndarray, idx_val: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """The split with one held-out row of each class that has no training row traded for a
    random training row of a class that keeps another (the split as it was where every class
    has a training row). ``validation_split``'s check leaves a training row to trade."""
    lost = np.setdiff1d(y_codes[idx_val], y_codes[idx_train])
    if not len(lost):
        return idx_train, idx_val
    idx_train, idx_val, rng = idx_train.copy(), idx_val.copy(), np.random.RandomState(seed)
    for label in lost:
        back = int(np.flatnonzero(y_codes[idx_val] == label)[0])
        spare = np.flatnonzero(np.bincount(y_codes[idx_train])[y_codes[idx_train]] >= 2)
        out = int(spare[rng.randint(len(spare))])
        idx_train[out], idx_val[back] = idx_val[back], idx_train[out]
    return idx_train, idx_val


def hold_out(
    train: dict[str, torch.Tensor], rows: tuple[np.ndarray, np.ndarray]
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Split a dict of row-aligned tensors into (train, validation) at the row indices
    ``rows`` (:meth:`FitInputs.validation_split`)."""
    idx_train, idx_val = (torch.from_numpy(r) for r in rows)
    return {k: v[idx_train] for k, v in train.items()}, {k: v[idx_val] for k, v in train.items()}


def float32_weights(weight: np.ndarray) -> np.ndarray:
    """Row weights of a scale that float32 tensors and their batch sums hold: times the power
    of two that brings the largest into [1, 2) when it lies outside [2**-32, 2**32] (1e39
    became inf, 1e-46 zero, 1e-20 fell below the trainer's 1e-12 floor of a batch's weight).
    The loss is a weighted mean, so the scale is free, and a power of two rounds nothing."""
    top = float(weight.max())
    if 2.0**-32 <= top <= 2.0**32:
        return weight
    return np.ldexp(weight, 1 - np.frexp(top)[1])


@dataclass
class FitInputs:
    """Validated training input: the frame, class codes, row weights, a seed and a device."""

    frame: pd.DataFrame
    y_codes: np.ndarray  # (n,) index into estimator.classes_
    weight: np.ndarray  # (n,) float64, sample_weight x class_weight
    seed: int
    device: torch.device
    mixed_precision: bool = False  # resolved for the device (resolve_mixed_precision)
    compile: bool = False
    n_rows: int | None = None  # rows given to fit, where weighted() left those of weight 0 out

    @property
    def n_weighted(self) -> int:
        """Rows of non-zero weight: those training uses (:meth:`weighted`)."""
        return int(np.count_nonzero(self.weight > 0))

    def weighted(self, keep: np.ndarray | None = None) -> FitInputs:
        """Without the rows of weight 0, which train as absent rows: left in the batches they took
        places there (the weighted rows of a sparse batch trained harder) and a batch of them alone
        took an optimiser step on no data; the front end (vocabulary, bins, missing indicators)
        is not fitted on them either. Those kept stay in order: a hold-out draws the same rows.
        ``keep``: the rows to keep where the weight that decides is not ``weight`` (the
        references' class weights, which their library applies)."""
        keep = self.weight > 0 if keep is None else keep
        if keep.all():
            return self
        frame, n_rows = self.frame[keep].reset_index(drop=True), len(self.weight)
        return replace(self, frame=frame, y_codes=self.y_codes[keep], weight=self.weight[keep], n_rows=n_rows)

    def validation_split(self, validation_fraction: float | int | str) -> tuple[np.ndarray, np.ndarray]:
        """Row indices (train, validation) of :func:`validation_split` of these rows, after
        :meth:`weighted` drawn among those of non-zero weight only: a row of weight 0 would not
        count in the validation loss (a hold-out of such rows left it NaN every epoch and
        stopped training silently). Every model's early stopping holds out rows by this rule."""
        try:
            return validation_split(self.y_codes, validation_fraction, self.seed)
        except ValueError as exc:
            if self.n_rows is None:
                raise
            raise ValueError(f"{exc} (Only the {len(self.y_codes)} rows of non-zero weight are held out.)") from None


def draw_seed(random_state: Any) -> int:
    """The seed of a training run (``fit``'s, ``adapt``'s) for ``random_state`` (None, an int or
    a RandomState, which it advances): one draw below 2**31 - 1."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def start_fit(estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> FitInputs:
    """Validate ``X`` and ``y`` and set ``classes_``, ``n_features_in_``, ``feature_names_in_``.

    Reads the estimator's ``random_state``, ``class_weight``, ``device``, ``mixed_precision``
    and ``compile`` where it has them (defaults: None, None, CPU, False, False). Raises
    ValueError for empty input (in ``to_frame``) or a single class; warns when
    ``mixed_precision=True`` has no effect on the device, and when ``y`` is a column of ``X``
    (``LabelColumnWarning``).
    """
    frame = to_frame(X)
    validate_data(estimator, X, skip_check_array=True, reset=True)
    warn_label_column(frame, y)
    y = validate_targets(y)
    check_consistent_length(frame, y)
    estimator.classes_, y_codes = np.unique(y, return_inverse=True)
    if len(estimator.classes_) < 2:
        raise ValueError(
            "Classifier can't train when only one class is present: y holds only "
            f"{estimator.classes_.tolist()}."
        )
    # A copy: a pandas Series' values are read-only under copy-on-write, and torch warns.
    weight = checked_sample_weight(sample_weight, frame)
    class_weight = getattr(estimator, "class_weight", None)
    if class_weight is not None:
        weight = class_weighted(weight, class_weight, estimator.classes_, y_codes)  # checked there
        # every row weight 0 (sample_weight alone: scikit-learn's check above) trained nothing:
        # "no optimisation step", or, with early stopping, validation_fraction was named
        if not (weight > 0).any():
            times = "" if sample_weight is None else " times sample_weight"
            raise ValueError(
                f"class_weight={class_weight!r}{times} gives every row weight 0: no row to train on."
            )
    # An estimator without random_state (a scikit-learn wrapper) needs no seed: drawing one
    # would advance the caller's global numpy RNG.
    seed = draw_seed(estimator.random_state) if hasattr(estimator, "random_state") else 0
    device = resolve_device(getattr(estimator, "device", "cpu"))
    mixed_precision = resolve_mixed_precision(getattr(estimator, "mixed_precision", False), device)
    compile_ = bool(getattr(estimator, "compile", False))
    return FitInputs(frame, y_codes, weight, seed, device, mixed_precision, compile_)


#: Rows per forward pass at prediction time (at most).
PREDICT_BATCH_ROWS = 8192
#: Floats in one (rows, positions, width) activation at prediction time: 8,192 rows of 51
#: positions at the paper's width 20, whose memory tests/test_resources.py bounds. The width
#: is the widest a position holds (TabularMoEClassifier._predict_rows: attention scores too).
PREDICT_BATCH_FLOATS = 2**23


def predict_batch_rows(n_positions: int, width: int) -> int:
    """Rows per forward pass for ``n_positions`` x ``width`` activations a row: one
    activation holds PREDICT_BATCH_FLOATS floats, with 256 to PREDICT_BATCH_ROWS rows."""
    rows = PREDICT_BATCH_FLOATS // max(1, n_positions * width)
    return int(min(PREDICT_BATCH_ROWS, max(256, rows)))


#: Tokens tokenized at once at prediction time (int64: 16 MB).
PREDICT_TOKENIZE_CELLS = 2**21


def predict_chunk_rows(batch_rows: int, n_columns: int) -> int:
    """Rows tokenized at once at prediction time: whole batches of ``batch_rows``, at most
    PREDICT_BATCH_ROWS rows and PREDICT_TOKENIZE_CELLS tokens. A batch of a wide table is a
    few hundred rows, and the tokenizer's per-column pandas calls cost per call (30,000 x
    300: 1.23-1.32x faster, ``benchmarks/speed_predict_wide.py``)."""
    cells = PREDICT_TOKENIZE_CELLS // max(1, batch_rows * n_columns)
    return batch_rows * max(1, min(cells, PREDICT_BATCH_ROWS // batch_rows))


class TorchClassifierMixin:
    """Probabilities, predictions, tags and CPU pickling from ``self._label_logits(X)``.

    The estimator defines ``_label_logits(X) -> ndarray (n_samples, n_classes)`` (columns in
    ``classes_`` order) and keeps its fitted network in ``module_``.
    """

    #: Rows per forward pass in ``_label_logits`` (wide networks set fewer: memory).
    _predict_batch_rows: int = PREDICT_BATCH_ROWS

    def _label_logits(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _module_device(self) -> torch.device:
        return _device_of(self.module_)

    def _predict_autocast(self) -> contextlib.AbstractContextManager:
        """bf16 autocast for prediction when ``mixed_precision`` is on for the network's
        device (see :func:`resolve_mixed_precision`); a no-op otherwise."""
        device = self._module_device()
        mixed = getattr(self, "mixed_precision", False)
        return autocast(resolve_mixed_precision(mixed, device, warn=False), device)

    @scoped_threads
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        logits, rows = self._label_logits(X), PREDICT_BATCH_ROWS
        out = np.empty(logits.shape)  # float64 filled by row batches: not all rows' cast and log_softmax at once
        for start in range(0, len(out), rows):
            batch = torch.from_numpy(logits[start : start + rows]).double()
            out[start : start + rows] = torch.log_softmax(batch, dim=1).numpy()
        return out

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        log_proba = self.predict_log_proba(X)
        return np.exp(log_proba, out=log_proba)  # in place: no second array of all rows

    @scoped_threads
    def predict(self, X: Any) -> np.ndarray:
        """Most probable class per row, shape (n_samples,)."""
        logits = self._label_logits(X)
        return self.classes_[np.argmax(logits, axis=1)]

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        module = state.get("module_")
        if isinstance(module, torch.nn.Module) and _device_of(module).type != "cpu":
            state = dict(state, module_=copy.deepcopy(module).to("cpu"))
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.non_deterministic = False
        return tags


def _device_of(module: torch.nn.Module) -> torch.device:
    return next(module.parameters()).device


class TorchClassifier(TorchClassifierMixin, ClassifierMixin, BaseEstimator):
    """The fit sequence of every torch classifier, once (skorch's ``initialize_module`` /
    ``get_loss`` shape).

    ``fit`` (each subclass's, decorated with scikit-learn's ``_fit_context``) calls
    ``_fit``: ``_check_params``, :func:`start_fit` (targets, weights, seed, device),
    ``_initialize_front_end`` (the tokenizer or encoder), the early-stopping rule, the
    ``eval_set`` targets, then ``_train``: ``_training_rows`` (tensors), an
    ``eval_set`` or a stratified ``validation_fraction`` hold-out, unlabeled rows
    (``_add_unlabeled_rows``), a :class:`~tabmoe.nn.trainer.TrainerConfig` (rows per
    batch from ``_batch_size``), and under one seed ``_initialize_module`` and
    :class:`~tabmoe.nn.trainer.Trainer` with ``_get_loss`` / ``_get_val_loss``;
    it sets ``module_``, ``history_``, ``n_iter_`` and ``best_epoch_``. Where ``_refit``
    says so and early stopping held out training rows, a fresh network then trains the best
    epoch's count of epochs on every training row (``refit_history_``).

    A subclass supplies its front end, its network and its loss; TabNet, trained by its own
    library's loop, overrides ``_train``.
    """

    #: Adam's epsilon (the trainer's default 1e-7 is Keras', as in the paper).
    _adam_eps: float = 1e-7
    #: Whether predict matches a DataFrame's non-string labels (ints, tuples) to the fit's
    #: (a tokenizer's rule) rather than reading it by position; eval_set's X_val is checked so.
    _columns_by_label: bool = False

    # ---------------------------------------------------------------- hooks
    def _check_params(self) -> None:
        """Cross-parameter checks (ValueError naming the parameters), before any work."""

    def _initialize_front_end(self, inputs: FitInputs, **fit_params: Any) -> Any:
        """Fit the front end on ``inputs.frame``; return unlabeled rows to train on (or None)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _training_rows(self, X: Any, y_codes: np.ndarray, weight: np.ndarray) -> dict[str, torch.Tensor]:
        """Row-aligned training tensors of ``X`` with class codes and row weights."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _add_unlabeled_rows(self, train: dict[str, torch.Tensor], unlabeled: Any) -> dict[str, torch.Tensor]:
        """``train`` with the rows returned by :meth:`_initialize_front_end` appended."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _batch_size(self, train: dict[str, torch.Tensor]) -> int:
        """Rows per optimisation step."""
        return int(self.batch_size)

    def _initialize_module(self) -> torch.nn.Module:
        """A fresh network for the fitted front end (called under the fit's seed)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _get_loss(self) -> LossFn:
        """The trainer's ``loss_fn``: ``(module, batch) -> (weighted loss sum, weight sum)``."""
        raise NotImplementedError  # pragma: no cover - abstract

    def _get_val_loss(self) -> LossFn | None:
        """The early-stopping loss; None: the training loss."""
        return None

    def _trainer_options(self) -> dict[str, Any]:
        """Options of :class:`TrainerConfig` beyond those every classifier sets (a
        learning-rate schedule, weight averaging, clipping); none by default."""
        return {}

    def _patience(self) -> int:
        """The trainer's ``n_iter_no_change`` (``_trainer_options`` may add a rate growing it)."""
        return int(self.n_iter_no_change)

    def _max_eval_rows(self) -> int | None:
        """Rows a validation batch holds at most (memory); None: the trainer's max(batch_size, 1024)."""
        return None

    def _refit(self) -> bool:
        """Whether to retrain on every training row after early stopping on a hold-out: asked
        before training, only where early stopping holds rows of ``X`` out (where a refit
        would run; a subclass may refuse it there)."""
        return False

    def _record_fit(self, result: TrainResult, labelled: dict[str, torch.Tensor], seed: int,
                    refit: TrainResult | None = None) -> None:
        """Set ``history_``, ``n_iter_``, ``best_epoch_`` and ``refit_history_`` from the
        trainer's results (``refit``: the retraining on every row, or None)."""
        self.history_ = result.history
        self.best_epoch_ = result.best_epoch
        self.refit_history_ = None if refit is None else refit.history
        self.n_iter_ = len(result.history) + len(self.refit_history_ or [])

    # ------------------------------------------------------------- sequence
    @scoped_threads
    def _fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        eval_set: tuple[Any, Any] | None = None,
        **fit_params: Any,
    ) -> TorchClassifier:
        # A fit that raises (bad eval_set labels, a diverged network, Ctrl-C) leaves the
        # estimator as it was: the previous fit's state whole, or unfitted; never the new
        # classes or tokenizer beside the old network.
        params = self.get_params(deep=False)
        before = {k: v for k, v in vars(self).items() if k not in params}
        try:
            check_validation_fraction(self.validation_fraction)  # also when no hold-out is drawn
            self._check_params()
            inputs = start_fit(self, X, y, sample_weight).weighted()
            inputs.weight = float32_weights(inputs.weight)  # the torch models' float32 tensors
            unlabeled = self._initialize_front_end(inputs, **fit_params)
            early = use_early_stopping(self.early_stopping, eval_set is not None, inputs.n_weighted)
            validation = None
            if eval_set is not None:
                X_val, y_val = eval_pair(eval_set)
                check_other_columns(inputs.frame, X_val, self._columns_by_label, "eval_set's X_val")
                validation = (X_val, encode_targets(self.classes_, y_val, "eval_set y"))
            self._train(inputs, validation, early, unlabeled)
        except BaseException:
            for name in [k for k in vars(self) if k not in params]:
                delattr(self, name)
            vars(self).update(before)
            raise
        return self

    def _train(
        self,
        inputs: FitInputs,
        validation: tuple[Any, np.ndarray] | None,
        early: bool,
        unlabeled: Any = None,
    ) -> None:
        """Fit ``module_`` with the trainer; ``validation`` is ``(X_val, y_val codes)``."""
        train = self._training_rows(inputs.frame, inputs.y_codes, inputs.weight)
        every_row = None  # kept for a refit only: the hold-out's rows come back into training
        if validation is not None:
            X_val, y_val = validation
            sides = ((inputs.y_codes, inputs.weight), (y_val, np.ones(len(y_val))))  # codes, weights
            with warnings_about("eval_set's X_val"):  # its unseen values, not X's
                validation = self._training_rows(X_val, y_val, np.ones(len(y_val)))
        elif early:
            every_row = train if self._refit() else None
            rows = inputs.validation_split(self.validation_fraction)
            sides = tuple((inputs.y_codes[r], inputs.weight[r]) for r in rows)
            train, validation = hold_out(train, rows)
        labelled = train
        if unlabeled is not None:
            train = self._add_unlabeled_rows(train, unlabeled)
        config = TrainerConfig(
            max_epochs=self.max_epochs,
            batch_size=self._batch_size(train),
            lr=self.learning_rate,
            weight_decay=self.weight_decay,
            eps=self._adam_eps,
            early_stopping=bool(early),
            n_iter_no_change=self._patience(),
            tol=self.tol,
            **self._trainer_options(),
            max_eval_rows=self._max_eval_rows(),
            device=inputs.device,
            seed=inputs.seed,
            verbose=self.verbose,
            mixed_precision=inputs.mixed_precision,
            compile=inputs.compile,
            description=type(self).__name__,
        )
        with seeded(inputs.seed, inputs.device):
            self.module_ = self._initialize_module().to(inputs.device)
            result = Trainer(config).fit(
                self.module_, train, self._get_loss(), validation=validation,
                val_loss_fn=self._get_val_loss(),
            )  # fmt: skip
        if early:
            warn_if_at_prior(type(self).__name__, result, self.n_iter_no_change, *sides)
        refit = None
        if every_row is not None and result.best_epoch is not None:
            labelled = every_row
            train = every_row if unlabeled is None else self._add_unlabeled_rows(every_row, unlabeled)
            refit = self._train_again(config, train, result, inputs)
        self._record_fit(result, labelled, inputs.seed, refit)

    def _train_again(
        self, config: TrainerConfig, train: dict[str, torch.Tensor], stopped: TrainResult, inputs: FitInputs
    ) -> TrainResult:
        """A fresh network (same seed, same rows per batch) trained on ``train`` for the epochs
        of ``stopped``'s best epoch, without validation: the refit after early stopping.
        No learning-rate schedule: one chosen on the hold-out cannot be replayed."""
        epochs = stopped.best_epoch
        config = replace(config, max_epochs=epochs, early_stopping=False, lr_decay_patience=None,
                         description=f"{config.description} refit on every training row")
        self.module_ = None  # the early-stopped network's memory, before the new one's
        with seeded(inputs.seed, inputs.device):
            self.module_ = self._initialize_module().to(inputs.device)
            try:
                return Trainer(config).fit(self.module_, train, self._get_loss())
            except FloatingPointError as exc:  # it read as the early-stopped fit's divergence
                first = (f"as the early-stopped fit did after the epoch it kept (epoch {epochs})" if stopped.diverged
                         else f"the early-stopped fit did not (it kept epoch {epochs})")
                raise FloatingPointError(
                    f"refit=True: the refit on every training row diverged, {first}. {exc} Or set "
                    "refit=False to keep that fit."
                ) from None
