"""TabM (Gorishniy et al. 2025, "TabM: Advancing tabular deep learning with
parameter-efficient ensembling") from the authors' ``tabm`` package.

One TabM is an ensemble of ``k`` MLPs that share most of their weights (BatchEnsemble-style
adapters on shared linear layers, ``arch_type="tabm"``), all trained at once. As the
authors' reference training does:

* training minimises the mean over the ``k`` members of each member's cross-entropy (every
  member sees the same batch);
* the prediction is the mean of the members' probabilities: in eval mode the network
  returns ``log(mean_k softmax(logits_k))``, so the shared early-stopping rule (validation
  log-loss) watches the ensemble, not single members;
* AdamW with lr 2e-3 and weight decay 3e-4, ``k=32`` and ``TabM.make``'s backbone defaults
  (3 blocks of 512, dropout 0.1), patience 16 epochs.

Categorical codes of :class:`~tabmoe.baselines.encoding.TableEncoder` enter one-hot (the
package's own ``_OneHotEncoding``, sized by the encoder's cardinalities, reserved MISSING
and UNKNOWN codes included). One-hot is dense, so a column's width is capped
(``max_categories=256``: the 254 most frequent values keep their own column, the rest share
UNKNOWN's); uncapped, a 10^5-category column made one fit take over 8 minutes and 3.3 GiB.
The standardised numeric block enters as is (plain TabM; the
optional piecewise-linear numeric embeddings of TabM-dagger are not used).

Differences from the authors' training: their runs clip the gradient's norm at 1.0, which
the baselines' shared trainer does not do for them (no baseline takes ``max_grad_norm``);
numerics are standardised where they used a noisy quantile transform (the shared encoder's
rule, which keeps out-of-range values under shift); early stopping watches the validation
log loss with ``tol=1e-4`` and a 200-epoch cap, where they stop on validation accuracy
without a cap; a category unseen at fit sets its column's UNKNOWN one-hot slot (trained
only where the column had values rarer than ``min_frequency``), where the ``tabm``
package's one-hot has no slot for it (its codes must lie in the fitted range); they
trained with mixed precision (bf16 AMP), here float32 unless ``mixed_precision`` is set.
The committed benchmark runs were made so.

Shapes: B rows, k members, C classes.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Literal

import torch
import torch.nn.functional as F
from sklearn.utils._param_validation import Interval, StrOptions
from torch import Tensor, nn

from .._optional import optional_import
from .encoding import ENCODER_PARAMETER_CONSTRAINTS
from .torch_base import TRAINER_PARAMETER_CONSTRAINTS, TorchTabularClassifier

#: The authors' defaults (``TabM.make`` and the paper's default optimiser).
PAPER_DEFAULTS: dict = {
    "k": 32,
    "n_blocks": 3,
    "d_block": 512,
    "dropout": 0.1,
    "arch_type": "tabm",
    "learning_rate": 2e-3,
    "weight_decay": 3e-4,
}


def suggest(trial: Any) -> dict:
    """Optuna search space of the TabM paper (appendix, TabM without embeddings); ``k``
    stays 32 as in the paper."""
    use_dropout = trial.suggest_categorical("use_dropout", [False, True])
    use_decay = trial.suggest_categorical("use_weight_decay", [False, True])
    return {
        "n_blocks": trial.suggest_int("n_blocks", 1, 5),
        "d_block": trial.suggest_int("d_block", 64, 1024, step=16),
        "dropout": trial.suggest_float("dropout", 0.0, 0.5) if use_dropout else 0.0,
        "learning_rate": trial.suggest_float("learning_rate", 1e-4, 5e-3, log=True),
        "weight_decay": (
            trial.suggest_float("weight_decay", 1e-4, 1e-1, log=True) if use_decay else 0.0
        ),
    }


class TabMNetwork(nn.Module):
    """``tabm.TabM`` behind the baselines' ``forward(codes, numeric)``: per-member logits
    (B, k, C) in training mode, the log of the members' mean probability (B, C) in eval."""

    def __init__(self, cardinalities: list[int], n_numeric: int, n_classes: int, **backbone: Any):
        super().__init__()
        TabM = optional_import("tabm", "TabM")
        self.model = TabM.make(
            n_num_features=n_numeric,
            cat_cardinalities=list(cardinalities) or None,
            d_out=n_classes,
            **backbone,
        )

    def forward(self, codes: Tensor, numeric: Tensor) -> Tensor:
        """codes (B, n_cat) int64, numeric (B, n_num) float32 -> (B, k, C) or (B, C)."""
        x_num = numeric if numeric.shape[1] else None
        x_cat = codes if codes.shape[1] else None
        logits = self.model(x_num, x_cat)  # (B, k, C)
        if self.training:
            return logits
        k = logits.shape[1]
        return torch.logsumexp(F.log_softmax(logits.float(), dim=-1), dim=1) - math.log(k)


def member_mean_loss(module: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
    """Weighted sum over rows of the mean over members of the cross-entropy, and the weights."""
    logits = module(batch["codes"], batch["numeric"]).float()  # (B, k, C)
    rows, k, n_classes = logits.shape
    nll = F.cross_entropy(
        logits.reshape(rows * k, n_classes), batch["y"].repeat_interleave(k), reduction="none"
    ).view(rows, k).mean(dim=1)
    return (nll * batch["weight"]).sum(), batch["weight"].sum()


class TabMClassifier(TorchTabularClassifier):
    """TabM as a scikit-learn classifier (defaults: the authors').

    Parameters
    ----------
    k : int, default=32
        Ensemble members.
    n_blocks, d_block, dropout :
        The MLP backbone (``TabM.make``'s defaults: 3 blocks of width 512, dropout 0.1).
    arch_type : {"tabm", "tabm-mini", "tabm-packed"}, default="tabm"
        The package's weight-sharing variants.
    learning_rate, weight_decay : float
        AdamW; defaults 2e-3 and 3e-4 (the paper's).
    max_categories : int or None, default=256
        One-hot width cap per categorical column (MISSING and UNKNOWN included); ``None``
        keeps every value.
    batch_size : int, default=256
    n_iter_no_change : int, default=16
        The paper's patience.

    Notes
    -----
    The training parameters and fitted attributes are those of
    :class:`~tabmoe.baselines.torch_base.TorchTabularClassifier`.
    """

    _parameter_constraints: dict = {
        **TRAINER_PARAMETER_CONSTRAINTS,
        "k": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_blocks": [Interval(numbers.Integral, 1, None, closed="left")],
        "d_block": [Interval(numbers.Integral, 1, None, closed="left")],
        "dropout": [Interval(numbers.Real, 0, 1, closed="left")],
        "arch_type": [StrOptions({"tabm", "tabm-mini", "tabm-packed"})],
        "max_categories": ENCODER_PARAMETER_CONSTRAINTS["max_categories"],
    }

    _network_sizes = ("k", "n_blocks", "d_block")

    def __init__(
        self,
        k: int = 32,
        n_blocks: int = 3,
        d_block: int = 512,
        dropout: float = 0.1,
        arch_type: str = "tabm",
        categorical_features: Any = "auto",
        min_frequency: int = 1,
        max_categories: int | None = 256,
        max_epochs: int = 200,
        batch_size: int = 256,
        learning_rate: float = 2e-3,
        weight_decay: float = 3e-4,
        early_stopping: bool | str = True,
        validation_fraction: float | int | Literal["auto"] = 0.1,
        n_iter_no_change: int = 16,
        tol: float = 1e-4,
        class_weight: dict | str | None = None,
        device: str | torch.device = "auto",
        random_state: Any = None,
        n_jobs: int | None = None,
        verbose: int = 0,
        compile: bool = False,
        mixed_precision: bool | str = False,
    ):
        self.k = k
        self.n_blocks = n_blocks
        self.d_block = d_block
        self.dropout = dropout
        self.arch_type = arch_type
        self.categorical_features = categorical_features
        self.min_frequency = min_frequency
        self.max_categories = max_categories
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

    def _encoder_params(self) -> dict:
        return {**super()._encoder_params(), "max_categories": self.max_categories}

    def _train_loss(self, module: nn.Module, batch: dict[str, Tensor]) -> tuple[Tensor, Tensor]:
        return member_mean_loss(module, batch)

    def _build_network(self, cardinalities: list[int], n_numeric: int, n_classes: int) -> nn.Module:
        return TabMNetwork(
            cardinalities,
            n_numeric,
            n_classes,
            k=self.k,
            n_blocks=self.n_blocks,
            d_block=self.d_block,
            dropout=self.dropout,
            arch_type=self.arch_type,
        )
