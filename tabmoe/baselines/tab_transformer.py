"""TabTransformer (Huang et al. 2020) from ``tab-transformer-pytorch==0.3.0``.

Paper architecture: only the categorical columns become tokens (a per-value embedding of
``dim - dim // 8`` plus a per-column embedding of ``dim // 8``) and go through ``depth``
pre-norm transformer blocks; their contextual embeddings, flattened, are concatenated with
the layer-normed continuous columns and fed to an MLP of widths ``input * mlp_hidden_mults``.

Guard against the library's aliasing defect: it keeps one embedding table for all columns
and adds per-column offsets, so a code at or past a column's cardinality silently reads the
NEXT column's embeddings. Here every code comes from
:class:`~tabmoe.baselines.encoding.TableEncoder`, whose MISSING (0) and UNKNOWN (1) codes are
reserved rows of each column's own range, and :func:`check_codes` raises ``IndexError`` on
any code outside its column's range instead of aliasing. The classifier checks the codes
while they are numpy arrays on the CPU (a check of device tensors would wait for the device
at every batch, and break ``torch.compile``'s graph); :class:`TabTransformerNetwork` checks
CPU inputs too, outside ``torch.compile``.

Continuous columns: the encoder has already standardised them. ``nn.LayerNorm`` over fewer
than three values discards their magnitude (one value: a constant; two: only the sign of
their difference), so with one or two continuous inputs the norm is skipped (identity).

Shapes: B rows, n_cat categorical tokens, n_num continuous inputs, d = ``dim``.
"""

from __future__ import annotations

import numbers
from typing import Any, Literal

import numpy as np
import torch
from sklearn.utils._param_validation import Interval
from torch import Tensor, nn

from .._optional import optional_import
from .torch_base import TRAINER_PARAMETER_CONSTRAINTS, TorchTabularClassifier

#: Huang et al. 2020 (dim 32, depth 6, 8 heads, MLP 4x and 2x the input width, dropout
#: 0.1 as in the package's README); learning rate 1e-4 as docs/paper.md section 7 ran it.
PAPER_DEFAULTS: dict = {
    "dim": 32,
    "depth": 6,
    "heads": 8,
    "dim_head": 16,
    "attn_dropout": 0.1,
    "ff_dropout": 0.1,
    "mlp_hidden_mults": (4, 2),
    "learning_rate": 1e-4,
}

#: LayerNorm over fewer continuous inputs than this keeps no magnitude: it is skipped.
MIN_CONTINUOUS_FOR_NORM = 3


def suggest(trial: Any) -> dict:
    """Optuna search space around Huang et al. 2020's architecture (their default dim 32,
    depth 6, 8 heads lie inside it); the ranges are this package's: any integer depth and
    head count, continuous dropouts and a log learning rate, not the discrete grid of their
    appendix."""
    return {
        "dim": trial.suggest_categorical("dim", [16, 32, 64]),
        "depth": trial.suggest_int("depth", 1, 6),
        "heads": trial.suggest_int("heads", 2, 8),
        "attn_dropout": trial.suggest_float("attn_dropout", 0.0, 0.5),
        "ff_dropout": trial.suggest_float("ff_dropout", 0.0, 0.5),
        "learning_rate": trial.suggest_float("learning_rate", 1e-5, 1e-2, log=True),
        "weight_decay": trial.suggest_float("weight_decay", 1e-6, 1e-3, log=True),
    }


def check_codes(codes: np.ndarray | Tensor, cardinalities: np.ndarray | Tensor) -> None:
    """IndexError naming the column positions of ``codes`` (n, n_cat), a CPU array or tensor,
    that hold a code outside ``0 .. cardinalities[j] - 1``."""
    codes, cardinalities = np.asarray(codes), np.asarray(cardinalities)
    if not codes.shape[1]:
        return
    outside = (codes < 0) | (codes >= cardinalities)
    if outside.any():
        bad = np.flatnonzero(outside.any(axis=0))
        raise IndexError(
            f"Categorical codes out of range in column position(s) {bad.tolist()}: "
            "TabTransformer would read another column's embedding."
        )


class TabTransformerNetwork(nn.Module):
    """The package's ``TabTransformer`` behind ``forward(codes, numeric)``, range-checked."""

    def __init__(
        self, cardinalities: list[int], n_numeric: int, n_classes: int, **architecture: Any
    ):
        super().__init__()
        TabTransformer = optional_import("tab_transformer_pytorch", "TabTransformer")
        self.model = TabTransformer(
            categories=tuple(cardinalities),
            num_continuous=n_numeric,
            dim_out=n_classes,
            **architecture,
        )
        if 0 < n_numeric < MIN_CONTINUOUS_FOR_NORM:
            self.model.norm = nn.Identity()
        self.register_buffer("cardinalities", torch.tensor(list(cardinalities), dtype=torch.long))

    def forward(self, codes: Tensor, numeric: Tensor) -> Tensor:
        """codes (B, n_cat) int64, numeric (B, n_num) float32 -> logits (B, n_classes)."""
        # On a device the check would wait for it every batch: the classifier checks instead.
        if codes.device.type == "cpu" and not torch.compiler.is_compiling():
            check_codes(codes, self.cardinalities)
        return self.model(codes, numeric)


class TabTransformerClassifier(TorchTabularClassifier):
    """TabTransformer as a scikit-learn classifier (defaults: Huang et al. 2020, lr 1e-4).

    Parameters
    ----------
    dim, depth, heads, dim_head : int
        Token width, transformer blocks, attention heads and width per head.
    attn_dropout, ff_dropout : float
        Dropout on attention weights and in the feed-forward blocks.
    mlp_hidden_mults : tuple of int
        Hidden widths of the head MLP as multiples of its input width.
    learning_rate : float
        Default 1e-4 (docs/paper.md section 7).

    Notes
    -----
    The training parameters and fitted attributes are those of
    :class:`~tabmoe.baselines.torch_base.TorchTabularClassifier`.
    """

    _parameter_constraints: dict = {
        **TRAINER_PARAMETER_CONSTRAINTS,
        "dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "depth": [Interval(numbers.Integral, 1, None, closed="left")],
        "heads": [Interval(numbers.Integral, 1, None, closed="left")],
        "dim_head": [Interval(numbers.Integral, 1, None, closed="left")],
        "attn_dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "ff_dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "mlp_hidden_mults": [tuple, list],
    }

    _network_sizes = ("dim", "depth", "heads", "dim_head")

    def __init__(
        self,
        dim: int = 32,
        depth: int = 6,
        heads: int = 8,
        dim_head: int = 16,
        attn_dropout: float = 0.1,
        ff_dropout: float = 0.1,
        mlp_hidden_mults: tuple[int, ...] = (4, 2),
        categorical_features: Any = "auto",
        min_frequency: int = 1,
        max_epochs: int = 200,
        batch_size: int = 128,
        learning_rate: float = 1e-4,
        weight_decay: float = 0.0,
        early_stopping: bool | str = True,
        validation_fraction: float | int | Literal["auto"] = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-4,
        class_weight: dict | str | None = None,
        device: str | torch.device = "auto",
        random_state: Any = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        compile: bool = False,
        mixed_precision: bool | str = False,
    ):
        self.dim = dim
        self.depth = depth
        self.heads = heads
        self.dim_head = dim_head
        self.attn_dropout = attn_dropout
        self.ff_dropout = ff_dropout
        self.mlp_hidden_mults = mlp_hidden_mults
        self.categorical_features = categorical_features
        self.min_frequency = min_frequency
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
        self.compile = compile
        self.mixed_precision = mixed_precision

    def _check_params(self) -> None:
        mults = self.mlp_hidden_mults
        # a bool is an Integral: True would widen a layer 1x without a word
        if not all(isinstance(m, numbers.Integral) and not isinstance(m, bool) and m >= 1 for m in mults):
            raise ValueError(f"mlp_hidden_mults must hold positive integers (not bools), got {mults!r}.")

    def _training_rows(self, X: Any, y_codes: np.ndarray, weight: np.ndarray) -> dict[str, Tensor]:
        rows = super()._training_rows(X, y_codes, weight)
        check_codes(rows["codes"], self.encoder_.cardinalities_)
        return rows

    def _encoded_logits(self, codes: np.ndarray, numeric: np.ndarray) -> np.ndarray:
        check_codes(codes, self.encoder_.cardinalities_)
        return super()._encoded_logits(codes, numeric)

    def _build_network(self, cardinalities: list[int], n_numeric: int, n_classes: int) -> nn.Module:
        return TabTransformerNetwork(
            cardinalities,
            n_numeric,
            n_classes,
            dim=self.dim,
            depth=self.depth,
            heads=self.heads,
            dim_head=self.dim_head,
            attn_dropout=self.attn_dropout,
            ff_dropout=self.ff_dropout,
            mlp_hidden_mults=tuple(self.mlp_hidden_mults),
        )
