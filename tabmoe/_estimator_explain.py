"""The MoE view of a fitted :class:`~tabmoe.TabularMoEClassifier`: :meth:`explain` and
``feature_importances_`` (a mixin of the estimator: it reads its fitted tokenizer and
network, and owns no state of its own)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import torch

from .interpret.explain import Explanation, explain_tokens, gate_importances
from .nn._threads import scoped_threads


class ExplainMixin:
    """``explain`` and ``feature_importances_`` of :class:`~tabmoe.TabularMoEClassifier`."""

    def _update_importances(self) -> None:
        features = self.train_sample_tokens_[:, :-1]
        attend = self._attend(features)
        position = getattr(self, "train_sample_position_", None)
        self.feature_importances_ = gate_importances(
            self.module_,
            torch.from_numpy(features),
            None if attend is None else torch.from_numpy(attend),
            self._predict_rows(),
            None if position is None else torch.from_numpy(position[:, :-1]),
        )

    def _feature_tokens(self, X: Any) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Feature tokens (n, n_features), the attend mask and the bin positions (or None) of
        all of ``X`` (for ``explain``, whose output is many times their size; prediction
        tokenizes in batches)."""
        return self._frame_tokens(self._prepare_X(X))  # checks that the estimator is fitted first

    def _frame_tokens(self, frame: pd.DataFrame) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """:meth:`_feature_tokens` of a frame ``_prepare_X`` returned."""
        tokens = self._transform(frame)
        attend, position = self._attend(tokens), self._positions(frame, label=False)
        return tuple(None if a is None else torch.from_numpy(a) for a in (tokens, attend, position))

    @scoped_threads
    def explain(self, X: Any) -> Explanation:
        """The MoE view of each row's label prediction (see :mod:`tabmoe.interpret.moe`).

        Returns an :class:`~tabmoe.interpret.explain.Explanation`: the label query's gate on each column
        per row (per head and head-averaged; for deeper models the last layer's gates), the
        model's logits, and — for a single one-layer ``block="attention"`` model without
        ``linear_term`` and not ``numeric_embedding="piecewise"`` — each
        column's additive contribution to each class logit plus a per-class bias, which sum
        to the logits (``n_layers="auto"`` fits two layers above 10,000 training rows, where
        ``contributions`` is None: set ``n_layers=1`` to keep them). Columns carry the names of
        ``X``; rows its index.
        """
        frame = self._prepare_X(X)  # checks that the estimator is fitted first
        tokens, attend, position = self._frame_tokens(frame)
        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(len(tokens))
        # the fitted columns, in their order (with missing="exclude" those absent from X too)
        names, classes = list(frame.columns), list(self.classes_)
        return explain_tokens(
            self.module_, tokens, attend, self.label_token_ids_, names, classes, index, self._predict_rows(), position
        )
