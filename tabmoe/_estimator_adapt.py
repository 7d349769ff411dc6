"""Unsupervised adaptation of a fitted :class:`~tabmoe.TabularMoEClassifier` to target
rows: :meth:`adapt` (a mixin of the estimator: it continues training the estimator's own
network with its own objective, and owns no state beyond ``adapt_history_``; the network's
gates move, so it recomputes ``feature_importances_`` on the stored training sample)."""

from __future__ import annotations

import copy
import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from ._frame import match_kinds, unlabeled_frame
from ._stack import errors_about
from .nn._base import draw_seed, resolve_mixed_precision
from .nn._threads import scoped_threads
from .nn.trainer import Trainer, TrainerConfig, seeded

if TYPE_CHECKING:
    from .estimator import TabularMoEClassifier


class AdaptMixin:
    """``adapt`` of :class:`~tabmoe.TabularMoEClassifier`, the checks of parameters it shares
    with ``fit``, and the check of ``fit``'s ``X_unlabeled``."""

    def _unlabeled_frame(self, frame: pd.DataFrame, X_unlabeled: Any) -> pd.DataFrame | None:
        """``X_unlabeled`` read as every estimator reads it (:func:`~tabmoe._frame.unlabeled_frame`),
        its columns of ``X``'s kinds: the tokenizer is fitted on both (None without it)."""
        if X_unlabeled is None:
            return None
        unlabeled = unlabeled_frame(frame, X_unlabeled, self._columns_by_label)
        return match_kinds(frame, unlabeled, "X_unlabeled")

    def _check_training_params(self) -> None:
        """The cross-parameter checks of ``fit`` on parameters that ``adapt`` trains with too
        (architecture, depth and masking, ``unknown`` and ``unknown_rate``): ``fit``'s
        ``_check_params`` runs them, and ``adapt`` runs them on what ``set_params`` left."""
        self._check_architecture()
        self._check_n_layers()  # raises for a bool, or a masking a given depth cannot use
        if self.unknown == "exclude" and self.unknown_rate > 0:
            raise ValueError(
                "unknown_rate trains the UNKNOWN token, which unknown='exclude' never attends to: "
                f"set unknown_rate=0 or unknown='token' (got unknown_rate={self.unknown_rate!r})."
            )

    @scoped_threads
    def adapt(
        self,
        X_target: Any = None,
        *,
        max_epochs: int = 10,
        learning_rate: float | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> TabularMoEClassifier:
        """Continue training on unlabeled target-domain rows mixed with the training rows.

        Runs ``max_epochs`` epochs of the fit objective (masked features + label) over the
        union of the stored labelled training sample (``train_sample_tokens_``, at most
        ``TRAIN_SAMPLE_ROWS`` rows) and the rows of ``X_target`` (label position MASK, so only
        their features are reconstructed; each weighted as the mean labelled row), shuffled
        together, so every step mixes both.
        Adapting on target rows alone wrecks the label head (docs/paper.md section 8); keeping the
        labelled rows prevents that. ``X_target=None`` runs the same on the training sample
        alone (the control). ``learning_rate`` defaults to the fit's; the optimiser starts
        fresh. ``random_state`` (shuffling, dropout) defaults to the estimator's.
        """
        check_is_fitted(self)
        if getattr(self, "train_sample_tokens_", None) is None:  # an AttributeError named no cause
            raise ValueError(
                "Cannot adapt: the model holds no stored training sample (train_sample_tokens_); "
                "it was loaded from a file written before adapt() existed. Refit it first."
            )
        self._validate_params()  # set_params validates nothing: fit's constraints, by name
        self._check_network_parameters("adapt")
        self._check_training_params()  # fit's checks: a combination fit refuses, adapt refuses
        if not isinstance(max_epochs, numbers.Integral) or isinstance(max_epochs, bool) or max_epochs < 1:
            raise ValueError(f"max_epochs must be a positive integer, got {max_epochs!r}.")
        lr = self.learning_rate if learning_rate is None else learning_rate
        if not isinstance(lr, numbers.Real) or isinstance(lr, bool) or not 0 < lr < math.inf:
            raise ValueError(f"learning_rate must be a finite number > 0, got {learning_rate!r}.")
        try:  # fit's rule
            seed = draw_seed(self.random_state if random_state is None else random_state)
        except ValueError as exc:  # numpy's "Seed must be between 0 and 2**32 - 1" named nothing
            raise ValueError(f"adapt's random_state must be None, an int in [0, 2**32 - 1] or a "
                             f"RandomState, got {random_state!r} ({exc}).") from None
        data = self._rows(
            self.train_sample_tokens_, self.train_sample_weight_, getattr(self, "train_sample_position_", None)
        )
        if X_target is not None:
            # empty or 1-d (scikit-learn's words), inf ("Input X contains infinity"): name X_target
            with errors_about("X_target"):
                frame = self._prepare_X(X_target)
                target, position = self._tokens(frame, None), self._positions(frame)
            weight = np.full(len(target), float(np.mean(self.train_sample_weight_)))  # as the mean labelled row
            extra = self._rows(target, weight, position)
            data = {k: torch.cat([v, extra[k]]) for k, v in data.items()}
        masking, device, tokens = self._masking(), self._module_device(), data["tokens"]
        config = TrainerConfig(
            max_epochs=max_epochs,
            batch_size=self._cap_rows_for_heads(self._rows_per_batch(len(tokens), tokens.shape[1], masking), len(tokens)),
            lr=lr,
            weight_decay=self.weight_decay,
            max_grad_norm=self.max_grad_norm,
            n_members=self.n_members,  # train_loss: the members' mean
            device=device,
            seed=seed,
            verbose=self.verbose,
            mixed_precision=resolve_mixed_precision(self.mixed_precision, device, warn=False),
            compile=bool(self.compile),
            description=f"{type(self).__name__}.adapt",
        )
        for layer in self.module_.modules():  # a dropout set after fit, as a saved and loaded copy has it
            if isinstance(layer, torch.nn.Dropout):
                layer.p = float(self.dropout)
        before = copy.deepcopy(self.module_.state_dict())
        recorded = {k: v for k, v in vars(self).items() if k in ("adapt_history_", "feature_importances_")}
        try:
            with seeded(seed, device):
                result = Trainer(config).fit(self.module_, data, self._objective(masking))
            self.adapt_history_ = result.history
            self._update_importances()  # interrupted here, the adapted weights stayed
        except BaseException:  # a diverged (or interrupted) adaptation leaves the fitted model as it was
            self.module_.load_state_dict(before)
            vars(self).pop("adapt_history_", None)
            vars(self).update(recorded)
            raise
        return self
