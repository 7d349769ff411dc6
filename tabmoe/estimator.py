"""``TabularMoEClassifier``: the scikit-learn face of the attention-MoE model."""

from __future__ import annotations

import numbers
import os
import warnings
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from . import defaults, persistence
from ._stack import user_stacklevel
from .ensemble import StackedModel, member_loss
from .explain import Explanation, explain_tokens, gate_importances
from .fitting import (
    PREDICT_BATCH_ROWS,
    SPEED_PARAMETER_CONSTRAINTS,
    TorchClassifierMixin,
    encode_targets,
    hold_out,
    resolve_mixed_precision,
    start_fit,
    use_early_stopping,
    validate_targets,
)
from .model import BLOCKS, GATES, TabularMoE
from .objective import MASKINGS, MaskedFeatureObjective, label_loss
from .tokenizer import MISSING, N_SPECIAL, ColumnTokenizer, to_frame
from .trainer import Trainer, TrainerConfig, seeded

#: At most this many labelled training rows are kept after ``fit`` (``train_sample_tokens_``):
#: :meth:`TabularMoEClassifier.adapt` mixes them into every step and
#: ``feature_importances_`` is computed on them, so memory does not grow with the data.
TRAIN_SAMPLE_ROWS = 10_000
MISSING_MODES = ("token", "exclude")
#: Training computes every column's output logits for every row of a batch: rows x W floats,
#: W = the summed vocabulary sizes. Batches are capped at this many logits (128 MiB in
#: float32, about 0.5 GiB with the copies autograd keeps); the cap binds only for columns with
#: ~10^5 or more categories. Measured at 10^6 categories: 256 rows per batch peak at 4.0 GiB.
MAX_BATCH_LOGITS = 2**25


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
    missing : {"token", "exclude"}
        ``"token"``: a missing value (NaN / None) is the MISSING token, attended like any
        value; a column absent from a DataFrame at predict time is a ValueError naming it.
        ``"exclude"`` (docs/paper.md section 5, exchangeability): missing values and columns
        absent from the DataFrame (matched by name) are left out of the attention — no
        imputation — at fit, predict, explain and adapt.
    feature_dropout : float
        Training only: each feature token of each row is left out of the attention (and not
        scored) with this probability, so the model learns to predict from column subsets.
        Opt-in (default 0): it cost OOD accuracy on the paper's simulation 5/0.9/0.
    n_members : int
        Ensemble size: independently initialised models trained side by side as one batched
        model (:class:`~tabmoe.ensemble.StackedModel`), probabilities averaged.
    compile : bool
        Run the training steps of ``fit`` and ``adapt`` (loss, forward and backward) through
        ``torch.compile`` with dynamic shapes. The first step of the first fit in a process
        compiles (tens of seconds on a CPU; later fits of the same configuration reuse it).
        ``module_`` stays the plain network; prediction, ``explain`` and the early-stopping
        validation loss run uncompiled. Where torch.compile fails, a UserWarning says why
        and training continues uncompiled. Speed: docs/guide/training.md.
    mixed_precision : bool or "auto"
        bf16 autocast (matmuls in bf16, softmax, norms and losses in float32) for training
        and prediction. ``True``: on CUDA and on the CPU (~12% faster epochs on a CPU with
        AVX512-BF16; slower on CPUs that emulate bf16); on other devices it has no effect
        and ``fit`` warns. ``"auto"``: on CUDA devices with bf16 only, float32 elsewhere.
        ``explain`` and ``feature_importances_`` are computed in float32.

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
    feature_importances_ : ndarray of shape (n_features,)
        Mean absolute head-averaged gate of the label query on each column over the stored
        training sample (at most ``TRAIN_SAMPLE_ROWS`` rows), normalised to sum to 1.
    train_sample_tokens_ : ndarray of shape (n_sample, n_features + 1)
        Tokens (label last) of at most ``TRAIN_SAMPLE_ROWS`` labelled training rows, drawn at
        random when there are more; used by :meth:`adapt` and ``feature_importances_``.
    train_sample_weight_ : ndarray of shape (n_sample,)
    adapt_history_ : list of dict
        Per epoch of the last :meth:`adapt` call, as ``history_``.
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
        "missing": [StrOptions(set(MISSING_MODES))],
        "feature_dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "n_members": [Interval(numbers.Integral, 1, None, closed="left")],
        **SPEED_PARAMETER_CONSTRAINTS,
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
        missing: Literal["token", "exclude"] = "token",
        feature_dropout: float = 0.0,
        n_members: int = 1,
        compile: bool = False,
        mixed_precision: bool | Literal["auto"] = False,
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
        self.missing = missing
        self.feature_dropout = feature_dropout
        self.n_members = n_members
        self.compile = compile
        self.mixed_precision = mixed_precision

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

    def _cap_rows_for_heads(self, rows: int) -> int:
        """Fewer rows per batch when the output layers are huge (see MAX_BATCH_LOGITS)."""
        sizes = self.tokenizer_.n_tokens_per_column_
        width = (int(sizes.sum()) + len(self.classes_)) * self.n_members  # logits a row
        cap = max(1, MAX_BATCH_LOGITS // width)
        if rows <= cap:
            return rows
        j = int(np.argmax(sizes))
        names = getattr(self, "feature_names_in_", None)
        labels = getattr(self.tokenizer_, "_column_labels", None)
        column = repr(names[j]) if names is not None else labels[j] if labels else f"#{j}"
        warnings.warn(
            f"Column {column} has {sizes[j]:,} categories: training batches are capped at "
            f"{cap} rows (instead of {rows}) to bound the memory of the output layers. Training "
            "time grows with rows x categories; consider min_frequency (e.g. 2 maps values "
            "seen once to UNKNOWN) or dropping the column.",
            UserWarning,
            stacklevel=user_stacklevel(),  # the caller of fit, through scikit-learn's _fit_context
        )
        return cap

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
        X_unlabeled: Any = None,
    ) -> TabularMoEClassifier:
        """Train on ``X`` (n_samples, n_features) and labels ``y`` (n_samples,).

        ``eval_set=(X_val, y_val)`` replaces the internal validation split for early
        stopping (and turns ``early_stopping="auto"`` on).

        ``X_unlabeled`` (n_unlabeled, n_features), same columns as ``X``: rows without a
        label. The tokenizer is fitted on ``X`` and ``X_unlabeled`` together, and their
        feature columns train the masked-feature objective (their label position holds MASK,
        which is not a class, so the label term skips them). A separate argument rather than
        scikit-learn's ``y == -1`` convention, because -1 is a real class in {-1, 1} problems.
        """
        self._check_architecture()
        masking = self._masking()
        inputs = start_fit(self, X, y, sample_weight)
        frame, y_codes, weight = inputs.frame, inputs.y_codes, inputs.weight
        seed, device = inputs.seed, inputs.device

        unlabeled = self._unlabeled_frame(frame, X_unlabeled)
        self.tokenizer_ = ColumnTokenizer(
            categorical_features=self.categorical_features,
            n_bins=self.n_bins,
            min_frequency=self.min_frequency,
            vocabulary=self.vocabulary,
        ).fit(frame if unlabeled is None else pd.concat([frame, unlabeled], ignore_index=True))
        self.label_token_ids_ = label_token_ids(self.tokenizer_, self.classes_)
        tokens = self._tokens(frame, y_codes)

        early = use_early_stopping(self.early_stopping, eval_set is not None, len(frame))
        train = self._rows(tokens, weight)
        validation = None
        if eval_set is not None:
            X_val, y_val = eval_set
            y_val = encode_targets(self.classes_, validate_targets(y_val), "eval_set y")
            val_tokens = self._tokens(X_val, y_val)
            validation = self._rows(val_tokens, np.ones(len(val_tokens)))
        elif early:
            train, validation = hold_out(train, y_codes, self.validation_fraction, seed)
        labelled = train
        if unlabeled is not None:
            extra = self._rows(self._tokens(unlabeled, None), np.ones(len(unlabeled)))
            train = {k: torch.cat([v, extra[k]]) for k, v in train.items()}

        config = TrainerConfig(
            max_epochs=self.max_epochs,
            batch_size=self._cap_rows_for_heads(
                self._rows_per_batch(len(train["tokens"]), tokens.shape[1], masking)
            ),
            lr=self.learning_rate,
            weight_decay=self.weight_decay,
            early_stopping=bool(early),
            n_iter_no_change=self.n_iter_no_change,
            tol=self.tol,
            device=device,
            seed=seed,
            verbose=self.verbose,
            mixed_precision=inputs.mixed_precision,
            compile=inputs.compile,
            description=type(self).__name__,
        )
        with seeded(seed, device):
            self.module_ = self._build_module()
            result = Trainer(config).fit(
                self.module_, train, self._objective(masking), validation=validation, val_loss_fn=label_loss
            )
        self.history_ = self._member_means(result.history)
        self.n_iter_ = len(result.history)
        self.best_epoch_ = result.best_epoch
        self._keep_train_sample(labelled, seed)
        return self

    def _build_module(self) -> TabularMoE | StackedModel:
        """A fresh network for the fitted tokenizer and label tokens; with ``n_members > 1``
        that many, initialised one after the other and stacked into one batched model."""
        tok = self.tokenizer_
        output_ids = [tok.output_token_ids(j) for j in range(tok.n_features_in_)]
        output_ids.append(self.label_token_ids_)
        members = [
            TabularMoE(
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
            for _ in range(self.n_members)
        ]
        return members[0] if self.n_members == 1 else StackedModel(members)

    @torch.no_grad()
    def _label_logits(self, X: Any) -> np.ndarray:
        """(n, n_classes) float32 logits, ``classes_`` order. ``X`` is checked once, then
        tokenized and run PREDICT_BATCH_ROWS rows at a time: memory beyond ``X`` and the
        output does not grow with the rows."""
        frame = self._prepare_X(X)  # checks that the estimator is fitted first
        batches = self.tokenizer_.transform_batches(frame, PREDICT_BATCH_ROWS)  # checks columns
        module, device = self.module_.eval(), self._module_device()
        out = np.empty((len(frame), len(self.classes_)), dtype=np.float32)
        column = np.searchsorted(np.sort(self.label_token_ids_), self.label_token_ids_)
        with self._predict_autocast():
            for rows, tokens in batches:
                attend = self._attend(tokens)
                batch = torch.from_numpy(tokens).to(device)
                att = None if attend is None else torch.from_numpy(attend).to(device)
                logits = module.label_logits(batch, att).float()
                out[rows] = logits[:, column].cpu().numpy()
        return out

    # ------------------------------- MoE view, missing columns, unlabeled rows, ensembles
    def _attend(self, tokens: np.ndarray) -> np.ndarray | None:
        """(n, L) bool: False where a token is left out of the attention (``missing="exclude"``)."""
        if self.missing != "exclude":
            return None
        return tokens != MISSING  # a label token is never MISSING

    def _rows(self, tokens: np.ndarray, weight: np.ndarray) -> dict[str, torch.Tensor]:
        """Training tensors of rows with tokens (n, L): tokens, weight and, if needed, attend."""
        rows = {"tokens": torch.from_numpy(tokens), "weight": torch.from_numpy(weight).float()}
        attend = self._attend(tokens)
        if attend is not None:
            rows["attend"] = torch.from_numpy(attend)
        return rows

    def _objective(self, masking: str):
        objective = MaskedFeatureObjective(
            masking, self.feature_loss_weight, self.mask_rate, self.feature_dropout
        )
        return objective if self.n_members == 1 else member_loss(objective)

    def _member_means(self, history: list[dict]) -> list[dict]:
        """Ensembles train on the sum of the members' losses; report the mean."""
        if self.n_members == 1:
            return history
        return [dict(r, train_loss=r["train_loss"] / self.n_members) for r in history]

    def _unlabeled_frame(self, frame: pd.DataFrame, X_unlabeled: Any) -> pd.DataFrame | None:
        if X_unlabeled is None:
            return None
        unlabeled = to_frame(X_unlabeled)
        if list(unlabeled.columns) != list(frame.columns):
            raise ValueError(
                "X_unlabeled must have the same columns as X, in the same order: X has "
                f"{list(frame.columns)[:10]}, X_unlabeled has {list(unlabeled.columns)[:10]}."
            )
        return unlabeled

    def _keep_train_sample(self, labelled: dict[str, torch.Tensor], seed: int) -> None:
        """Keep at most TRAIN_SAMPLE_ROWS labelled rows; compute feature_importances_ on them."""
        n = len(labelled["tokens"])
        keep = np.arange(n)
        if n > TRAIN_SAMPLE_ROWS:
            keep = np.sort(np.random.RandomState(seed).choice(n, TRAIN_SAMPLE_ROWS, replace=False))
        self.train_sample_tokens_ = labelled["tokens"][keep].numpy()
        self.train_sample_weight_ = labelled["weight"][keep].numpy()
        self._update_importances()

    def _update_importances(self) -> None:
        features = self.train_sample_tokens_[:, :-1]
        attend = self._attend(features)
        self.feature_importances_ = gate_importances(
            self.module_,
            torch.from_numpy(features),
            None if attend is None else torch.from_numpy(attend),
            PREDICT_BATCH_ROWS,
        )

    def _prepare_X(self, X: Any) -> pd.DataFrame:
        """Validated frame in the fitted column order; absent columns -> NaN (``"exclude"``)."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        if isinstance(X, pd.DataFrame) and names is not None:
            absent = [c for c in names if c not in X.columns]
            if absent:
                extra = [c for c in X.columns if c not in set(names)]
                if self.missing != "exclude" or extra:
                    raise ValueError(
                        f"Column(s) {absent} seen during fit are absent from X"
                        + (f", and X has column(s) {extra} not seen during fit." if extra else ".")
                        + (
                            " Create the estimator with missing='exclude' to predict without "
                            "absent columns (they are then left out of the attention)."
                            if self.missing != "exclude"
                            else ""
                        )
                    )
                X = X.reindex(columns=names)
        frame = to_frame(X)
        validate_data(self, X, skip_check_array=True, reset=False)
        return frame

    def _feature_tokens(self, X: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Feature tokens (n, n_features) and the attend mask (or None) of all of ``X`` (for
        ``explain``, whose output is many times their size; prediction tokenizes in batches)."""
        frame = self._prepare_X(X)  # checks that the estimator is fitted first
        tokens = self.tokenizer_.transform(frame)
        attend = self._attend(tokens)
        return torch.from_numpy(tokens), None if attend is None else torch.from_numpy(attend)

    def _column_names(self, X: Any) -> list:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return list(names)
        return list(to_frame(X).columns)

    def explain(self, X: Any) -> Explanation:
        """The MoE view of each row's label prediction (see :mod:`tabmoe.moe`).

        Returns an :class:`~tabmoe.explain.Explanation`: the label query's gate on each column
        per row (per head and head-averaged; for deeper models the last layer's gates), the
        model's logits, and — for a single one-layer ``block="attention"`` model — each
        column's additive contribution to each class logit plus a per-class bias, which sum
        to the logits. Columns carry the names of ``X``; rows its index.
        """
        tokens, attend = self._feature_tokens(X)
        index = X.index if isinstance(X, pd.DataFrame) else pd.RangeIndex(len(tokens))
        return explain_tokens(
            self.module_,
            tokens,
            attend,
            self.label_token_ids_,
            self._column_names(X),
            list(self.classes_),
            index,
            PREDICT_BATCH_ROWS,
        )

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
        their features are reconstructed), shuffled together, so every step mixes both.
        Adapting on target rows alone wrecks the label head (docs/paper.md section 8); keeping the
        labelled rows prevents that. ``X_target=None`` runs the same on the training sample
        alone (the control). ``learning_rate`` defaults to the fit's; the optimiser starts
        fresh. ``random_state`` (shuffling, dropout) defaults to the estimator's.
        """
        check_is_fitted(self)
        if not isinstance(max_epochs, numbers.Integral) or max_epochs < 1:
            raise ValueError(f"max_epochs must be a positive integer, got {max_epochs!r}.")
        lr = self.learning_rate if learning_rate is None else learning_rate
        if not lr > 0:
            raise ValueError(f"learning_rate must be > 0, got {learning_rate!r}.")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        data = self._rows(self.train_sample_tokens_, self.train_sample_weight_)
        if X_target is not None:
            target = self._tokens(self._prepare_X(X_target), None)
            extra = self._rows(target, np.ones(len(target)))
            data = {k: torch.cat([v, extra[k]]) for k, v in data.items()}
        masking = self._masking()
        device = self._module_device()
        config = TrainerConfig(
            max_epochs=max_epochs,
            batch_size=self._cap_rows_for_heads(
                self._rows_per_batch(len(data["tokens"]), data["tokens"].shape[1], masking),
            ),
            lr=lr,
            weight_decay=self.weight_decay,
            device=device,
            seed=seed,
            verbose=self.verbose,
            mixed_precision=resolve_mixed_precision(self.mixed_precision, device, warn=False),
            compile=bool(self.compile),
            description=f"{type(self).__name__}.adapt",
        )
        with seeded(seed, device):
            result = Trainer(config).fit(self.module_, data, self._objective(masking))
        self.adapt_history_ = self._member_means(result.history)
        self._update_importances()
        return self

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
