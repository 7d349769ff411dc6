"""Save / load a fitted ``TabularMoEClassifier`` without executing code on load.

The file is a ``torch.save`` archive holding only strings (JSON documents) and tensors, read
back with ``torch.load(weights_only=True)``: loading never unpickles arbitrary objects. A file
whose payload needs anything else (an injected pickle, say) is refused by torch's restricted
unpickler. Category values are written with a type tag (str, int, float, bool, timestamp,
timedelta) so they come back with their type.

A SHA-256 of the JSON documents and tensor bytes is stored with them, so that a damaged
file (bit rot, a truncated copy) is refused instead of loading changed weights. It is no
protection against an attacker, who can rewrite the checksum too: what makes loading safe is
that it runs no code.

A file that passes the checksum is still checked for consistency (``check_tokenizer``,
``check_classifier``, ``check_network``: sizes, offsets and token ids against each other),
so every damaged or crafted file raises :class:`IncompatibleFileError` at load rather than
an ``IndexError`` in predict. ``save`` writes atomically (``write_file``).

``pickle`` / ``joblib`` also work (and load on CPU-only machines), but loading a pickle runs
whatever code the file names: only unpickle files you trust. See SECURITY.md.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import pickle
from typing import Any

import numpy as np
import pandas as pd
import sklearn
import torch

FORMAT = "tabmoe.TabularMoEClassifier"
FORMAT_VERSION = 1


class IncompatibleFileError(ValueError):
    """The file is not a tabmoe model, is damaged, or was written by an incompatible version."""


class UnsafeFileError(IncompatibleFileError, pickle.UnpicklingError):
    """The file is no tabmoe archive: damaged where the archive starts, or a pickle that
    would run code to load. Both an :class:`IncompatibleFileError` and a
    ``pickle.UnpicklingError``."""


# ------------------------------------------------------------- values
def encode_value(value: Any) -> list:
    """A category / class value as ``[type tag, JSON value]``."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return ["none", None]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int):
        return ["int", value]
    if isinstance(value, float):
        return ["float", repr(value) if not math.isfinite(value) else value]
    if isinstance(value, str):
        return ["str", value]
    if isinstance(value, pd.Timestamp):
        return ["timestamp", value.isoformat()]
    if isinstance(value, pd.Timedelta):
        # [count, unit]: nanoseconds (Timedelta.value) overflow beyond +-292 years
        return ["timedelta", [int(value.asm8.view("i8")), value.unit]]
    raise TypeError(
        f"Cannot save category value {value!r} of type {type(value).__name__}: only str, int, "
        "float, bool, None, timestamps and timedeltas can be saved safely."
    )


def decode_value(item: list) -> Any:
    tag, value = item
    if tag == "float":
        return float(value)
    if tag == "timestamp":
        return pd.Timestamp(value)
    if tag == "timedelta":
        if isinstance(value, list):
            return pd.Timedelta(np.timedelta64(value[0], value[1]))
        return pd.Timedelta(value)  # nanoseconds, as written before [count, unit]
    if tag in ("none", "bool", "int", "str"):
        return value
    raise IncompatibleFileError(f"Unknown value type tag {tag!r} in file.")


def _encode_index(index: pd.Index | None) -> list | None:
    return None if index is None else [encode_value(v) for v in index]


def _decode_index(items: list | None) -> pd.Index | None:
    return None if items is None else pd.Index([decode_value(v) for v in items], dtype=object)


def _json_params(params: dict) -> dict:
    out = {}
    for key, value in params.items():
        if isinstance(value, torch.device):
            value = str(value)
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        elif isinstance(value, np.random.RandomState):
            value = None  # a RandomState cannot be stored as data; the fit is already done
        elif isinstance(value, dict):
            value = {"__dict__": [[encode_value(k), v] for k, v in value.items()]}
        try:
            json.dumps(value)
        except TypeError as exc:
            raise TypeError(f"Parameter {key}={value!r} cannot be saved as JSON.") from exc
        out[key] = value
    return out


def _load_params(params: dict) -> dict:
    out = {}
    for key, value in params.items():
        if isinstance(value, dict) and "__dict__" in value:
            value = {decode_value(k): v for k, v in value["__dict__"]}
        out[key] = value
    return out


# ---------------------------------------------------------- tokenizer
def tokenizer_state(tok) -> dict:
    return {
        "params": _json_params(tok.get_params()),
        "n_features_in": int(tok.n_features_in_),
        "feature_names_in": (
            None if not hasattr(tok, "feature_names_in_") else tok.feature_names_in_.tolist()
        ),
        "column_labels": getattr(tok, "_column_labels", None),
        "is_categorical": tok.is_categorical_.tolist(),
        "categories": [_encode_index(c) for c in tok.categories_],
        "infrequent": [_encode_index(c) for c in tok._infrequent],
        "bin_edges": [None if e is None else e.tolist() for e in tok.bin_edges_],
        "offsets": tok.offsets_.tolist(),
        "n_tokens_per_column": tok.n_tokens_per_column_.tolist(),
        "n_tokens": int(tok.n_tokens_),
        "shared_values": _encode_index(getattr(tok, "shared_values_", None)),
    }


def tokenizer_from_state(state: dict):
    from .tokenizer import ColumnTokenizer

    tok = ColumnTokenizer(**_load_params(state["params"]))
    tok.n_features_in_ = state["n_features_in"]
    if state["feature_names_in"] is not None:
        tok.feature_names_in_ = np.asarray(state["feature_names_in"], dtype=object)
    tok._column_labels = state.get("column_labels")  # absent in files saved before it existed
    tok.is_categorical_ = np.asarray(state["is_categorical"], dtype=bool)
    tok.categories_ = [_decode_index(c) for c in state["categories"]]
    tok._infrequent = [_decode_index(c) for c in state["infrequent"]]
    tok.bin_edges_ = [None if e is None else np.asarray(e, dtype=float) for e in state["bin_edges"]]
    tok.offsets_ = np.asarray(state["offsets"], dtype=np.int64)
    tok.n_tokens_per_column_ = np.asarray(state["n_tokens_per_column"], dtype=np.int64)
    tok.n_tokens_ = state["n_tokens"]
    if state["shared_values"] is not None:
        tok.shared_values_ = _decode_index(state["shared_values"])
    tok._lookup = [tok._build_lookup(j) for j in range(tok.n_features_in_)]
    return tok


# ---------------------------------------------------------- estimator
def save(estimator, path: str | os.PathLike) -> None:
    """Write a fitted estimator to ``path`` (JSON documents + CPU tensors)."""
    from sklearn.utils.validation import check_is_fitted

    from . import __version__

    check_is_fitted(estimator)
    fitted = {
        "classes": [encode_value(c) for c in estimator.classes_],
        "classes_dtype": estimator.classes_.dtype.str,
        "label_token_ids": estimator.label_token_ids_.tolist(),
        "n_features_in": int(estimator.n_features_in_),
        "feature_names_in": (
            estimator.feature_names_in_.tolist() if hasattr(estimator, "feature_names_in_") else None
        ),
        "history": estimator.history_,
        "n_iter": estimator.n_iter_,
        "best_epoch": estimator.best_epoch_,
        "feature_importances": estimator.feature_importances_.tolist(),
        "adapt_history": getattr(estimator, "adapt_history_", None),
    }
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": json.dumps(
            {"tabmoe": __version__, "torch": torch.__version__, "sklearn": sklearn.__version__}
        ),
        "params": json.dumps(_json_params(estimator.get_params())),
        "fitted": json.dumps(fitted),
        "tokenizer": json.dumps(tokenizer_state(estimator.tokenizer_)),
        "state_dict": {k: v.detach().cpu() for k, v in estimator.module_.state_dict().items()},
        "train_sample": {
            "tokens": torch.from_numpy(estimator.train_sample_tokens_),
            "weight": torch.from_numpy(estimator.train_sample_weight_),
        },
    }
    payload["checksum"] = checksum(payload)
    write_file(payload, path)


# ------------------------------------------------------------- writing
def write_file(payload: dict, path: str | os.PathLike) -> None:
    """``torch.save`` ``payload`` to ``path`` atomically: into a temporary file in the same
    folder, flushed and fsynced, then renamed over ``path`` (``os.replace``). A failed write
    leaves an existing ``path`` as it was and removes the temporary file; the error
    (an ``OSError``) names ``path`` in plain words."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"Cannot save the model to {path!r}: it is a folder; give a file name.")
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise FileNotFoundError(f"Cannot save the model to {path!r}: the folder {folder!r} {what}.")
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as exc:
        raise _write_error(path, exc) from exc
    try:
        with os.fdopen(fd, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, Exception):
            raise _write_error(path, exc) from exc
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _write_error(path: str, exc: BaseException) -> Exception:
    """An ``OSError`` in plain words for a failed write of ``path`` (torch reports a full
    disk as ``RuntimeError: [enforce fail at inline_container.cc] unexpected pos``, the
    ``OSError`` it hit being its context)."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, OSError):
        cause = cause.__cause__ or cause.__context__
    if cause is None:
        return OSError(f"Cannot save the model to {path!r}: writing it failed ({type(exc).__name__}: {exc}).")
    if cause.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "the disk is full"
    elif cause.errno == errno.EFBIG:
        why = "the file is larger than the file system or the file-size limit allows"
    elif cause.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        why = "no permission to write in its folder"
    else:
        why = "writing it failed"
    error = type(cause)(f"Cannot save the model to {path!r}: {why} ({cause.strerror or cause}); "
                        "an existing file of that name was left as it was.")
    error.errno = cause.errno
    return error


#: Payload entries covered by the checksum: documents, and dicts of tensors (the latter
#: only where present: "train_sample" is absent from files written before adapt() existed).
CHECKED_KEYS = ("format", "format_version", "versions", "params", "fitted", "tokenizer")
CHECKED_TENSORS = ("state_dict", "train_sample")


def checksum(payload: dict) -> str:
    """SHA-256 hex digest of the documents and of each tensor's name, dtype, shape and bytes."""
    digest = hashlib.sha256()
    for key in CHECKED_KEYS:
        digest.update(json.dumps([key, payload[key]]).encode())
    for key in CHECKED_TENSORS:
        for name, tensor in sorted(payload.get(key, {}).items()):
            digest.update(json.dumps([key, name, str(tensor.dtype), list(tensor.shape)]).encode())
            digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def _read(path: str) -> dict:
    """The payload of ``path``, its header checked; IncompatibleFileError if it is not one."""
    with open(path, "rb") as file:  # errors opening the file propagate as they are
        try:
            payload = torch.load(file, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:  # refused: it is no torch archive (a damaged
            # start, a plain pickle) or its pickle names something that would run code
            raise UnsafeFileError(
                f"{path!r} is refused: it is not a tabmoe file (damaged, or a pickle that would "
                f"run code to load): {exc}"
            ) from exc
        except MemoryError:
            raise
        except Exception as exc:  # a damaged archive: RuntimeError, OSError, EOFError, ...
            raise IncompatibleFileError(f"{path!r} is not a readable tabmoe file: {exc}") from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise IncompatibleFileError(f"{path!r} is not a saved TabularMoEClassifier.")
    version = payload.get("format_version")
    if version != FORMAT_VERSION:
        versions = payload.get("versions", "{}")
        raise IncompatibleFileError(
            f"{path!r} has file format version {version} (written by {versions}); "
            f"this tabmoe reads version {FORMAT_VERSION}. Re-save it with a matching tabmoe."
        )
    try:
        expected = payload.get("checksum")  # absent in files written before it was added
        damaged = expected is not None and expected != checksum(payload)
    except Exception as exc:  # a missing document or a non-tensor in the state dict
        raise IncompatibleFileError(f"{path!r} is damaged: {exc!r}") from exc
    if damaged:
        raise IncompatibleFileError(
            f"{path!r} is damaged: its contents do not match the checksum written with them."
        )
    return payload


def load(path: str | os.PathLike, device: str = "cpu"):
    """Read a file written by :func:`save`; tensors are mapped to ``device``.

    Raises :class:`IncompatibleFileError` for files of another format or version, and
    :class:`UnsafeFileError` (also a ``pickle.UnpicklingError``) for files that are no torch
    archive or would need code execution to load. A file that loads is checked for internal
    consistency (sizes, offsets, token ids) before it is returned.
    """
    from .estimator import TabularMoEClassifier
    from .trainer import resolve_device

    target = resolve_device(device)
    path = os.fspath(path)
    payload = _read(path)
    try:
        est = TabularMoEClassifier(**_load_params(json.loads(payload["params"])))
        fitted = json.loads(payload["fitted"])
        est.tokenizer_ = tokenizer_from_state(json.loads(payload["tokenizer"]))
        classes = [decode_value(c) for c in fitted["classes"]]
        est.classes_ = np.asarray(classes, dtype=_classes_dtype(fitted.get("classes_dtype")))
        est.label_token_ids_ = np.asarray(fitted["label_token_ids"], dtype=np.int64)
        est.n_features_in_ = fitted["n_features_in"]
        if fitted["feature_names_in"] is not None:
            est.feature_names_in_ = np.asarray(fitted["feature_names_in"], dtype=object)
        est.history_, est.n_iter_ = fitted["history"], fitted["n_iter"]
        est.best_epoch_ = fitted["best_epoch"]
        check_tokenizer(est.tokenizer_)
        check_classifier(est)
        est.module_ = est._build_module()
        est.module_.load_state_dict(payload["state_dict"])
        if "train_sample" in payload:  # the stored sample used by adapt()
            est.train_sample_tokens_ = payload["train_sample"]["tokens"].numpy()
            est.train_sample_weight_ = payload["train_sample"]["weight"].numpy()
        if fitted.get("feature_importances") is not None:
            est.feature_importances_ = np.asarray(fitted["feature_importances"], dtype=np.float64)
        if fitted.get("adapt_history") is not None:
            est.adapt_history_ = fitted["adapt_history"]
        check_network(est)
    except IncompatibleFileError:
        raise
    except MemoryError:
        raise
    except Exception as exc:
        # A file that passed the checksum but does not describe a consistent model: a missing
        # or mistyped entry, or sizes and token ids that do not fit each other.
        raise IncompatibleFileError(f"{path!r} does not describe a valid model: {exc!r}") from exc
    est.module_.to(target).eval()
    return est


def _classes_dtype(code: str | None) -> np.dtype | None:
    """dtype of ``classes_`` as saved (bool, int, float, str or object); None if unknown."""
    dtype = None if code is None else np.dtype(code)
    return dtype if dtype is not None and dtype.kind in "biufUO" else None


# ------------------------------------------------------- consistency checks
# Each checks one object rebuilt from a file against itself (to move next to its class's
# state restoring): a ValueError naming what does not fit, before a wrong size or token id
# could surface later as an IndexError in predict.
def _length(name: str, values: Any, n: int, what: str = "columns") -> None:
    if len(values) != n:
        raise ValueError(f"{name} has {len(values)} entries for {n} {what}")


def check_tokenizer(tok) -> None:
    """Vocabulary sizes, offsets and bin edges of a rebuilt ``ColumnTokenizer`` agree."""
    from .tokenizer import N_SPECIAL

    tok._validate_params()
    n = tok.n_features_in_
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"tokenizer n_features_in {n!r} is not a positive integer")
    for name in ("is_categorical_", "categories_", "_infrequent", "bin_edges_", "offsets_",
                 "n_tokens_per_column_"):
        _length(f"tokenizer {name}", getattr(tok, name), n)
    for name in ("feature_names_in_", "_column_labels"):
        if getattr(tok, name, None) is not None:
            _length(f"tokenizer {name}", getattr(tok, name), n)
    sizes = tok.n_tokens_per_column_
    if tok.vocabulary == "shared":
        values = getattr(tok, "shared_values_", None)
        if values is None or not values.is_unique:
            raise ValueError("tokenizer shared_values missing or not unique")
        offsets = np.full(n, N_SPECIAL)
        expected_sizes = np.full(n, len(values))
    else:
        expected_sizes = np.asarray(
            [len(c) if cat else len(e) + 1
             for cat, c, e in zip(tok.is_categorical_, tok.categories_, tok.bin_edges_, strict=True)],
            dtype=np.int64,
        )
        offsets = N_SPECIAL + np.concatenate([[0], np.cumsum(expected_sizes)[:-1]])
    for j in range(n):
        categorical = bool(tok.is_categorical_[j])
        if categorical != (tok.categories_[j] is not None) or categorical != (tok.bin_edges_[j] is None) \
                or categorical != (tok._infrequent[j] is not None):
            raise ValueError(f"tokenizer column {j}: categories and bin edges do not fit its kind")
        if categorical and tok.vocabulary == "shared" and (values.get_indexer(tok.categories_[j]) < 0).any():
            raise ValueError(f"tokenizer column {j}: categories missing from the shared vocabulary")
        if not categorical:
            edges = tok.bin_edges_[j]
            if edges.ndim != 1 or np.isnan(edges).any() or (np.diff(edges) < 0).any():
                raise ValueError(f"tokenizer column {j}: bin edges are not sorted numbers")
            if len(edges) + 1 > sizes[j]:
                raise ValueError(f"tokenizer column {j}: {len(edges) + 1} bins for {sizes[j]} tokens")
    if not np.array_equal(sizes, expected_sizes):
        raise ValueError(f"tokenizer n_tokens_per_column {sizes.tolist()} does not fit the vocabularies "
                         f"({expected_sizes.tolist()})")
    if not np.array_equal(tok.offsets_, offsets):
        raise ValueError(f"tokenizer offsets {tok.offsets_.tolist()} are not those of its vocabularies "
                         f"({offsets.tolist()})")
    if tok.n_tokens_ != N_SPECIAL + (int(sizes[0]) if tok.vocabulary == "shared" else int(sizes.sum())):
        raise ValueError(f"tokenizer n_tokens {tok.n_tokens_!r} does not fit its vocabularies")


def check_classifier(est) -> None:
    """Parameters, classes and label token ids of a rebuilt classifier fit its tokenizer."""
    from .estimator import label_token_ids

    est._validate_params()
    tok = est.tokenizer_
    if est.n_features_in_ != tok.n_features_in_:
        raise ValueError(f"n_features_in {est.n_features_in_!r} is not the tokenizer's {tok.n_features_in_}")
    if getattr(est, "feature_names_in_", None) is not None:
        _length("feature_names_in", est.feature_names_in_, est.n_features_in_)
    classes = est.classes_
    if classes.ndim != 1 or len(classes) < 2 or len(pd.unique(pd.Series(classes, dtype=object))) != len(classes):
        raise ValueError(f"classes {classes.tolist()[:10]!r} are not two or more distinct labels")
    expected = label_token_ids(tok, classes)
    if not np.array_equal(est.label_token_ids_, expected):
        raise ValueError(f"label token ids {est.label_token_ids_.tolist()[:10]} are not those of the "
                         f"classes and vocabulary ({expected.tolist()[:10]})")
    if not isinstance(est.n_iter_, int) or est.n_iter_ < 0:
        raise ValueError(f"n_iter {est.n_iter_!r} is not a count")


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
    if getattr(est, "feature_importances_", None) is not None:
        _length("feature_importances", est.feature_importances_, est.n_features_in_)
