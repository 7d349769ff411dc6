"""The fitted state of :class:`~tabmoe.TabularMoEClassifier`: the depth ``n_layers_`` that
``fit`` resolves and the masking it implies, the network built from them, ``save`` / ``load``
and the ``_get_state`` / ``_from_state`` pair that :mod:`tabmoe.persistence` writes and reads.

A mixin of the estimator, in a module of its own to keep ``estimator.py`` short: the class
owns its state, persistence owns only the file format.
"""

from __future__ import annotations

import datetime
import os
import warnings
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import torch
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from . import _paper_config as defaults
from . import persistence
from ._stack import user_stacklevel
from ._tokenizer_state import check_length
from .nn.ensemble import StackedModel
from .nn.network import TabularMoE
from .nn.trainer import resolve_device, seeded
from .tokenizer import ColumnTokenizer

if TYPE_CHECKING:
    from .estimator import TabularMoEClassifier


#: Parameters added after the first saved models, with the values that reproduce those models
#: (read from pickles and files that lack them).
ADDED_PARAMETERS = {
    "n_jobs": None, "unknown_rate": 0.0, "numeric_embedding": "bins", "max_scored_features": None,
    "unknown": "token", "label_smoothing": 0.0, "feature_warmup_epochs": 0,
    "lr_decay_patience": None, "refit": False, "ema_decay": None,
    "linear_term": False, "max_grad_norm": None, "lr_warmup_epochs": 0,
    "embedding_init": 0.05,
}


#: The parameters the fitted network is built from: changed by ``set_params`` after ``fit``,
#: they no longer describe ``module_`` (``save`` and ``adapt`` refuse until a refit).
NETWORK_PARAMETERS = ("d_model", "n_heads", "ff_dim", "n_layers", "block", "gate", "linear_term", "n_members")


class EstimatorStateMixin:
    """``save`` / ``load`` and the fitted state of ``TabularMoEClassifier``."""

    def _check_n_layers(self) -> None:
        """Before fit: ``n_layers`` is not a bool, and a depth given as a number can use
        ``masking`` (``"auto"`` is checked once :meth:`_resolve_n_layers` has chosen)."""
        if isinstance(self.n_layers, bool):  # True passes scikit-learn's integer interval
            raise InvalidParameterError(
                f"The 'n_layers' parameter of {type(self).__name__} must be an int in the range "
                f"[1, inf) or a str among {{'auto'}}. Got {self.n_layers!r} instead."
            )
        if self.n_layers != "auto":
            self._masking(self.n_layers)

    def _resolve_n_layers(self, n_rows: int) -> None:
        """Set ``n_layers_`` for a fit on ``n_rows`` labelled rows of non-zero weight (before
        the early-stopping hold-out, as ``validation_fraction="auto"`` counts them)."""
        if self.n_layers == "auto":
            self.n_layers_ = 2 if n_rows > defaults.AUTO_LAYERS_ROWS else 1
        else:
            self.n_layers_ = int(self.n_layers)
        self._masking()  # raises for a masking the depth chosen cannot use

    def _masking(self, n_layers: int | None = None) -> str:
        """``masking`` resolved for ``n_layers`` layers (None: the fitted ``n_layers_``)."""
        n_layers = self.n_layers_ if n_layers is None else n_layers
        if self.masking == "auto":
            return "leave_one_out" if n_layers == 1 else "random"
        if self.masking in ("leave_one_out", "copies") and n_layers != 1:
            chosen = (f", which chose {n_layers} layers for more than {defaults.AUTO_LAYERS_ROWS:,} "
                      "training rows" if self.n_layers == "auto" else "")
            raise ValueError(
                f"masking={self.masking!r} needs n_layers=1 (got n_layers={self.n_layers!r}{chosen}); "
                "use masking='random' or 'auto' for deeper models."
            )
        return self.masking

    def _warn_unsaveable(self) -> None:
        """Warn at fit, naming the column, of category values or class labels ``save``
        cannot write: it raises only when called, after the training."""
        tok = self.tokenizer_
        checks = [(self.classes_, "class label", "")] + [
            (values, "category value", tok._in_column(j))
            for j, column in enumerate(zip(tok.categories_, tok._infrequent, strict=True))
            for values in column if values is not None
        ]
        found = [(f, what, where) for values, what, where in checks
                 if (f := persistence.first_unsaveable(values, what, where)) is not None]
        if not found:
            return
        (value, error), what, first = found[0]
        # the others named too (the warning named the first only, and save() the next after a fix);
        # a column's kept and rare values are checked apart, but the column is named once
        others = list(dict.fromkeys(where.strip() for _, _, where in found[1:] if where != first))
        also = f" Nor can values {' or '.join(others)}." if others else ""
        dates = any(isinstance(f[0], datetime.date) and w == "category value" for f, w, _ in found)
        hint = " (dates: pd.to_datetime makes the column a datetime one, binned by time)" if dates else ""
        warnings.warn(f"{error}{also} The model fits and predicts, but save() will raise: convert "
                      f"them before fit{hint}.", UserWarning, stacklevel=user_stacklevel())

    def _check_network_parameters(self, action: str) -> None:
        """ValueError naming the network parameters ``set_params`` changed since the network
        was built (a model pickled before they were recorded: the values it was pickled with,
        see ``__setstate__``). An ``n_layers`` equal to the fitted depth ``n_layers_`` (as
        ``"auto"`` chose it) changes nothing."""
        built = getattr(self, "_network_parameters", {})
        now = {k: getattr(self, k) for k in built}
        if "n_layers" in now and not isinstance(now["n_layers"], bool) and now["n_layers"] == self.n_layers_:
            now["n_layers"] = built["n_layers"]
        changed = [f"{k}={built[k]!r} -> {now[k]!r}" for k in built if now[k] != built[k]]
        if changed:
            raise ValueError(
                f"Cannot {action}: set_params changed {', '.join(changed)} after fit, and the "
                "fitted network was built with the old values. Refit, or set them back, first."
            )

    def _build_module(self) -> TabularMoE | StackedModel:
        """A fresh network for the fitted tokenizer and label tokens (``fit`` and ``load``
        build it alike); with ``n_members > 1`` that many, initialised one after the other and
        stacked into one batched model."""
        self._network_parameters = {k: getattr(self, k) for k in NETWORK_PARAMETERS}
        tok = self.tokenizer_
        output_ids = [tok.output_token_ids(j) for j in range(tok.n_features_in_)]
        output_ids.append(self.label_token_ids_)
        numeric = [] if self.numeric_embedding_ == "bins" else np.flatnonzero(~tok.is_categorical_)
        ordered = [output_ids[j] for j in numeric]
        piecewise = self.numeric_embedding_ == "piecewise" and len(ordered) > 0
        members = [
            TabularMoE(
                int(max(tok.n_tokens_, self.label_token_ids_.max() + 1)),
                output_ids,
                d_model=self.d_model,
                n_heads=self.n_heads,
                ff_dim=self.ff_dim,
                n_layers=self.n_layers_,
                dropout=self.dropout,
                block=self.block,
                gate=self.gate,
                ordered_ids=ordered,
                linear_term=self.linear_term,
                piecewise=piecewise,
                embedding_init=self.embedding_init,
            )
            for _ in range(self.n_members)
        ]
        return members[0] if self.n_members == 1 else StackedModel(members)

    def __setstate__(self, state: dict) -> None:
        state = {**ADDED_PARAMETERS, **state}
        if "module_" in state:  # fitted before the network's mode was recorded
            state.setdefault("numeric_embedding_", state["numeric_embedding"])
            state.setdefault("refit_history_", None)  # fitted before refit existed
            state.setdefault("train_sample_position_", None)  # before piecewise embeddings
            state.setdefault("n_layers_", state["n_layers"])  # before n_layers="auto"
            # before they were recorded: the values it was pickled with, so that save and
            # adapt refuse a set_params of them (save wrote a file load refused)
            state.setdefault("_network_parameters", {k: state[k] for k in NETWORK_PARAMETERS if k in state})
        super().__setstate__(state)

    def save(self, path: str | os.PathLike) -> None:
        """Save the fitted model to ``path`` (a ``~`` at its start is the user's home) in a
        format that runs no code on load.

        JSON documents + tensors, read back with ``torch.load(weights_only=True)``; see
        :mod:`tabmoe.persistence`. The file is written to a temporary file in the same folder
        and renamed over ``path``, so a failed save leaves an existing file as it was; errors
        are ``OSError`` exceptions naming ``path`` (folder missing, path is a folder, disk full).
        A parameter that ``set_params`` left invalid after fit is an ``InvalidParameterError``
        naming it, before anything is written (``load`` would refuse the file).
        """
        persistence.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike, device: str | torch.device = "cpu") -> TabularMoEClassifier:
        """Load a model written by :meth:`save` onto ``device`` (default CPU); a ``~`` at the
        start of ``path`` is the user's home.

        ``device`` places the loaded network, which prediction, ``explain`` and ``adapt``
        use; the ``device`` parameter keeps its saved value (``get_params``, and a refit or
        a clone, resolve it again): a model fitted with ``device="cuda"`` and loaded on a
        machine without CUDA predicts on the CPU, and needs ``set_params(device="cpu")``
        before it is fitted again.

        Raises :class:`~tabmoe.persistence.IncompatibleFileError` for a damaged, foreign,
        inconsistent or incompatible file (:class:`~tabmoe.persistence.UnsafeFileError`, also
        a ``pickle.UnpicklingError``, for one that is no torch archive or would run code).
        """
        target = resolve_device(device)
        est = persistence.load(cls, path)
        est.module_.to(target).eval()
        return est

    def _get_state(self) -> tuple[dict, dict[str, dict[str, torch.Tensor]]]:
        """``(documents, tensors)`` of the fitted model, for :func:`tabmoe.persistence.save`:
        JSON-able ``params``, ``fitted`` and ``tokenizer``; the network's ``state_dict`` and
        the stored training sample."""
        check_is_fitted(self)
        self._check_network_parameters("save")
        try:  # set_params validates nothing, and load refuses a file whose parameters fit would
            self._validate_params()
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"Cannot save: {exc} (set by set_params after fit: load "
                                        "would refuse the file). Set a valid value first.") from None
        fitted = {
            "classes": [persistence.encode_value(c, "class label") for c in self.classes_],
            "classes_dtype": self.classes_.dtype.str,
            "label_token_ids": self.label_token_ids_.tolist(),
            "n_features_in": int(self.n_features_in_),
            "feature_names_in": (
                self.feature_names_in_.tolist() if hasattr(self, "feature_names_in_") else None
            ),
            "history": self.history_,
            "n_iter": self.n_iter_,
            "best_epoch": self.best_epoch_,
            "refit_history": getattr(self, "refit_history_", None),
            "numeric_embedding": self.numeric_embedding_,
            "n_layers": int(self.n_layers_),
            "feature_importances": self.feature_importances_.tolist(),
            "adapt_history": getattr(self, "adapt_history_", None),
        }
        documents = {
            "params": persistence.json_params(self.get_params()),
            "fitted": fitted,
            "tokenizer": self.tokenizer_._get_state(),
        }
        tensors = {"state_dict": dict(self.module_.state_dict())}
        if getattr(self, "train_sample_tokens_", None) is not None:  # absent: loaded from a file written before adapt()
            tensors["train_sample"] = {
                "tokens": torch.from_numpy(self.train_sample_tokens_),
                "weight": torch.from_numpy(self.train_sample_weight_),
                **({} if getattr(self, "train_sample_position_", None) is None
                   else {"position": torch.from_numpy(self.train_sample_position_)}),
            }
        return documents, tensors

    @classmethod
    def _from_state(cls, documents: dict, tensors: dict[str, dict[str, torch.Tensor]]) -> TabularMoEClassifier:
        """The fitted model described by :meth:`_get_state`'s data (network on the CPU)."""
        est = cls(**{**ADDED_PARAMETERS, **persistence.load_params(documents["params"])})
        fitted = documents["fitted"]
        est.tokenizer_ = ColumnTokenizer._from_state(documents["tokenizer"])
        classes = [persistence.decode_value(c) for c in fitted["classes"]]
        est.classes_ = np.asarray(classes, dtype=persistence.classes_dtype(fitted.get("classes_dtype"), classes))
        est.label_token_ids_ = np.asarray(fitted["label_token_ids"], dtype=np.int64)
        est.n_features_in_ = fitted["n_features_in"]
        if fitted["feature_names_in"] is not None:
            est.feature_names_in_ = np.asarray(fitted["feature_names_in"], dtype=object)
        est.history_, est.n_iter_ = fitted["history"], fitted["n_iter"]
        est.best_epoch_ = fitted["best_epoch"]
        est.refit_history_ = fitted.get("refit_history")
        est.numeric_embedding_ = fitted.get("numeric_embedding", est.numeric_embedding)
        est.n_layers_ = fitted.get("n_layers", est.n_layers)  # files before n_layers="auto": the parameter
        check_classifier(est)
        check_weight_shapes(est, tensors["state_dict"])  # before the network is allocated
        with seeded(0, torch.device("cpu")):  # its initial weights, overwritten, drew from the caller's RNG
            est.module_ = est._build_module().float()  # as fit's network, whatever the default dtype
        est.module_.load_state_dict(tensors["state_dict"])
        if "train_sample" in tensors:  # the stored sample used by adapt()
            est.train_sample_tokens_ = tensors["train_sample"]["tokens"].numpy()
            est.train_sample_weight_ = tensors["train_sample"]["weight"].numpy()
            position = tensors["train_sample"].get("position")
            est.train_sample_position_ = None if position is None else position.numpy()
        if fitted.get("feature_importances") is not None:
            est.feature_importances_ = np.asarray(fitted["feature_importances"], dtype=np.float64)
        if fitted.get("adapt_history") is not None:
            est.adapt_history_ = fitted["adapt_history"]
        check_network(est)
        return est


def check_classifier(est) -> None:
    """Parameters, classes and label token ids of a rebuilt classifier fit its tokenizer."""
    est._validate_params()
    if est.numeric_embedding_ not in ("bins", "ordered", "piecewise"):
        raise ValueError(f"numeric_embedding {est.numeric_embedding_!r} is not 'bins', 'ordered' or 'piecewise'")
    if est.numeric_embedding_ == "piecewise" and getattr(est.tokenizer_, "value_range_", None) is None:
        raise ValueError("numeric_embedding 'piecewise' needs the tokenizer's value_range")
    depth = est.n_layers_
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1 or est.n_layers not in ("auto", depth):
        raise ValueError(f"n_layers {depth!r} is not a depth of n_layers={est.n_layers!r}")
    tok = est.tokenizer_
    if est.n_features_in_ != tok.n_features_in_:
        raise ValueError(f"n_features_in {est.n_features_in_!r} is not the tokenizer's {tok.n_features_in_}")
    if getattr(est, "feature_names_in_", None) is not None:
        check_length("feature_names_in", est.feature_names_in_, est.n_features_in_)
    classes = est.classes_
    if classes.ndim != 1 or len(classes) < 2 or len(pd.unique(pd.Series(classes, dtype=object))) != len(classes):
        raise ValueError(f"classes {classes.tolist()[:10]!r} are not two or more distinct labels")
    expected = tok.label_token_ids(classes)
    if not np.array_equal(est.label_token_ids_, expected):
        raise ValueError(f"label token ids {est.label_token_ids_.tolist()[:10]} are not those of the "
                         f"classes and vocabulary ({expected.tolist()[:10]})")
    if not isinstance(est.n_iter_, int) or est.n_iter_ < 0:
        raise ValueError(f"n_iter {est.n_iter_!r} is not a count")


def check_weight_shapes(est, state_dict: dict) -> None:
    """The file's weights have the names and shapes of the network its documents describe,
    that network built on the meta device (no memory) to compare: a file whose ``ff_dim``,
    ``d_model``, ``n_layers`` or ``n_members`` was raised would otherwise allocate it
    (gigabytes, from a file of kilobytes) before ``load_state_dict`` refused it."""
    shapes = {name: tuple(getattr(t, "shape", ())) for name, t in state_dict.items()}
    members = est.n_members  # the modules built below, bounded by the file's own weights:
    if est.n_layers_ > len(shapes) or (members > 1 and any(s[:1] != (members,) for s in shapes.values())):
        raise ValueError(f"n_layers {est.n_layers_} and n_members {members} do not fit the file's "
                         f"{len(shapes)} weights")  # a layer has weights of its own; members stack
    with torch.device("meta"):
        expected = {name: tuple(t.shape) for name, t in est._build_module().state_dict().items()}
    for name in [*expected, *(name for name in shapes if name not in expected)]:
        if name not in shapes or name not in expected or shapes[name] != expected[name]:
            raise ValueError(
                f"weights {name!r} have shape {shapes.get(name, 'absent')} in the file, but the network "
                f"its parameters describe has {expected.get(name, 'absent')}"
            )


def check_network(est) -> None:
    """Weights finite; the adapt() sample and importances sized and in range for the network."""
    n_tokens = int(max(est.tokenizer_.n_tokens_, est.label_token_ids_.max() + 1))
    for name, tensor in est.module_.state_dict().items():
        if tensor.is_floating_point() and not torch.isfinite(tensor).all():
            raise ValueError(f"weights {name} are not all finite")
    tokens = getattr(est, "train_sample_tokens_", None)
    if tokens is not None:
        weight = est.train_sample_weight_
        if tokens.ndim != 2 or tokens.shape[1] != est.n_features_in_ + 1:
            raise ValueError(f"stored sample has shape {tokens.shape}, not (rows, {est.n_features_in_ + 1})")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= n_tokens):
            raise ValueError(f"stored sample holds token ids outside [0, {n_tokens})")
        if weight.shape != (len(tokens),) or not np.isfinite(weight).all() or (weight < 0).any():
            raise ValueError("stored sample weights do not fit its rows")
        position = getattr(est, "train_sample_position_", None)
        if (position is None) != (est.numeric_embedding_ != "piecewise"):
            raise ValueError("stored sample bin positions are present exactly for numeric_embedding 'piecewise'")
        if position is not None and (position.shape != tokens.shape or not ((position >= 0) & (position <= 1)).all()):
            raise ValueError("stored sample bin positions do not fit its rows or lie outside [0, 1]")
    if getattr(est, "feature_importances_", None) is not None:
        check_length("feature_importances", est.feature_importances_, est.n_features_in_)
