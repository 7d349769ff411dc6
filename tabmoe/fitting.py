"""What every tabmoe classifier does around training: targets, weights, seeds, hold-out split.

Shared by :class:`~tabmoe.TabularMoEClassifier` and the torch baselines in
:mod:`tabmoe.baselines`, so that all of them validate input, weight rows and hold out
early-stopping rows the same way.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state, compute_sample_weight
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_consistent_length,
    column_or_1d,
    validate_data,
)

from . import defaults
from ._stack import user_stacklevel
from .tokenizer import to_frame
from .trainer import autocast, resolve_device

#: Constraints of the speed parameters of every estimator trained by the shared trainer
#: (``TabularMoEClassifier``, FT-Transformer, TabTransformer); see :class:`FitInputs`.
SPEED_PARAMETER_CONSTRAINTS: dict = {
    "compile": ["boolean"],
    "mixed_precision": [StrOptions({"auto"}), "boolean"],
}


def resolve_mixed_precision(
    mixed_precision: bool | str, device: torch.device, warn: bool = True
) -> bool:
    """Whether to run in bf16 autocast on ``device``.

    ``"auto"``: on CUDA devices with bf16 support only (the CPU stays float32: its gain
    depends on the CPU's bf16 support). ``True``: on CUDA with bf16 support and on the CPU;
    on any other device (or a CUDA device without bf16) it has no effect, and a UserWarning
    says so when ``warn`` (at ``fit``). ``False``: never.
    """
    cuda_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
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
            stacklevel=user_stacklevel(),  # the caller of fit: through start_fit, fit and _fit_context
        )
    return False


def validate_targets(y: Any) -> np.ndarray:
    """``y`` as a 1-d array of classification targets (ValueError for None or regression y)."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None.")
    y = column_or_1d(y, warn=True)
    check_classification_targets(y)
    return y


def encode_targets(classes: np.ndarray, y: np.ndarray, what: str = "y") -> np.ndarray:
    """Index of each label of ``y`` in ``classes`` (ValueError naming unseen labels)."""
    codes = pd.Index(classes, dtype=object).get_indexer(pd.Index(y, dtype=object))
    if (codes < 0).any():
        unknown = pd.unique(pd.Series(y[codes < 0], dtype=object))[:5].tolist()
        raise ValueError(f"{what} contains labels not seen in the training y: {unknown}.")
    return codes


def use_early_stopping(early_stopping: bool | str, has_eval_set: bool, n_rows: int) -> bool:
    """Resolve ``early_stopping="auto"``: on with an ``eval_set`` or above 10,000 rows."""
    if early_stopping == "auto":
        return has_eval_set or n_rows > defaults.AUTO_EARLY_STOPPING_ROWS
    return bool(early_stopping)


def validation_split(
    y_codes: np.ndarray, validation_fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, validation); stratified when every class can appear in both."""
    n = len(y_codes)
    n_val = int(np.ceil(validation_fraction * n))
    if n_val < 1 or n - n_val < 1:
        raise ValueError(
            f"validation_fraction={validation_fraction} leaves no rows to train or "
            f"validate on with {n} samples; set early_stopping=False."
        )
    counts = np.bincount(y_codes)
    stratify = y_codes if counts.min() >= 2 and n_val >= len(counts) else None
    return train_test_split(np.arange(n), test_size=n_val, stratify=stratify, random_state=seed)


def hold_out(
    train: dict[str, torch.Tensor], y_codes: np.ndarray, validation_fraction: float, seed: int
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Split a dict of row-aligned tensors into (train, validation) by :func:`validation_split`."""
    idx_train, idx_val = validation_split(y_codes, validation_fraction, seed)
    idx_train, idx_val = torch.from_numpy(idx_train), torch.from_numpy(idx_val)
    return {k: v[idx_train] for k, v in train.items()}, {k: v[idx_val] for k, v in train.items()}


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


def start_fit(estimator: Any, X: Any, y: Any, sample_weight: Any = None) -> FitInputs:
    """Validate ``X`` and ``y`` and set ``classes_``, ``n_features_in_``, ``feature_names_in_``.

    Reads the estimator's ``random_state``, ``class_weight``, ``device``, ``mixed_precision``
    and ``compile`` where it has them (defaults: None, None, CPU, False, False). Raises
    ValueError for empty input (in ``to_frame``) or a single class; warns when
    ``mixed_precision=True`` has no effect on the device.
    """
    frame = to_frame(X)
    validate_data(estimator, X, skip_check_array=True, reset=True)
    y = validate_targets(y)
    check_consistent_length(frame, y)
    estimator.classes_, y_codes = np.unique(y, return_inverse=True)
    if len(estimator.classes_) < 2:
        raise ValueError(
            "Classifier can't train when only one class is present: y holds only "
            f"{estimator.classes_.tolist()}."
        )
    weight = _check_sample_weight(sample_weight, frame, dtype=np.float64)
    class_weight = getattr(estimator, "class_weight", None)
    if class_weight is not None:
        weight = weight * compute_sample_weight(class_weight, y)
    rng = check_random_state(getattr(estimator, "random_state", None))
    seed = int(rng.randint(np.iinfo(np.int32).max))
    device = resolve_device(getattr(estimator, "device", "cpu"))
    mixed_precision = resolve_mixed_precision(getattr(estimator, "mixed_precision", False), device)
    compile_ = bool(getattr(estimator, "compile", False))
    return FitInputs(frame, y_codes, weight, seed, device, mixed_precision, compile_)


#: Rows per forward pass at prediction time.
PREDICT_BATCH_ROWS = 8192


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

    def predict_log_proba(self, X: Any) -> np.ndarray:
        """Log class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        logits = torch.from_numpy(self._label_logits(X))
        return torch.log_softmax(logits.double(), dim=1).numpy()

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return np.exp(self.predict_log_proba(X))

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
