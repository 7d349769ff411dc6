"""The scikit-learn face shared by the torch baselines trained by :class:`tabmoe.nn.trainer.Trainer`.

A subclass supplies only its network, through ``_build_network(cardinalities, n_numeric,
n_classes) -> nn.Module`` whose ``forward(codes, numeric)`` maps

* ``codes`` (B, n_categorical) int64 — per-column codes of :class:`TableEncoder`,
* ``numeric`` (B, n_numeric) float32 — its standardised numeric block,

to logits (B, n_classes), and optionally ``_check_params()`` for cross-parameter rules.
The trainer's AdamW (no weight decay on biases, norms and embeddings) optimises every
network. Everything else is here once and shared with :class:`~tabmoe.TabularMoEClassifier` through :mod:`tabmoe.nn._base`:
input validation, class and sample weights, early stopping (on by default: a stratified
``validation_fraction`` hold-out, or the ``eval_set``, best weights restored), seeding,
devices and batched prediction.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted
from torch import Tensor, nn

from ..nn._base import (
    FIT_PARAMETER_CONSTRAINTS,
    PREDICT_BATCH_ROWS,
    SPEED_PARAMETER_CONSTRAINTS,
    FitInputs,
    TorchClassifier,
)
from ..nn._sizes import check_network_sizes
from ..nn.trainer import LossFn
from ._float32 import most_extreme_value
from .encoding import TableEncoder

#: Constraints of the parameters every torch baseline shares (see TorchTabularClassifier):
#: the torch classifiers' FIT_PARAMETER_CONSTRAINTS and an integer ``batch_size``.
TRAINING_PARAMETER_CONSTRAINTS: dict = {
    **FIT_PARAMETER_CONSTRAINTS,
    "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
}

#: TRAINING_PARAMETER_CONSTRAINTS plus ``compile`` and ``mixed_precision``, for the
#: baselines trained by the shared trainer.
TRAINER_PARAMETER_CONSTRAINTS: dict = {
    **TRAINING_PARAMETER_CONSTRAINTS,
    **SPEED_PARAMETER_CONSTRAINTS,
}


#: Standardised values beyond this (sqrt of float32's largest) overflow when squared, as
#: norms and variances square them, in the networks' float32 arithmetic.
FLOAT32_SQUARE_MAX = float(np.sqrt(np.finfo(np.float32).max))


def overflow_error(
    estimator: Any, frame: Any, rows: slice, numeric: np.ndarray, broken: np.ndarray | None
) -> ValueError:
    """ValueError for the rows of ``frame`` whose float32 network output is not a number:
    those of the batch ``rows`` flagged in ``broken``, or, where None (the network failed
    on the batch), the batch. Names the numeric column, the value and its distance from the
    training mean of the most extreme standardised value there (``numeric``: the batch's
    numeric block, its columns then their 0/1 missing indicators)."""
    name = type(estimator).__name__
    if broken is None:
        broken = np.ones(len(numeric), dtype=bool)
        message = f"{name} could not predict the rows at positions {rows.start} to {rows.start + len(numeric) - 1} of X"
    else:
        shown = (np.flatnonzero(broken)[:5] + rows.start).tolist()
        message = f"{name} gave no finite probability for {int(broken.sum())} row(s) of X (e.g. position(s) {shown})"
    positions = np.flatnonzero(broken) + rows.start
    message += ": its float32 network overflowed"
    extreme = most_extreme_value(estimator.encoder_, frame, numeric[broken], positions, positions)
    if extreme is not None:
        message += (f". The most extreme numeric value there is {extreme}; clip or transform (e.g. log) "
                    "such values before predicting.")
    return ValueError(message)


def weighted_cross_entropy(logits: Tensor, y: Tensor, weight: Tensor) -> tuple[Tensor, Tensor]:
    """logits (B, C), y (B,) int64, weight (B,) -> (sum of weight x NLL, sum of weights)."""
    nll = F.cross_entropy(logits.float(), y, reduction="none")
    return (nll * weight).sum(), weight.sum()


def network_loss(module: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """The trainer's ``loss_fn``: weighted cross-entropy of ``module(codes, numeric)``."""
    return weighted_cross_entropy(
        module(batch["codes"], batch["numeric"]), batch["y"], batch["weight"]
    )


class TorchTabularClassifier(TorchClassifier):
    """Base class of the torch baselines; subclasses define ``__init__`` and the network.

    The fit sequence is :class:`~tabmoe.nn._base.TorchClassifier`'s (shared with
    :class:`~tabmoe.TabularMoEClassifier`); this class supplies the front end
    (:class:`TableEncoder`), the network (``_build_network``) and the loss (weighted
    cross-entropy). :class:`~tabmoe.baselines.tabnet.TabNetClassifier` overrides ``_train``
    with pytorch-tabnet's own loop.

    Numeric columns are standardised and kept where they are (:class:`TableEncoder`); a value
    so far from its training mean that the float32 network overflows on it (FT-Transformer's
    did at 1e25 standard deviations; every network's does beyond float32's largest, 3.4e38)
    is a ValueError at predict naming its column and row, rather than NaN probabilities.

    Training parameters every subclass takes (after its architecture parameters)
    ----------------------------------------------------------------------------
    categorical_features : "auto", "all", array-like of str or int, or bool mask
        Which columns are categorical (see :class:`~tabmoe.tokenizer.ColumnTokenizer`).
    min_frequency : int
        Categories seen fewer times at fit share the column's UNKNOWN code.
    max_epochs, batch_size : int
        Passes over the training rows; rows per optimisation step.
    learning_rate, weight_decay : float
        AdamW.
    early_stopping : bool or "auto"
        Stops on the validation log-loss, restoring the best weights. Default ``True``, as
        the models' authors train them: on openml-ood the former default, ``"auto"`` (on
        only with an ``eval_set`` or above 10,000 rows, so 200 epochs on smaller tables),
        fell 0.030 (FT-Transformer), 0.028 (TabTransformer) and 0.011 (TabM) below early
        stopping in ID-validation accuracy on the same rows
        (docs/research.md#baseline-early-stopping). ``"auto"`` keeps that rule; the
        paper protocol (``ModelSpec.make_paper``) uses it, as its tables have no validation
        part.
    validation_fraction : float, int or "auto"
        Share of the training rows held out (stratified) for early stopping without
        eval_set, or, an integer, the number of rows (as HistGradientBoosting's); ``"auto"``:
        10%, at most 100 rows on tables of at most 10,000 rows (tabmoe's default; these models
        keep 0.1).
    n_iter_no_change : int
        Epochs without improvement of at least ``tol`` before stopping.
    tol : float
    class_weight : dict, "balanced" or None
    device : str or torch.device
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState or None
    n_jobs : int or None
        CPU threads of torch during ``fit`` and prediction (``None``: 1, ``-1``: every
        core), as :class:`~tabmoe.TabularMoEClassifier`'s.
    verbose : int
        ``>0`` shows a progress bar over epochs.

    Speed parameters (FT-Transformer, TabTransformer, TabM; not TabNet, which has its own loop)
    -------------------------------------------------------------------------------------------
    compile : bool
        ``torch.compile`` the training step, as :class:`~tabmoe.TabularMoEClassifier`'s.
    mixed_precision : bool or "auto"
        bf16 autocast, as :class:`~tabmoe.TabularMoEClassifier`'s.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    encoder_ : TableEncoder
    module_ : torch module (eval mode)
    history_ : list of dict
        Per epoch: ``epoch``, ``train_loss``, ``seconds`` and ``val_loss`` when validating.
    n_iter_ : int
        Epochs run.
    best_epoch_ : int or None
        Epoch whose weights were kept by early stopping; None without early stopping.
    refit_history_ : None
        Always None: these models do not refit (``TabularMoEClassifier(refit=True)`` does).
    """

    # Transformer activations are (rows x tokens x width): 1024 rows keep prediction of the
    # default FT-Transformer near its training memory (8192 rows peaked at 2.9 GB).
    _predict_batch_rows = 1024

    def _train_loss(self, module: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        """The training loss (``loss_fn`` of the trainer); validation always takes
        :func:`network_loss` of the eval-mode logits. TabM overrides it (mean over members)."""
        return network_loss(module, batch)

    def _build_network(self, cardinalities: list[int], n_numeric: int, n_classes: int) -> nn.Module:
        raise NotImplementedError  # pragma: no cover - abstract

    _adam_eps = 1e-8  # torch's AdamW default (only tabmoe's paper model uses Keras' 1e-7)

    #: Integer sizes of the network (each an int >= 1), refused as a bool at ``fit``
    #: (:func:`~tabmoe.nn._sizes.check_network_sizes`).
    _network_sizes: tuple[str, ...] = ()

    def _training_rows(self, X: Any, y_codes: np.ndarray, weight: np.ndarray) -> dict[str, Tensor]:
        codes, numeric = self.encoder_.encode(X)
        return {
            "codes": torch.from_numpy(codes),
            "numeric": torch.from_numpy(numeric.astype(np.float32)),
            "y": torch.from_numpy(np.asarray(y_codes, dtype=np.int64)),
            "weight": torch.from_numpy(np.asarray(weight, dtype=np.float32)),
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        eval_set: tuple[Any, Any] | None = None,
    ) -> TorchTabularClassifier:
        """Train on ``X`` (n_samples, n_features) and labels ``y`` (n_samples,).

        ``eval_set=(X_val, y_val)`` replaces the internal validation split for early
        stopping (and turns ``early_stopping="auto"`` on).
        """
        check_network_sizes(self)
        return self._fit(X, y, sample_weight, eval_set)

    def _initialize_front_end(self, inputs: FitInputs) -> None:
        params = self._encoder_params()
        self.encoder_ = TableEncoder(**params).fit(inputs.frame, sample_weight=inputs.weight)

    def _encoder_params(self) -> dict:
        """Keyword arguments of the :class:`TableEncoder` (a hook for subclasses)."""
        return {"categorical_features": self.categorical_features, "min_frequency": self.min_frequency}

    def _initialize_module(self) -> nn.Module:
        cardinalities = [int(c) for c in self.encoder_.cardinalities_]
        return self._build_network(cardinalities, self.encoder_.n_numeric_, len(self.classes_))

    def _get_loss(self) -> LossFn:
        return self._train_loss

    def _get_val_loss(self) -> LossFn:
        return network_loss

    @torch.no_grad()
    def _label_logits(self, X: Any) -> np.ndarray:
        """(n, n_classes) float32 logits. ``X`` is checked once, then encoded
        PREDICT_BATCH_ROWS rows at a time: memory beyond ``X`` and the output does not grow
        with the rows. Rows the float32 network gives no number for are a ValueError
        naming the most extreme numeric value among them (:func:`overflow_error`)."""
        check_is_fitted(self)
        frame = self.encoder_.checked_frame(self, X)
        rows_per_batch = max(PREDICT_BATCH_ROWS, self._predict_batch_rows)
        batches = self.encoder_.encode_batches(frame, rows_per_batch)  # checks the columns
        out = np.empty((len(frame), len(self.classes_)), dtype=np.float32)
        with self._predict_autocast():
            for rows, codes, numeric in batches:
                try:  # a value beyond float32 casts to inf (numpy's warning): the error below
                    with np.errstate(over="ignore"):
                        logits = self._encoded_logits(codes, numeric)
                except RuntimeError as exc:  # TabNet's sparsemax indexes past a NaN's support
                    if isinstance(exc, torch.cuda.OutOfMemoryError) or not (np.abs(numeric) > FLOAT32_SQUARE_MAX).any():
                        raise
                    raise overflow_error(self, frame, rows, numeric, None) from exc
                # NaN or +inf: no probability (TabNet's -inf are classes it did not train)
                broken = np.isnan(logits).any(axis=1) | np.isposinf(logits).any(axis=1)
                if broken.any():
                    raise overflow_error(self, frame, rows, numeric, broken)
                out[rows] = logits
        return out

    def _encoded_logits(self, codes: np.ndarray, numeric: np.ndarray) -> np.ndarray:
        """Logits (n, n_classes) of encoded rows, ``_predict_batch_rows`` at a time."""
        codes, numeric = torch.from_numpy(codes), torch.from_numpy(numeric.astype(np.float32))
        module, device = self.module_.eval(), self._module_device()
        out = np.empty((len(codes), len(self.classes_)), dtype=np.float32)
        for start in range(0, len(codes), self._predict_batch_rows):
            rows = slice(start, start + self._predict_batch_rows)
            logits = module(codes[rows].to(device), numeric[rows].to(device))
            out[rows] = logits.float().cpu().numpy()
        return out
