"""``TabularMoEClassifier``: the scikit-learn face of the attention-MoE model."""

from __future__ import annotations

import numbers
import os
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import defaults, persistence
from .fitting import (
    PREDICT_BATCH_ROWS,
    TorchClassifierMixin,
    encode_targets,
    hold_out,
    start_fit,
    use_early_stopping,
    validate_targets,
)
from .model import BLOCKS, GATES, TabularMoE
from .objective import MASKINGS, MaskedFeatureObjective, label_loss
from .tokenizer import N_SPECIAL, ColumnTokenizer, to_frame
from .trainer import Trainer, TrainerConfig, seeded


def label_token_ids(tokenizer: ColumnTokenizer, classes: np.ndarray) -> np.ndarray:
    """Token id of each class of the label column (appended after the feature columns).

    Per-column vocabularies: a fresh range after the features'. Shared vocabulary: a class
    equal to a feature code reuses that code's token (the paper's single code space); other
    classes get fresh ids.
    """
    start = tokenizer.n_tokens_
    if tokenizer.vocabulary != "shared":
        return start + np.arange(len(classes))
    index = tokenizer.shared_values_
    ids = index.get_indexer(pd.Index(classes, dtype=object)) + N_SPECIAL
    fresh = ids < N_SPECIAL
    ids[fresh] = start + np.arange(fresh.sum())
    return ids.astype(np.int64)


class TabularMoEClassifier(TorchClassifierMixin, ClassifierMixin, BaseEstimator):
    """Single- or multi-layer bidirectional attention trained with the masked-feature objective.

    Each column is a word position, each value a word, and the label one more column that is
    predicted from the others (Wibisono & Wang, UAI 2023). With one layer the model is a
    continuous bag-of-words model whose context weights are mixture-of-experts gates.

    ``TabularMoEClassifier(**tabmoe.paper_config())`` is the paper's exact configuration.

    Parameters
    ----------
    d_model, n_heads, ff_dim, n_layers, dropout :
        Architecture (paper: 20, 5, 5, 1, 0.1). Key dim per head is ``d_model // n_heads``.
    block : {"transformer", "attention"}
        ``"transformer"``: the paper's post-LN block. ``"attention"``: attention + linear
        readout only, the exact CBOW-MoE form.
    gate : {"softmax", "tanhmax"}
        Attention coefficients: probabilities, or signed TanhMax coefficients.
    categorical_features, n_bins, min_frequency, vocabulary :
        Passed to :class:`~tabmoe.tokenizer.ColumnTokenizer`.
    masking : {"auto", "leave_one_out", "copies", "random"}
        ``"auto"``: ``"leave_one_out"`` (every column masked in turn, in one pass) for one
        layer, ``"random"`` (the label plus each feature with probability ``mask_rate``)
        for deeper models. ``"copies"`` is the materialised reference form of leave-one-out.
    feature_loss_weight : float
        Weight of the feature-reconstruction terms relative to the label term (paper: 1.0;
        0.0 trains the label only).
    mask_rate : float
        Feature masking probability of ``masking="random"``.
    max_epochs : int
    batch_size : int or "auto"
        Rows per batch. ``"auto"``: the paper's 128 masked copies per batch (about 128 / L
        rows, L = number of columns including the label) on tables of at most 10,000 rows,
        256 rows per batch above that.
    learning_rate, weight_decay : float
        AdamW (eps 1e-7 as in Keras; weight decay skips biases, norms and embeddings).
    early_stopping : "auto" or bool
        ``"auto"``: on when an ``eval_set`` is passed to ``fit`` or the training data has more
        than 10,000 rows. Stops on the validation label log-loss, restoring the best weights.
    validation_fraction : float
        Share of the training rows held out (stratified) for early stopping without eval_set.
    n_iter_no_change : int
        Epochs without improvement of at least ``tol`` before stopping.
    tol : float
    class_weight : dict, "balanced" or None
    device : str
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState or None
    verbose : int
        ``>0`` shows a progress bar over epochs.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    tokenizer_ : ColumnTokenizer
    module_ : TabularMoE (torch module, eval mode)
    label_token_ids_ : ndarray of shape (n_classes,)
    history_ : list of dict
        Per epoch: ``epoch``, ``train_loss``, ``seconds`` and ``val_loss`` when validating.
    n_iter_ : int
        Epochs run.
    best_epoch_ : int or None
        Epoch whose weights were kept by early stopping.
    """

    _parameter_constraints: dict = {
        "d_model": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_heads": [Interval(numbers.Integral, 1, None, closed="left")],
        "ff_dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_layers": [Interval(numbers.Integral, 1, None, closed="left")],
        "dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "block": [StrOptions(set(BLOCKS))],
        "gate": [StrOptions(set(GATES))],
        "categorical_features": [StrOptions({"auto", "all"}), "array-like"],
        "n_bins": [Interval(numbers.Integral, 2, None, closed="left")],
        "min_frequency": [Interval(numbers.Integral, 1, None, closed="left")],
        "vocabulary": [StrOptions({"per_column", "shared"})],
        "masking": [StrOptions(set(MASKINGS))],
        "feature_loss_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "mask_rate": [Interval(numbers.Real, 0, 1, closed="both")],
        "max_epochs": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "weight_decay": [Interval(numbers.Real, 0, None, closed="left")],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "device": [str, torch.device],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        d_model: int = 20,
        n_heads: int = 5,
        ff_dim: int = 5,
        n_layers: int = 1,
        dropout: float = 0.1,
        block: Literal["transformer", "attention"] = "transformer",
        gate: Literal["softmax", "tanhmax"] = "softmax",
        categorical_features: Any = "auto",
        n_bins: int = 10,
        min_frequency: int = 1,
        vocabulary: Literal["per_column", "shared"] = "per_column",
        masking: Literal["auto", "leave_one_out", "copies", "random"] = "auto",
        feature_loss_weight: float = 1.0,
        mask_rate: float = 0.15,
        max_epochs: int = 200,
        batch_size: int | Literal["auto"] = "auto",
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        early_stopping: bool | Literal["auto"] = "auto",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-4,
        class_weight: dict | Literal["balanced"] | None = None,
        device: str = "auto",
        random_state: int | np.random.RandomState | None = None,
        verbose: int = 0,
    ):
        self.d_model = d_model
        self.n_heads = n_heads
        self.ff_dim = ff_dim
        self.n_layers = n_layers
        self.dropout = dropout
        self.block = block
        self.gate = gate
        self.categorical_features = categorical_features
        self.n_bins = n_bins
        self.min_frequency = min_frequency
        self.vocabulary = vocabulary
        self.masking = masking
        self.feature_loss_weight = feature_loss_weight
        self.mask_rate = mask_rate
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.class_weight = class_weight
        self.device = device
        self.random_state = random_state
        self.verbose = verbose

    # ----------------------------------------------------------- resolved
    def _masking(self) -> str:
        if self.masking == "auto":
            return "leave_one_out" if self.n_layers == 1 else "random"
        if self.masking in ("leave_one_out", "copies") and self.n_layers != 1:
            raise ValueError(
                f"masking={self.masking!r} needs n_layers=1 (got n_layers={self.n_layers}); "
                "use masking='random' or 'auto' for deeper models."
            )
        return self.masking

    def _rows_per_batch(self, n_rows: int, n_columns: int, masking: str) -> int:
        if self.batch_size != "auto":
            return int(self.batch_size)
        if n_rows > defaults.AUTO_EARLY_STOPPING_ROWS:
            return defaults.AUTO_LARGE_BATCH
        copies_per_row = n_columns if masking in ("leave_one_out", "copies") else 1
        return max(1, round(defaults.AUTO_BATCH_COPIES / copies_per_row))

    def _check_architecture(self) -> None:
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}."
            )

    # ---------------------------------------------------------------- fit
    def _tokens(self, X: Any, y_codes: np.ndarray | None) -> np.ndarray:
        """(n, L) token ids, label in the last column (MASK when y_codes is None)."""
        feats = self.tokenizer_.transform(X)
        out = np.empty((feats.shape[0], feats.shape[1] + 1), dtype=np.int32)
        out[:, :-1] = feats
        out[:, -1] = 0 if y_codes is None else self.label_token_ids_[y_codes]
        return out

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        eval_set: tuple[Any, Any] | None = None,
    ) -> TabularMoEClassifier:
        """Train on ``X`` (n_samples, n_features) and labels ``y`` (n_samples,).

        ``eval_set=(X_val, y_val)`` replaces the internal validation split for early
        stopping (and turns ``early_stopping="auto"`` on).
        """
        self._check_architecture()
        masking = self._masking()
        inputs = start_fit(self, X, y, sample_weight)
        frame, y_codes, weight = inputs.frame, inputs.y_codes, inputs.weight
        seed, device = inputs.seed, inputs.device

        self.tokenizer_ = ColumnTokenizer(
            categorical_features=self.categorical_features,
            n_bins=self.n_bins,
            min_frequency=self.min_frequency,
            vocabulary=self.vocabulary,
        ).fit(frame)
        self.label_token_ids_ = label_token_ids(self.tokenizer_, self.classes_)
        tokens = self._tokens(frame, y_codes)

        early = use_early_stopping(self.early_stopping, eval_set is not None, len(frame))
        train = {"tokens": torch.from_numpy(tokens), "weight": torch.from_numpy(weight).float()}
        validation = None
        if eval_set is not None:
            X_val, y_val = eval_set
            y_val = encode_targets(self.classes_, validate_targets(y_val), "eval_set y")
            val_tokens = self._tokens(X_val, y_val)
            validation = {
                "tokens": torch.from_numpy(val_tokens),
                "weight": torch.ones(len(val_tokens)),
            }
        elif early:
            train, validation = hold_out(train, y_codes, self.validation_fraction, seed)

        config = TrainerConfig(
            max_epochs=self.max_epochs,
            batch_size=self._rows_per_batch(len(train["tokens"]), tokens.shape[1], masking),
            lr=self.learning_rate,
            weight_decay=self.weight_decay,
            early_stopping=bool(early),
            n_iter_no_change=self.n_iter_no_change,
            tol=self.tol,
            device=device,
            seed=seed,
            verbose=self.verbose,
            description=type(self).__name__,
        )
        objective = MaskedFeatureObjective(masking, self.feature_loss_weight, self.mask_rate)
        with seeded(seed, device):
            self.module_ = self._build_module()
            result = Trainer(config).fit(
                self.module_, train, objective, validation=validation, val_loss_fn=label_loss
            )
        self.history_ = result.history
        self.n_iter_ = len(result.history)
        self.best_epoch_ = result.best_epoch
        return self

    def _build_module(self) -> TabularMoE:
        """A fresh network for the fitted tokenizer and label tokens."""
        tok = self.tokenizer_
        output_ids = [tok.output_token_ids(j) for j in range(tok.n_features_in_)]
        output_ids.append(self.label_token_ids_)
        return TabularMoE(
            int(max(tok.n_tokens_, self.label_token_ids_.max() + 1)),
            output_ids,
            d_model=self.d_model,
            n_heads=self.n_heads,
            ff_dim=self.ff_dim,
            n_layers=self.n_layers,
            dropout=self.dropout,
            block=self.block,
            gate=self.gate,
        )

    # ------------------------------------------------------------ predict
    @torch.no_grad()
    def _label_logits(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        frame = to_frame(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        tokens = torch.from_numpy(self.tokenizer_.transform(frame))
        module, device = self.module_.eval(), self._module_device()
        out = np.empty((len(tokens), len(self.classes_)), dtype=np.float32)
        column = np.searchsorted(np.sort(self.label_token_ids_), self.label_token_ids_)
        for start in range(0, len(tokens), PREDICT_BATCH_ROWS):
            batch = tokens[start : start + PREDICT_BATCH_ROWS].to(device)
            logits = module.label_logits(batch).float()
            out[start : start + PREDICT_BATCH_ROWS] = logits[:, column].cpu().numpy()
        return out

    # -------------------------------------------------------------- state
    def save(self, path: str | os.PathLike) -> None:
        """Save the fitted model to ``path`` in a format that runs no code on load.

        JSON documents + tensors, read back with ``torch.load(weights_only=True)``; see
        :mod:`tabmoe.persistence`.
        """
        persistence.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "cpu") -> TabularMoEClassifier:
        """Load a model written by :meth:`save` onto ``device`` (default CPU)."""
        return persistence.load(path, device=device)
