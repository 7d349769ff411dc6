"""``TabularMoEClassifier``'s token inputs: the tokenizer fitted on X (and X_unlabeled), a
frame's feature tokens (warning about values unseen at fit), what the attention leaves out,
piecewise bin positions and training rows."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

from ._frame import concat_rows
from ._stack import catch_warnings, errors_about
from .tokenizer import MISSING, UNKNOWN


class TokenInputsMixin:
    """The rows ``TabularMoEClassifier`` feeds its network, from its fitted tokenizer."""

    def _check_token_modes(self) -> None:
        """InvalidParameterError for a ``missing`` or ``unknown`` that ``set_params`` set to
        neither mode after fit: read where rows are, it was taken for "token" in silence."""
        names = ("missing", "unknown")
        try:
            validate_parameter_constraints({k: self._parameter_constraints[k] for k in names},
                                           {k: getattr(self, k) for k in names}, type(self).__name__)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"{exc} (set by set_params after fit)") from None

    def _fitted_tokenizer(self, frame: pd.DataFrame, unlabeled: pd.DataFrame | None) -> Any:
        """``_new_tokenizer()`` fitted on ``frame`` and the ``unlabeled`` rows (None: none). An
        error reading them together that ``frame`` alone does not raise names X_unlabeled:
        "Input X contains infinity in column 'b'" was about X_unlabeled, while X had none."""
        if unlabeled is None:
            return self._new_tokenizer().fit(frame)
        try:
            return self._new_tokenizer().fit(concat_rows(frame, unlabeled))
        except (TypeError, ValueError):
            with catch_warnings():  # X's own error, where X has one (one thread at a time: tabmoe._stack)
                warnings.simplefilter("ignore")
                self._new_tokenizer().fit(frame)
            with errors_about("X_unlabeled"):
                raise

    def _unseen_note(self) -> str:
        """How this model reads values unseen at fit: it ends the tokenizer's warning."""
        if self.unknown == "exclude":
            return "With unknown='exclude' the model leaves them out of the attention."
        if self.unknown == "borrow":
            return ("predict reads a row's one such value that other columns kept as their tokens of it "
                    "(unknown='borrow'), any other as UNKNOWN; unknown='exclude' leaves them out of the attention.")
        return "The model attends to UNKNOWN; unknown='exclude' leaves such values out of the attention."

    def _missing_note(self) -> str | None:
        """How this model reads a missing value in a column that held none at fit: it ends the
        tokenizer's warning. None with missing='exclude': no warning, as the model leaves it
        out of the attention (an absent column's too), reading no MISSING token."""
        if self.missing == "exclude":
            return None
        return "The model attends to MISSING; missing='exclude' leaves missing values out of the attention."

    def _transform(self, X: Any) -> np.ndarray:
        """All feature tokens of ``X`` at once, warning about unseen values with the notes."""
        notes = {"unseen_note": self._unseen_note(), "missing_note": self._missing_note()}
        parts = [t for _, t in self.tokenizer_.transform_batches(X, max(1, len(X)), **notes)]
        return parts[0] if parts else self.tokenizer_.transform(X)

    def _attend(self, tokens: np.ndarray) -> np.ndarray | None:
        """(n, L) bool: False where a token is left out of the attention (``"exclude"``)."""
        left_out = [t for t, mode in ((MISSING, self.missing), (UNKNOWN, self.unknown)) if mode == "exclude"]
        return ~np.isin(tokens, left_out) if left_out else None  # a label is never either

    def _positions(self, X: Any, label: bool = True) -> np.ndarray | None:
        """(n, L) float32 bin positions of ``X``'s values (``label``: with a last column of
        ones for the label) for a piecewise-linear network; None for the others."""
        if self.numeric_embedding_ != "piecewise":
            return None
        position = self.tokenizer_.bin_positions(X)
        return np.pad(position, ((0, 0), (0, 1)), constant_values=1.0) if label else position

    def _rows(self, tokens: np.ndarray, weight: np.ndarray, position: np.ndarray | None = None) -> dict[str, torch.Tensor]:
        """Training tensors of rows with tokens (n, L): tokens, weight and, if needed, attend
        and the values' bin positions (``fraction``)."""
        rows = {"tokens": torch.from_numpy(tokens), "weight": torch.from_numpy(weight).float()}
        attend = self._attend(tokens)
        if attend is not None:
            rows["attend"] = torch.from_numpy(attend)
        if position is not None:
            rows["fraction"] = torch.from_numpy(position)
        return rows
