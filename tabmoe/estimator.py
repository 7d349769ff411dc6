"""``TabularMoEClassifier``: the scikit-learn face of the attention-MoE model."""

from __future__ import annotations

import numbers
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _paper_config as defaults
from ._estimator_adapt import AdaptMixin
from ._estimator_explain import ExplainMixin
from ._estimator_predict import PredictMixin
from ._estimator_state import EstimatorStateMixin
from ._estimator_tokens import TokenInputsMixin
from ._frame import fitted_columns, validated_frame
from .nn._base import (
    FIT_PARAMETER_CONSTRAINTS,
    SPEED_PARAMETER_CONSTRAINTS,
    FitInputs,
    TorchClassifier,
    predict_batch_rows,
)
from .nn._batching import cap_rows_for_heads, max_rows_for_scores, warn_attention_scores
from .nn._sizes import check_network_sizes
from .nn.ensemble import MemberLoss, StackedModel
from .nn.network import BLOCKS, GATES, TabularMoE
from .nn.objective import MASKINGS, MaskedFeatureObjective, label_loss
from .nn.trainer import LossFn, TrainResult
from .tokenizer import ColumnTokenizer

#: At most this many labelled training rows are kept after ``fit`` (``train_sample_tokens_``):
#: :meth:`TabularMoEClassifier.adapt` mixes them into every step and
#: ``feature_importances_`` is computed on them, so memory does not grow with the data.
TRAIN_SAMPLE_ROWS = 10_000
TOKEN_MODES = ("token", "exclude")  # how MISSING (`missing`) and UNKNOWN (`unknown`) are read


class TabularMoEClassifier(
    PredictMixin, ExplainMixin, AdaptMixin, EstimatorStateMixin, TokenInputsMixin, TorchClassifier
):
    """Single- or multi-layer bidirectional attention trained with the masked-feature objective.

    Each column is a word position, each value a word, and the label one more column that is
    predicted from the others (Wibisono & Wang, UAI 2023). With one layer the model is a
    continuous bag-of-words model whose context weights are mixture-of-experts gates.

    ``TabularMoEClassifier(**tabmoe.paper_config())`` is the paper's exact configuration
    (sized for 245-2,000-row, 6-7-column tables, the label included); the defaults are for
    general tables, chosen on ID-validation accuracy over the openml-ood splits
    (docs/research.md).

    Parameters
    ----------
    d_model, n_heads, ff_dim, dropout :
        Architecture (default 64, 4, 128, 0.0; paper: 20, 5, 5, 0.1). Key dim per head
        is ``d_model // n_heads``. Dropout 0 from study 16, replicated in study 18
        (docs/research.md#study-16, #study-18).
    n_layers : int or "auto"
        Attention layers (default ``"auto"``; paper: 1). ``"auto"``: 2 when ``fit`` trains on
        more than 10,000 rows, else 1, counting the labelled rows of ``X`` before the
        early-stopping hold-out, as ``validation_fraction="auto"`` does (not ``X_unlabeled``).
        There a second layer gained +0.0029 / +0.0033 ID validation on seeds 0-2 / 3-5, at
        1.67x the fit time (docs/research.md#study-43). The fitted depth is ``n_layers_``;
        only one layer has the exact MoE form (``n_layers=1`` keeps it on any table).
    block : {"transformer", "attention"}
        ``"transformer"``: the paper's post-LN block. ``"attention"``: attention + linear
        readout only, the exact CBOW-MoE form.
    gate : {"softmax", "tanhmax"}
        Attention coefficients: probabilities, or signed TanhMax coefficients.
    embedding_init : float
        Half-width of the uniform draw the token embeddings start from (default and paper:
        0.05, Keras's ``Embedding`` default, a fifth of the column embeddings' scale). 0.25
        passed study 56's rule (+0.0033 ID validation over 140 pairs, 49/60/31; ID test
        -0.0003) and did not replicate on fresh seeds (-0.0007, 16/36/18; study 57), so 0.05
        stays (docs/research.md#study-56, #study-57).
    linear_term : bool
        Add to the label's output a learned vector per feature value, summed over the
        columns: a term of the label logits linear in the one-hot features, a logistic
        regression beside the MoE (values unseen at fit add nothing, unless ``unknown_rate``
        or ``min_frequency`` trains UNKNOWN). Needs ``vocabulary="per_column"``. Default
        False (docs/research.md#study-27). The exact MoE decomposition, ``explain``'s
        contributions and ``feature_importances_`` (the gates) leave it out.
    categorical_features, n_bins, min_frequency, vocabulary :
        Passed to :class:`~tabmoe.tokenizer.ColumnTokenizer`.
        Default ``n_bins="auto"``: the Rice rule, ``round(2 n^(1/3))`` bins from the ``n`` rows
        of ``X`` and ``X_unlabeled`` (26 at 2,100; docs/research.md#study-12; was 20, study 5).
    numeric_embedding : {"ordered", "piecewise", "bins"}
        ``"ordered"`` (default, docs/research.md#study-5): thermometer embeddings, bin k's is
        the sum of k + 1 learned steps, so neighbouring bins share parameters.
        ``"piecewise"`` (docs/research.md#study-33): steps 0..k-1 plus the value's position
        in bin k times step k, continuous in the value (piecewise-linear encoding).
        ``"bins"``: each quantile bin its own embedding (unordered tokens, as before).
    masking : {"auto", "leave_one_out", "copies", "random"}
        ``"auto"``: ``"leave_one_out"`` (every column masked in turn, in one pass) for one
        layer, ``"random"`` (the label plus each feature with probability ``mask_rate``)
        for deeper models. ``"copies"`` is the materialised reference form of leave-one-out.
    feature_loss_weight : float
        Weight of each feature-reconstruction term relative to the label term (default 0.1;
        paper: 1.0, which makes the label 1/L of the loss; 0.0 trains the label only).
    feature_warmup_epochs : int
        ``fit`` only: the feature weight starts at 1 (the paper's objective) and moves
        linearly to ``feature_loss_weight`` over this many epochs (default 0: constant).
        Early stopping may end a fit inside the warm-up. Opt-in: 10 epochs were level on
        ID validation, 25 lower (docs/research.md#study-14).
    mask_rate : float
        Feature masking probability of ``masking="random"``.
    max_scored_features : int or None
        ``leave_one_out`` training only: each batch scores the label and this many feature
        columns, drawn at random (inflated to stand for the rest); None (default): all. A
        speed option for wide tables; 16 and 8 cost accuracy (docs/research.md#study-7).
    max_epochs : int
        At most this many epochs (default 100; paper: 200).
    batch_size : int, "auto" or "paper"
        Rows per batch. ``"auto"``: training rows // 16 (about 16 steps per epoch), at least
        16 and at most 256 rows. ``"paper"``: the paper's 128 masked copies
        per batch (about 128 / L rows, L = number of columns including the label) on tables
        of at most 10,000 rows, 256 rows per batch above that.
    learning_rate, weight_decay : float
        AdamW (eps 1e-7 as in Keras; weight decay skips biases, norms and embeddings).
    early_stopping : bool or "auto"
        Stop on the validation label log-loss, restoring the best weights (default True; the
        paper: False). ``"auto"``: on when an ``eval_set`` is passed to ``fit`` or the
        training data has more than 10,000 rows.
    validation_fraction : "auto", float or int
        Rows held out (stratified where each class fits on both sides; each class keeps a
        training row) for early stopping without eval_set: a share of the rows, or, an integer,
        a number of rows (as HistGradientBoosting's). ``"auto"`` (default): 10%, at most 100
        rows on tables of at most 10,000 rows
        (docs/research.md#study-29, #study-32; was 0.1).
    n_iter_no_change : int or "auto"
        Epochs without improvement of at least ``tol`` before stopping. ``"auto"``
        (default): AutoGluon's adaptive patience, 10 + round(0.3 x (best epoch - 1)) epochs
        after the best so far, so a fit whose best epoch comes late waits longer (10 after a
        best at epoch 1, 22 after one at epoch 41). Chosen on ID validation
        (docs/research.md#study-59, replicated in #study-75 on a third set of seeds; was 10);
        out of distribution it was 0.001-0.003 lower on each set of seeds.
    refit : bool
        After early stopping on the ``validation_fraction`` hold-out, train a fresh network
        (same seed) on every training row, the hold-out included, for ``best_epoch_`` epochs,
        as scikit-learn's searches refit after choosing (default False: the early-stopped
        network). Each refit epoch has n / (n - hold-out rows) times the steps, the rows
        per batch being the same. No effect with an ``eval_set``, without early
        stopping, or when no epoch improved. Opt-in: it lowered ID validation
        (docs/research.md#study-22).
    lr_decay_patience : int or None
        ``fit`` only: the learning rate is divided by 5 after this many epochs without a
        ``tol`` improvement of the validation (else training) loss; None (default): constant.
        Opt-in: 3 and 5 lowered ID validation (docs/research.md#study-15).
    lr_warmup_epochs : int
        ``fit`` only: the learning rate rises linearly from ``learning_rate`` / S to
        ``learning_rate`` over the S steps of this many epochs (default 0: no warm-up).
        Opt-in: 1 and 5 lowered ID validation (docs/research.md#study-41).
    ema_decay : float or None
        ``fit`` only: validate, keep and return an exponential moving average of the weights
        (Polyak averaging, torch's ``AveragedModel``), updated after every step with this
        decay; None (default): the weights themselves (docs/research.md#study-24).
    max_grad_norm : float or None
        Rescale each step's gradients to at most this L2 norm over all weights (torch's
        ``clip_grad_norm_``), in ``fit`` and ``adapt``; None (default): no clipping
        (docs/research.md#study-39).
    tol : float
        Least decrease of the validation loss that counts as an improvement (default 1e-4).
    class_weight : dict, "balanced" or None
        Per-class weights multiplying ``sample_weight`` (``"balanced"``: scikit-learn's
        ``n_samples / (n_classes * counts)``); only their relative size matters.
    device : str or torch.device
        ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
    random_state : int, RandomState or None
    n_jobs : int or None
        torch CPU threads in ``fit``, prediction, ``explain`` and ``adapt`` (``None``: 1,
        or joblib's ``parallel_config``; ``-1``: every core), the caller's setting restored
        (one thread is the default: docs/guide/training.md says why).
    verbose : int
        ``>0`` shows a progress bar over epochs, and a line on the finished fit.
    missing : {"token", "exclude"}
        ``"token"``: a missing value (NaN / None) is the MISSING token, attended like any
        value; a column absent from a DataFrame at predict time is a ValueError naming it.
        ``"exclude"`` (docs/paper.md section 5, exchangeability): missing values and columns
        absent from the DataFrame (matched by label: names, or other labels such as ints and
        tuples) are left out of the attention — no imputation — at fit, predict, explain and
        adapt (``fit``'s ``X`` and ``eval_set`` hold every column; absent ones are NaN there).
    unknown : {"token", "exclude", "borrow"}
        ``"token"``: a category unseen at fit (or rarer than ``min_frequency``; or a number in
        a numeric column missing in every training row) is the UNKNOWN token.
        ``"exclude"``: it is left out of the attention, as an absent column.
        ``"borrow"`` (opt-in; docs/research.md#study-70, not replicated): predict reads a row's
        one UNKNOWN category (unseen, or rarer than ``min_frequency`` in its column) that
        other categorical columns kept (a board's ``"x"``, an ordinal ``"vhigh"``) as their
        tokens of it, averaging the label's probabilities over them; else as ``"token"``, as
        are explain and adapt, and every row with ``vocabulary="shared"``.
        Each is read whenever rows are read: ``set_params`` after fit changes how the fitted
        network reads them (predict, explain, adapt) without a refit; an invalid value is
        refused there as at fit.
    label_smoothing : float
        Training (``fit``, ``adapt``) only: targets of every scored column put ``1 -
        label_smoothing`` on the true value, the rest spread evenly over its values (default 0).
    feature_dropout : float
        Training only: each feature token of each row is left out of the attention (and not
        scored) with this probability, so the model learns to predict from column subsets.
        Opt-in (default 0): it cost OOD accuracy on the paper's simulation 5/0.9/0.
    unknown_rate : float
        Training only: each observed feature value of each row is replaced in the inputs (not
        in the targets) by the UNKNOWN token with this probability, so the UNKNOWN token that
        categories unseen at fit map to is trained.
    n_members : int
        Ensemble size: independently initialised models trained side by side as one batched
        model (:class:`~tabmoe.nn.ensemble.StackedModel`), probabilities averaged. Default 1: two
        members took about twice the fit time and gained no ID accuracy (research studies 11, 35).
    compile : bool
        Run the training steps of ``fit`` and ``adapt`` (loss, forward and backward) through
        ``torch.compile`` with dynamic shapes. The first step of the first fit in a process
        compiles (tens of seconds on a CPU; later fits of the same configuration reuse it).
        ``module_`` stays the plain network; prediction, ``explain`` and the early-stopping
        validation loss run uncompiled. Where torch.compile fails, a UserWarning says why
        and training continues uncompiled. Speed: docs/guide/training.md.
    mixed_precision : bool or "auto"
        bf16 autocast (matmuls in bf16; softmax, norms, losses and the label head in
        float32) for training and prediction. ``True``: on GPUs with native bf16 (CC 8.0+)
        and on the CPU (~12% faster epochs on a CPU with AVX512-BF16; slower where bf16 is
        emulated); elsewhere (``mps``, a T4 or V100) it has no effect, and ``fit`` warns.
        ``"auto"``: on GPUs with native bf16 only.
        ``explain`` and ``feature_importances_`` are computed in float32.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str (DataFrame input with string column names only)
    tokenizer_ : ColumnTokenizer
    module_ : TabularMoE (torch module, eval mode)
    numeric_embedding_ : str
        The numeric embedding of ``module_`` (``numeric_embedding`` at fit).
    n_layers_ : int
        The attention layers of ``module_``: ``n_layers``, or the depth ``"auto"`` chose.
    label_token_ids_ : ndarray of shape (n_classes,)
    history_ : list of dict
        Per epoch: ``epoch``, ``train_loss``, ``seconds``, ``val_loss`` when validating,
        ``lr`` with ``lr_decay_patience`` or ``lr_warmup_epochs``.
    n_iter_ : int
        Epochs run, a refit's included (``len(history_) + len(refit_history_)``).
    best_epoch_ : int or None
        Epoch whose weights early stopping kept (None without it); with a refit, its epochs.
    refit_history_ : list of dict or None
        Per epoch of the refit on every training row, as ``history_``; None without one.
    feature_importances_ : ndarray of shape (n_features,)
        Absolute gate of the label query on each column (taken per head and member),
        averaged over the heads, the ensemble members and the stored training sample (at
        most ``TRAIN_SAMPLE_ROWS`` rows), normalised to sum to 1 (all 0 if it attends to no
        column, every value left out by ``"exclude"``): where the label attends, not what a
        column adds (``sklearn.inspection.permutation_importance`` measures that).
    train_sample_tokens_ : ndarray of shape (n_sample, n_features + 1)
        Tokens (label last) of at most ``TRAIN_SAMPLE_ROWS`` labelled training rows, drawn at
        random when there are more; used by :meth:`adapt` and ``feature_importances_``.
    train_sample_weight_ : ndarray of shape (n_sample,)
    train_sample_position_ : ndarray of shape (n_sample, n_features + 1) or None
        Their values' positions in their bins (``numeric_embedding="piecewise"``; else None).
    adapt_history_ : list of dict
        Per epoch of the last :meth:`adapt` call, as ``history_``.
    """

    _columns_by_label = True  # the tokenizer keeps non-string labels
    _parameter_constraints: dict = {
        "d_model": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_heads": [Interval(numbers.Integral, 1, None, closed="left")],
        "ff_dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_layers": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "embedding_init": [Interval(numbers.Real, 0, None, closed="neither")],
        "block": [StrOptions(set(BLOCKS))],
        "gate": [StrOptions(set(GATES))],
        "linear_term": ["boolean"],
        "n_bins": [Interval(numbers.Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "numeric_embedding": [StrOptions({"bins", "ordered", "piecewise"})],
        "vocabulary": [StrOptions({"per_column", "shared"})],
        "masking": [StrOptions(set(MASKINGS))],
        "feature_loss_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "mask_rate": [Interval(numbers.Real, 0, 1, closed="both")],
        "max_scored_features": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "batch_size": [StrOptions({"auto", "paper"}), Interval(numbers.Integral, 1, None, closed="left")],
        **FIT_PARAMETER_CONSTRAINTS,
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "missing": [StrOptions(set(TOKEN_MODES))],
        "unknown": [StrOptions({*TOKEN_MODES, "borrow"})],
        "label_smoothing": [Interval(numbers.Real, 0, 1, closed="left")],
        "feature_warmup_epochs": [Interval(numbers.Integral, 0, None, closed="left")],
        "lr_warmup_epochs": [Interval(numbers.Integral, 0, None, closed="left")],
        "lr_decay_patience": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "refit": ["boolean"],
        "ema_decay": [Interval(numbers.Real, 0, 1, closed="neither"), None],
        "max_grad_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "feature_dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "n_members": [Interval(numbers.Integral, 1, None, closed="left")],
        "unknown_rate": [Interval(numbers.Real, 0, 1, closed="left")],
        **SPEED_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        d_model: int = 64,
        n_heads: int = 4,
        ff_dim: int = 128,
        n_layers: int | Literal["auto"] = "auto",
        dropout: float = 0.0,
        block: Literal["transformer", "attention"] = "transformer",
        gate: Literal["softmax", "tanhmax"] = "softmax",
        embedding_init: float = 0.05,
        categorical_features: Any = "auto",
        n_bins: int | Literal["auto"] = "auto",
        numeric_embedding: Literal["bins", "ordered", "piecewise"] = "ordered",
        min_frequency: int = 1,
        vocabulary: Literal["per_column", "shared"] = "per_column",
        masking: Literal["auto", "leave_one_out", "copies", "random"] = "auto",
        feature_loss_weight: float = 0.1,
        mask_rate: float = 0.15,
        max_scored_features: int | None = None,
        max_epochs: int = 100,
        batch_size: int | Literal["auto", "paper"] = "auto",
        learning_rate: float = 1e-3,
        weight_decay: float = 0.0,
        early_stopping: bool | Literal["auto"] = True,
        validation_fraction: float | int | Literal["auto"] = "auto",
        n_iter_no_change: int | Literal["auto"] = "auto",
        tol: float = 1e-4,
        class_weight: dict | Literal["balanced"] | None = None,
        device: str | torch.device = "auto",
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        missing: Literal["token", "exclude"] = "token",
        feature_dropout: float = 0.0,
        n_members: int = 1,
        compile: bool = False,
        mixed_precision: bool | Literal["auto"] = False,
        unknown_rate: float = 0.0,
        unknown: Literal["token", "exclude", "borrow"] = "token",
        label_smoothing: float = 0.0,
        feature_warmup_epochs: int = 0,
        lr_decay_patience: int | None = None,
        refit: bool = False,
        ema_decay: float | None = None,
        linear_term: bool = False,
        max_grad_norm: float | None = None,
        lr_warmup_epochs: int = 0,
    ):
        self.d_model = d_model
        self.n_heads = n_heads
        self.ff_dim = ff_dim
        self.n_layers = n_layers
        self.dropout = dropout
        self.block = block
        self.gate = gate
        self.embedding_init = embedding_init
        self.categorical_features = categorical_features
        self.n_bins = n_bins
        self.numeric_embedding = numeric_embedding
        self.min_frequency = min_frequency
        self.vocabulary = vocabulary
        self.masking = masking
        self.feature_loss_weight = feature_loss_weight
        self.mask_rate = mask_rate
        self.max_scored_features = max_scored_features
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
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.missing = missing
        self.feature_dropout = feature_dropout
        self.n_members = n_members
        self.compile = compile
        self.mixed_precision = mixed_precision
        self.unknown_rate = unknown_rate
        self.unknown = unknown
        self.label_smoothing = label_smoothing
        self.feature_warmup_epochs = feature_warmup_epochs
        self.lr_decay_patience = lr_decay_patience
        self.refit = refit
        self.ema_decay = ema_decay
        self.linear_term = linear_term
        self.max_grad_norm = max_grad_norm
        self.lr_warmup_epochs = lr_warmup_epochs

    # ----------------------------------------------------------- resolved
    def rows_per_batch(self, n_rows: int) -> int:
        """Rows per training step that ``fit`` / ``adapt`` of this fitted model use on
        ``n_rows`` rows (``batch_size="auto"`` resolved; before the cap of huge vocabularies)."""
        check_is_fitted(self)
        if not isinstance(n_rows, numbers.Integral) or isinstance(n_rows, bool) or n_rows < 1:
            raise ValueError(f"n_rows must be a positive integer, got {n_rows!r}.")
        return self._rows_per_batch(n_rows, self.n_features_in_ + 1, self._masking())

    def _rows_per_batch(self, n_rows: int, n_columns: int, masking: str) -> int:
        if self.batch_size == "auto":
            return int(np.clip(n_rows // defaults.AUTO_STEPS_PER_EPOCH, *defaults.AUTO_BATCH_ROWS))
        if self.batch_size != "paper":
            return int(self.batch_size)
        if n_rows > defaults.AUTO_EARLY_STOPPING_ROWS:
            return defaults.AUTO_LARGE_BATCH
        copies_per_row = n_columns if masking in ("leave_one_out", "copies") else 1
        return max(1, round(defaults.AUTO_BATCH_COPIES / copies_per_row))

    def _cap_rows_for_heads(self, rows: int, n_rows: int) -> int:
        """Fewer rows per batch when the output layers are huge, and a warning when the
        attention scores are (a wide table; nn/_batching.py); a batch holds <= ``n_rows``."""
        names = getattr(self, "feature_names_in_", None)
        labels = self.tokenizer_.fitted_column_labels()
        if names is not None:
            labels = [repr(n) for n in names]
        sizes = self.tokenizer_.n_tokens_per_column_
        rows = cap_rows_for_heads(rows, sizes, len(self.classes_), int(self.n_members), labels, n_rows)
        L, k, masking = self.n_features_in_ + 1, self.max_scored_features, self._masking()
        queries = k + 1 if masking == "leave_one_out" and k is not None and k < L - 1 else L
        copies = L if masking == "copies" else 1  # masked copies of each row
        factor = copies * (2 if self.gate == "tanhmax" else 1) * int(self.n_members)
        warn_attention_scores(min(rows, n_rows), int(self.n_heads), queries, L, factor)
        return rows

    _network_sizes = ("d_model", "n_heads", "ff_dim")  # refused as a bool (nn/_sizes.py)

    def _check_architecture(self) -> None:
        check_network_sizes(self)
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}."
            )

    # ---------------------------------------------------------------- fit
    def _tokens(self, X: Any, y_codes: np.ndarray | None) -> np.ndarray:
        """(n, L) token ids, label in the last column (MASK when y_codes is None)."""
        feats = self._transform(X)
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
        label, each weighted as the mean labelled training row. The tokenizer is fitted on both;
        their feature columns train the masked-feature objective (label position MASK, not a
        class, so the label term skips them). A separate argument rather than scikit-learn's
        ``y == -1`` convention, because -1 is a real class in {-1, 1} problems.
        """
        return self._fit(X, y, sample_weight, eval_set, X_unlabeled=X_unlabeled)

    # ------------------------------------------- the hooks of TorchClassifier's fit sequence
    def _check_params(self) -> None:
        self._check_training_params()  # the checks adapt runs too (_estimator_adapt.py)
        if self.linear_term and self.vocabulary == "shared":
            raise ValueError(
                "linear_term=True needs a token per (column, value): with vocabulary='shared' "
                "columns share token ids and the term would tie them; set vocabulary='per_column' "
                "or linear_term=False."
            )

    def _initialize_front_end(self, inputs: FitInputs, X_unlabeled: Any = None) -> Any:
        """Resolve ``n_layers_``; fit ``tokenizer_`` (on ``X`` and ``X_unlabeled``) and ``label_token_ids_``."""
        self._resolve_n_layers(inputs.n_weighted)
        unlabeled = self._unlabeled_frame(inputs.frame, X_unlabeled)
        self.tokenizer_ = self._fitted_tokenizer(inputs.frame, unlabeled)  # (on both; errors name X_unlabeled)
        self.label_token_ids_ = self.tokenizer_.label_token_ids(self.classes_)
        self._warn_unsaveable()
        self.numeric_embedding_ = self.numeric_embedding  # the network's, whatever set_params does
        return unlabeled

    def _new_tokenizer(self) -> ColumnTokenizer:  # a hook: study 61's research subclass
        return ColumnTokenizer(categorical_features=self.categorical_features, n_bins=self.n_bins,
                               min_frequency=self.min_frequency, vocabulary=self.vocabulary)

    def _training_rows(self, X: Any, y_codes: np.ndarray, weight: np.ndarray) -> dict[str, torch.Tensor]:
        return self._rows(self._tokens(X, y_codes), weight, self._positions(X))

    def _add_unlabeled_rows(self, train: dict[str, torch.Tensor], unlabeled: pd.DataFrame) -> dict[str, torch.Tensor]:
        weight = np.full(len(unlabeled), float(train["weight"].mean()))  # sample_weight's scale: no say
        extra = self._rows(self._tokens(unlabeled, None), weight, self._positions(unlabeled))
        return {k: torch.cat([v, extra[k]]) for k, v in train.items()}

    def _batch_size(self, train: dict[str, torch.Tensor]) -> int:
        tokens = train["tokens"]
        return self._cap_rows_for_heads(self._rows_per_batch(len(tokens), tokens.shape[1], self._masking()), len(tokens))

    def _initialize_module(self) -> TabularMoE | StackedModel:
        return self._build_module()

    def _get_loss(self) -> LossFn:
        return self._objective(self._masking(), self.feature_warmup_epochs)

    def _get_val_loss(self) -> LossFn:
        return label_loss

    def _refit(self) -> bool:  # asked where a refit would run: early stopping on a hold-out of X
        if self.refit and self.lr_decay_patience is not None:
            raise ValueError(
                "refit=True replays the early-stopped fit's epoch count, not its learning-rate "
                f"schedule: set lr_decay_patience=None or refit=False (got lr_decay_patience="
                f"{self.lr_decay_patience!r})."
            )
        return self.refit

    def _trainer_options(self) -> dict[str, Any]:
        options = {"lr_decay_patience": self.lr_decay_patience, "ema_decay": self.ema_decay,
                   "max_grad_norm": self.max_grad_norm, "lr_warmup_epochs": self.lr_warmup_epochs,
                   "n_members": self.n_members}  # train_loss: the members' mean
        if self.n_iter_no_change == "auto":
            options["patience_rate"] = defaults.AUTO_PATIENCE_RATE
        return options

    def _patience(self) -> int:
        return defaults.AUTO_PATIENCE if self.n_iter_no_change == "auto" else int(self.n_iter_no_change)

    def _record_fit(
        self, result: TrainResult, labelled: dict[str, torch.Tensor], seed: int, refit: TrainResult | None = None
    ) -> None:
        super()._record_fit(result, labelled, seed, refit)
        vars(self).pop("adapt_history_", None)  # the new network is not the adapted one (save wrote it)
        self._keep_train_sample(labelled, seed)

    # ------------------------------- MoE view, missing columns, unlabeled rows, ensembles
    def _objective(self, masking: str, warmup_epochs: int = 0):
        objective = MaskedFeatureObjective(
            masking, self.feature_loss_weight, self.mask_rate, self.feature_dropout,
            self.unknown_rate, self.max_scored_features, self.label_smoothing, warmup_epochs,
        )
        return objective if self.n_members == 1 else MemberLoss(objective)

    def _keep_train_sample(self, labelled: dict[str, torch.Tensor], seed: int) -> None:
        """Keep at most TRAIN_SAMPLE_ROWS labelled rows; compute feature_importances_ on them."""
        n = len(labelled["tokens"])
        keep = np.arange(n)
        if n > TRAIN_SAMPLE_ROWS:
            keep = np.sort(np.random.RandomState(seed).choice(n, TRAIN_SAMPLE_ROWS, replace=False))
        self.train_sample_tokens_ = labelled["tokens"][keep].numpy()
        self.train_sample_weight_ = labelled["weight"][keep].numpy()
        self.train_sample_position_ = labelled["fraction"][keep].numpy() if "fraction" in labelled else None
        self._update_importances()

    def _max_eval_rows(self) -> int:
        """Rows a pass outside training holds at most: ``MAX_BATCH_SCORES`` attention scores,
        heads x queries x positions a row (every position's query in a deeper network's first
        layer, the label's alone in a one-layer network), twice for tanhmax, per member."""
        L, slots = self.n_features_in_ + 1, 2 if self.gate == "tanhmax" else 1
        queries = L if self.n_layers_ > 1 else 1
        return max_rows_for_scores(int(self.n_heads) * queries * L * slots * int(self.n_members))

    def _predict_rows(self) -> int:
        """Rows a forward pass, by the widest activation a position holds: ``d_model``, and in
        a layer that computes every position's query (all but the last, which computes the
        label's) the ``ff_dim`` hidden layer and ``n_heads`` x positions attention scores
        (twice that for tanhmax's signed slots); per member. At most ``_max_eval_rows()``:
        the 256-row floor of a wide table's batch held more than that budget of scores."""
        # int(): a numpy int16 d_model made 2**23 // width an OverflowError at the end of fit
        positions, width = self.n_features_in_ + 1, int(self.d_model)
        if self.n_layers_ > 1:
            slots = 2 if self.gate == "tanhmax" else 1
            hidden = int(self.ff_dim) if self.block == "transformer" else 0
            width = max(width, hidden, int(self.n_heads) * positions * slots)
        return min(predict_batch_rows(positions, width * int(self.n_members)), self._max_eval_rows())

    def _prepare_X(self, X: Any) -> pd.DataFrame:
        """Validated frame in the fitted column order; absent columns -> NaN (``"exclude"``)."""
        check_is_fitted(self)
        self._check_token_modes()
        labels = self.tokenizer_.fitted_column_labels()
        X = fitted_columns(X, getattr(self, "feature_names_in_", None), labels, self.missing)
        return validated_frame(self, X, labels)
