"""TabNet (Arik & Pfister 2021) from ``pytorch-tabnet``, behind a scikit-learn adapter.

TabNet keeps its own training loop (ghost batch normalisation, sparsemax masks, its
sparsity loss and callbacks); the adapter gives it what the other baselines have:

* DataFrame input through :class:`~tabmoe.baselines.encoding.TableEncoder` (categorical
  codes into TabNet's per-column embeddings, standardised numerics), so NaN and unseen
  categories become reserved codes instead of an ``IndexError`` inside an embedding;
* ``ClassifierMixin`` (``score``), ``classes_``, any label type, sample and class weights
  (TabNet's weighted sampler), the shared early-stopping rule on the validation log-loss
  (over every training class, so validation rows that lack a class still score);
* a guard against its small-data failure: with its defaults (batch 1024, ``drop_last``) a
  table of under 1024 rows trains ZERO batches and still returns an untrained model with a
  plausible score. Here the batch is at most the training rows, the virtual (ghost) batch
  at most the batch, the batch a whole number of ghost batches (so no batch-norm chunk has a
  single row), and ``fit`` counts the optimisation steps and raises if there were none.
"""

from __future__ import annotations

import contextlib
import io
import numbers
import sys
import warnings
from typing import Any, Literal

import numpy as np
import torch
from sklearn.base import _fit_context
from sklearn.metrics import log_loss
from sklearn.utils._param_validation import Interval, StrOptions

from .._frame import unlabeled_frame
from .._optional import optional_import
from .._stack import catch_warnings, warnings_about
from ..nn._base import FitInputs
from ..nn._plateau import warn_if_at_prior
from ..nn._sizes import check_network_sizes
from ..nn.trainer import TrainResult, float32_default, seeded
from .torch_base import TRAINING_PARAMETER_CONSTRAINTS, TorchTabularClassifier

try:
    from pytorch_tabnet.callbacks import Callback
    from pytorch_tabnet.metrics import Metric
except ImportError:  # optional dependency: fit() raises with the install hint
    Callback = Metric = object

#: pytorch-tabnet's defaults (TabModel and ``fit``), as its README lists them.
PAPER_DEFAULTS: dict = {
    "n_d": 8,
    "n_a": 8,
    "n_steps": 3,
    "gamma": 1.3,
    "n_independent": 2,
    "n_shared": 2,
    "momentum": 0.02,
    "lambda_sparse": 1e-3,
    "learning_rate": 2e-2,
    "batch_size": 1024,
    "virtual_batch_size": 128,
    "max_epochs": 100,
    "n_iter_no_change": 10,
}

#: Messages pytorch-tabnet prints or warns on every fit; the adapter reports through
#: ``history_`` instead.
_TABNET_CHATTER = (
    "Device used",
    "No early stopping will be performed",
    "Best weights from best epoch are automatically used",
    "Loading weights from unsupervised pretraining",
)


def suggest(trial: Any) -> dict:
    """Optuna search space from the pytorch-tabnet README (n_d = n_a tied, as it advises).

    The learning-rate range is ours (around the README's default 2e-2).
    """
    width = trial.suggest_int("n_d", 8, 64)
    return {
        "n_d": width,
        "n_a": width,
        "n_steps": trial.suggest_int("n_steps", 3, 10),
        "gamma": trial.suggest_float("gamma", 1.0, 2.0),
        "n_independent": trial.suggest_int("n_independent", 1, 5),
        "n_shared": trial.suggest_int("n_shared", 1, 5),
        "momentum": trial.suggest_float("momentum", 0.01, 0.4),
        "lambda_sparse": trial.suggest_float("lambda_sparse", 1e-6, 1e-3, log=True),
        "learning_rate": trial.suggest_float("learning_rate", 5e-3, 5e-2, log=True),
    }


def tabnet_batch_sizes(n_train: int, batch_size: int, virtual_batch_size: int) -> tuple[int, int]:
    """(batch, ghost batch) that train at least one step on ``n_train >= 2`` rows.

    The batch is at most the rows (``drop_last`` then still leaves one batch per epoch), the
    ghost batch at most the batch, and the batch a multiple of the ghost batch, so batch
    norm never sees a one-row chunk.
    """
    batch = min(batch_size, n_train)
    virtual = min(virtual_batch_size, batch)
    return batch - batch % virtual, virtual


class StepCounter(Callback):
    """Counts TabNet's optimisation steps (one per training batch)."""

    def __init__(self) -> None:
        super().__init__()
        self.n_steps = 0

    def on_batch_end(self, batch: int, logs: dict | None = None) -> None:
        self.n_steps += 1


class ClassLogLoss(Metric):
    """Log-loss over every class TabNet trains on, for its early stopping.

    pytorch-tabnet's ``"logloss"`` calls ``log_loss`` without the class list, which raises
    when the validation rows lack a class. Its scores have one column per training class
    (codes ``0..k-1``), so the columns give the labels. pytorch-tabnet instantiates metrics
    by name without arguments, hence no constructor parameters: ``sample_weight`` (the
    validation rows' weights, in their order) is set on the instance by
    :class:`ValidationWeights` for one fit.
    """

    _name = "tabmoe_logloss"
    _maximize = False
    sample_weight: np.ndarray | None = None

    def __call__(self, y_true: np.ndarray, y_score: np.ndarray) -> float:
        if y_score.shape[1] == 1:  # one class trained (the others weighted 0): certain, loss 0
            return 0.0
        labels = np.arange(y_score.shape[1])
        return float(log_loss(y_true, y_score, labels=labels, sample_weight=self.sample_weight))


class ValidationWeights(Callback):
    """Weights the validation log-loss of one fit by the held-out rows' weights (sample and
    class weights), as every other model's early stopping does: it hands them to the
    :class:`ClassLogLoss` pytorch-tabnet made, and takes them back at the end. pytorch-tabnet
    scores its validation rows in their order (an unshuffled loader that keeps every row)."""

    def __init__(self, weight: np.ndarray) -> None:
        super().__init__()
        self.weight = weight

    def _set(self, weight: np.ndarray | None) -> None:
        for container in self.trainer._metric_container_dict.values():
            for metric in container.metrics:
                if isinstance(metric, ClassLogLoss):
                    metric.sample_weight = weight

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._set(self.weight)

    def on_train_end(self, logs: dict | None = None) -> None:
        self._set(None)


class TabNetClassifier(TorchTabularClassifier):
    """TabNet as a scikit-learn classifier (defaults: pytorch-tabnet's).

    Parameters
    ----------
    n_d, n_a : int
        Widths of the decision and attention embeddings.
    n_steps : int
        Decision steps.
    gamma : float
        Feature re-use coefficient of the masks.
    n_independent, n_shared : int
        Step-specific and shared GLU layers per step.
    cat_emb_dim : int
        Embedding width of each categorical column.
    momentum : float
        Batch-norm momentum.
    lambda_sparse : float
        Weight of the mask-sparsity loss.
    mask_type : {"sparsemax", "entmax"}
    clip_value : float or None
        Gradient-norm clipping (``None``: off).
    categorical_features, min_frequency :
        As in :class:`~tabmoe.baselines.encoding.TableEncoder`.
    max_epochs : int
    batch_size, virtual_batch_size : int
        Upper bounds, at least 2 (batch normalisation needs two rows); see
        :func:`tabnet_batch_sizes` for what a small table gets.
    learning_rate : float
        Adam (TabNet's optimiser).
    early_stopping, validation_fraction, n_iter_no_change, class_weight, device,
    random_state, n_jobs, verbose :
        As in :class:`~tabmoe.baselines.torch_base.TorchTabularClassifier`, except that
        ``early_stopping`` defaults to ``"auto"`` (pytorch-tabnet early-stops only on an
        eval set it is given; above 10,000 rows a hold-out is taken); early stopping
        watches the validation log-loss and restores the best weights. TabNet has outputs
        only for the classes of its training rows, so validation rows of a class the
        hold-out took entirely are left out of that loss (theirs would be the same at every
        epoch). ``verbose`` is pytorch-tabnet's own: a line every ``verbose`` epochs and its
        closing "best_epoch = k" counted from 0 (``best_epoch_`` counts from 1), not the
        progress bar and summary line of the shared trainer.

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_, encoder_ :
        As for the other baselines.
    model_ : pytorch_tabnet.tab_model.TabNetClassifier
        The fitted TabNet (its ``network`` is the torch module).
    history_ : list of dict
        Per epoch: ``epoch``, ``train_loss`` and ``val_loss`` when validating.
    n_iter_ : int
        Epochs run.
    n_steps_ : int
        Optimisation steps taken (at least one, or ``fit`` raises).
    batch_size_, virtual_batch_size_ : int
        The sizes used.
    best_epoch_ : int or None
        Epoch whose weights were kept by early stopping.
    pretrain_history_ : list of float or None
        Pre-training loss per epoch of ``fit``'s ``X_unlabeled`` pre-training; None
        without ``X_unlabeled``.
    """

    _parameter_constraints: dict = {
        **{
            k: v
            for k, v in TRAINING_PARAMETER_CONSTRAINTS.items()
            if k not in ("weight_decay", "tol")
        },
        "n_d": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_a": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "gamma": [Interval(numbers.Real, 1, None, closed="left")],
        "n_independent": [Interval(numbers.Integral, 0, None, closed="left")],
        "n_shared": [Interval(numbers.Integral, 0, None, closed="left")],
        "cat_emb_dim": [Interval(numbers.Integral, 1, None, closed="left")],
        "momentum": [Interval(numbers.Real, 0, 1, closed="both")],
        "lambda_sparse": [Interval(numbers.Real, 0, None, closed="left")],
        "mask_type": [StrOptions({"sparsemax", "entmax"})],
        "clip_value": [Interval(numbers.Real, 0, None, closed="neither"), None],
        # batch norm needs two rows: a batch of one row failed inside torch
        "batch_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "virtual_batch_size": [Interval(numbers.Integral, 2, None, closed="left")],
    }

    # A bool passes the integer intervals above: n_d=True trained a width-1 network.
    _network_sizes = ("n_d", "n_a", "n_steps", "n_independent", "n_shared", "cat_emb_dim")

    def __init__(
        self,
        n_d: int = 8,
        n_a: int = 8,
        n_steps: int = 3,
        gamma: float = 1.3,
        n_independent: int = 2,
        n_shared: int = 2,
        cat_emb_dim: int = 1,
        momentum: float = 0.02,
        lambda_sparse: float = 1e-3,
        mask_type: str = "sparsemax",
        clip_value: float | None = 1.0,
        categorical_features: Any = "auto",
        min_frequency: int = 1,
        max_epochs: int = 100,
        batch_size: int = 1024,
        virtual_batch_size: int = 128,
        learning_rate: float = 2e-2,
        early_stopping: bool | str = "auto",
        validation_fraction: float | int | Literal["auto"] = 0.1,
        n_iter_no_change: int = 10,
        class_weight: dict | str | None = None,
        device: str | torch.device = "auto",
        random_state: Any = None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ):
        self.n_d = n_d
        self.n_a = n_a
        self.n_steps = n_steps
        self.gamma = gamma
        self.n_independent = n_independent
        self.n_shared = n_shared
        self.cat_emb_dim = cat_emb_dim
        self.momentum = momentum
        self.lambda_sparse = lambda_sparse
        self.mask_type = mask_type
        self.clip_value = clip_value
        self.categorical_features = categorical_features
        self.min_frequency = min_frequency
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.virtual_batch_size = virtual_batch_size
        self.learning_rate = learning_rate
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.class_weight = class_weight
        self.device = device
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X: Any,
        y: Any,
        sample_weight: Any = None,
        eval_set: tuple[Any, Any] | None = None,
        X_unlabeled: Any = None,
    ) -> TabNetClassifier:
        """Train on ``X`` (n_samples, n_features) and labels ``y`` (n_samples,).

        ``eval_set=(X_val, y_val)`` replaces the internal validation split for early
        stopping. ``X_unlabeled`` (n_unlabeled, n_features), same columns as ``X``: rows
        without labels. pytorch-tabnet's own ``TabNetPretrainer`` (self-supervised
        reconstruction of masked features, Arik & Pfister 2021 section 4) first trains on the
        training rows and ``X_unlabeled`` together (the same architecture and encoding), and
        the classifier starts from its weights (``from_unsupervised``). Set after fit:
        ``pretrain_history_`` (pre-training loss per epoch), None without ``X_unlabeled``.
        """
        check_network_sizes(self)  # as every torch baseline's fit (TorchTabularClassifier.fit)
        return self._fit(X, y, sample_weight, eval_set, X_unlabeled=X_unlabeled)

    def _initialize_front_end(self, inputs: FitInputs, X_unlabeled: Any = None) -> Any:
        """The encoder, fitted on ``X`` alone; ``X_unlabeled`` comes back as it was given, for
        :meth:`_train`'s pre-training (read there, after the early-stopping hold-out)."""
        super()._initialize_front_end(inputs)
        return X_unlabeled

    @property
    def module_(self) -> torch.nn.Module:
        """The fitted TabNet network."""
        return self.model_.network

    def __getstate__(self) -> dict:
        # The mixin moves ``state["module_"]`` to the CPU, but here that is a property: the
        # network, its optimiser state and the best weights all live inside ``model_``.
        state = super().__getstate__()
        model = state.get("model_")
        if model is not None and _on_accelerator(model):
            state = dict(state, model_=_cpu_copy(model))
        return state

    def _matrix(self, X: Any) -> np.ndarray:
        """TabNet's input: float32 ``[codes | numeric]`` (codes first, as ``cat_idxs`` says)."""
        return self.encoder_.transform(X).astype(np.float32)

    def _tabnet(
        self, seed: int, device: torch.device, kind: str = "tab_model.TabNetClassifier"
    ) -> Any:
        """A fresh ``pytorch_tabnet.tab_model.TabNetClassifier`` for the fitted encoder
        (``kind="pretraining.TabNetPretrainer"``: its self-supervised pre-trainer)."""
        module, name = kind.rsplit(".", 1)
        TabNet = optional_import(f"pytorch_tabnet.{module}", name)
        cardinalities = [int(c) for c in self.encoder_.cardinalities_]
        return TabNet(
            n_d=self.n_d,
            n_a=self.n_a,
            n_steps=self.n_steps,
            gamma=self.gamma,
            cat_idxs=list(range(len(cardinalities))),
            cat_dims=cardinalities,
            cat_emb_dim=self.cat_emb_dim,
            n_independent=self.n_independent,
            n_shared=self.n_shared,
            momentum=self.momentum,
            lambda_sparse=self.lambda_sparse,
            seed=seed,
            clip_value=self.clip_value,
            verbose=max(int(self.verbose), 0),
            optimizer_fn=torch.optim.Adam,
            optimizer_params={"lr": self.learning_rate},
            mask_type=self.mask_type,
            device_name=str(device),
        )

    def _train(
        self,
        inputs: FitInputs,
        validation: tuple[Any, np.ndarray] | None,
        early: bool,
        unlabeled: Any = None,
    ) -> None:
        """pytorch-tabnet's loop on ``[codes | numeric]``, batch sizes bounded by the data."""
        Z, y_codes, weight = self._matrix(inputs.frame), inputs.y_codes, inputs.weight
        if validation is not None:
            X_val, y_val = validation  # unit weights, as every model's eval_set
            with warnings_about("eval_set's X_val"):  # its unseen values, not X's
                validation = (self._matrix(X_val), y_val, np.ones(len(y_val)))
        elif early:
            idx_train, idx_val = inputs.validation_split(self.validation_fraction)
            validation = (Z[idx_val], y_codes[idx_val], weight[idx_val])
            Z, y_codes, weight = Z[idx_train], y_codes[idx_train], weight[idx_train]
        # Rows of weight 0 train as absent rows, as in every other torch model (FitInputs.weighted):
        # left in, each epoch drew as many rows as X has from the weighted ones alone.
        Z, y_codes, weight = Z[weight > 0], y_codes[weight > 0], weight[weight > 0]
        if len(Z) < 2:
            raise ValueError(
                f"TabNet needs at least 2 training rows for batch normalisation, got {len(Z)} "
                "(of non-zero weight, after the early-stopping hold-out); pass more rows or "
                "early_stopping=False."
            )
        if validation is not None:
            validation = _trained_classes_only(validation, y_codes)
        self.batch_size_, self.virtual_batch_size_ = tabnet_batch_sizes(
            len(Z), self.batch_size, self.virtual_batch_size
        )
        counter = StepCounter()
        with seeded(inputs.seed, inputs.device), quiet(self.verbose):
            pretrained = self._pretrain(Z, validation, early, inputs, unlabeled)
            self.model_ = self._tabnet(inputs.seed, inputs.device)
            self.model_.fit(
                Z,
                y_codes,
                eval_set=None if validation is None else [validation[:2]],
                eval_name=None if validation is None else ["val"],
                eval_metric=None if validation is None else [ClassLogLoss],
                weights=0 if np.all(weight == weight[0]) else weight,
                max_epochs=self.max_epochs,
                patience=self.n_iter_no_change if early else 0,
                batch_size=self.batch_size_,
                virtual_batch_size=self.virtual_batch_size_,
                drop_last=True,
                callbacks=[counter]
                + ([] if validation is None else [ValidationWeights(validation[2])]),
                compute_importance=False,
                from_unsupervised=pretrained,
            )
        self.n_steps_ = counter.n_steps
        if self.n_steps_ == 0:
            raise RuntimeError(
                f"TabNet made no optimisation step on {len(Z)} training rows (batch "
                f"{self.batch_size_}); the model is untrained."
            )
        self._record_history(validation is not None, early)
        if early and validation is not None:
            # pytorch-tabnet's loop ran out of patience before max_epochs: stopped early
            result = TrainResult(history=self.history_, best_epoch=self.best_epoch_,
                                 stopped_early=self.n_iter_ < self.max_epochs)
            warn_if_at_prior(type(self).__name__, result, self.n_iter_no_change,
                             (y_codes, weight), (validation[1], validation[2]))

    def _pretrain(
        self, Z: np.ndarray, validation: tuple | None, early: bool, inputs: FitInputs, X_unlabeled: Any
    ) -> Any:
        """``TabNetPretrainer`` fitted on the training and unlabeled rows (None without
        ``X_unlabeled``); early stopping on the validation rows' reconstruction loss when
        they fill a batch (pytorch-tabnet 4.1 drops the last, partial batch of its
        validation loader too, so fewer rows would evaluate nothing), else ``max_epochs``."""
        self.pretrain_history_ = None
        if X_unlabeled is None:
            return None
        with warnings_about("X_unlabeled"):  # its unseen values, not X's
            unlabeled = self._matrix(unlabeled_frame(inputs.frame, X_unlabeled, self._columns_by_label))
        rows = np.vstack([Z, unlabeled])
        pretrainer = self._tabnet(inputs.seed, inputs.device, "pretraining.TabNetPretrainer")
        batch, virtual = tabnet_batch_sizes(len(rows), self.batch_size, self.virtual_batch_size)
        watch = early and validation is not None and len(validation[0]) >= batch
        pretrainer.fit(
            rows,
            eval_set=[validation[0]] if watch else None,
            eval_name=["val"] if watch else None,
            max_epochs=self.max_epochs,
            patience=self.n_iter_no_change if watch else 0,
            batch_size=batch,
            virtual_batch_size=virtual,
            drop_last=True,
        )
        self.pretrain_history_ = [float(loss) for loss in pretrainer.history.history["loss"]]
        return pretrainer

    def _record_history(self, validated: bool, early: bool) -> None:
        history = self.model_.history.history
        self.history_ = [
            {"epoch": i + 1, "train_loss": float(loss)} for i, loss in enumerate(history["loss"])
        ]
        if validated:
            val_losses = history[f"val_{ClassLogLoss._name}"]
            for record, loss in zip(self.history_, val_losses, strict=True):
                record["val_loss"] = float(loss)
        self.n_iter_ = len(self.history_)
        self.best_epoch_ = self.model_.best_epoch + 1 if early else None

    def _encoded_logits(self, codes: np.ndarray, numeric: np.ndarray) -> np.ndarray:
        """Logits of encoded rows: TabNet's float32 ``[codes | numeric]`` (as ``_matrix``)."""
        Z = torch.from_numpy(np.hstack([codes.astype(np.float64), numeric]).astype(np.float32))
        network, device = self.model_.network.eval(), self._module_device()
        # TabNet's outputs cover the classes present in its training rows (codes, sorted).
        present = np.asarray(self.model_.classes_, dtype=np.int64)
        out = np.full((len(Z), len(self.classes_)), -np.inf, dtype=np.float32)
        with float32_default():  # pytorch-tabnet makes tensors of the default dtype
            for start in range(0, len(Z), self._predict_batch_rows):
                rows = slice(start, start + self._predict_batch_rows)
                logits, _ = network(Z[rows].to(device))
                out[rows, present] = logits.float().cpu().numpy()
        return out


def _trained_classes_only(
    validation: tuple[np.ndarray, ...], y_train: np.ndarray
) -> tuple[np.ndarray, ...]:
    """The validation rows ``(Z_val, y_val, ...)`` whose class TabNet trains on (it refuses
    any other).

    Raises a ValueError naming the parameters when no row is left to validate on."""
    y_val = validation[1]
    keep = np.isin(y_val, y_train)
    if not keep.any():
        raise ValueError(
            "TabNet: no validation row has a class of the training rows, so early stopping "
            "has nothing to score; pass a larger validation_fraction, an eval_set, or "
            "early_stopping=False."
        )
    return validation if keep.all() else tuple(rows[keep] for rows in validation)


def _on_accelerator(model: Any) -> bool:
    """Whether a fitted pytorch-tabnet model holds its network off the CPU."""
    network = getattr(model, "network", None)
    device = getattr(model, "device", None)
    on_device = isinstance(device, torch.device) and device.type != "cpu"
    if network is None:
        return on_device
    return on_device or any(p.device.type != "cpu" for p in network.parameters())


def _cpu_copy(model: Any) -> Any:
    """A copy of a pytorch-tabnet model with every tensor on the CPU (network, optimiser
    state, early stopping's best weights) and its device set to the CPU; ``model`` itself
    is left where it is."""
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    copy = torch.load(buffer, map_location="cpu", weights_only=False)
    copy.device = torch.device("cpu")
    copy.device_name = "cpu"
    return copy


@contextlib.contextmanager
def quiet(verbose: int):
    """Silence pytorch-tabnet's prints and routine warnings unless ``verbose``. Its prints
    (its callbacks' "Stop training because ...") are silenced in its own module, not by
    redirecting ``sys.stdout``: that is process-wide, and every other thread's output (a
    caller printing while a fit ran in the background) was lost for the whole fit."""
    with catch_warnings():  # one thread at a time: see tabmoe._stack
        for message in _TABNET_CHATTER:
            warnings.filterwarnings("ignore", message=message)
        callbacks = sys.modules.get("pytorch_tabnet.callbacks")  # None: not installed, fit says so
        if verbose or callbacks is None:
            yield
            return
        had, before = hasattr(callbacks, "print"), getattr(callbacks, "print", None)
        callbacks.print = lambda *args, **kwargs: None  # its module's name print, before the builtin
        try:
            yield
        finally:
            if had:
                callbacks.print = before
            else:
                del callbacks.print
