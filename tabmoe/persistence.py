"""Save / load a fitted ``TabularMoEClassifier`` without executing code on load.

The file is a ``torch.save`` archive holding only strings (JSON documents) and tensors, read
back with ``torch.load(weights_only=True)``: loading never unpickles arbitrary objects. A file
whose payload needs anything else (an injected pickle, say) is refused by torch's restricted
unpickler. Category values are written with a type tag (none, str, int, float, bool, timestamp,
timedelta, period, interval) so they come back with their type.

A SHA-256 of the JSON documents and tensor bytes is stored with them, so that a damaged
file (bit rot, a truncated copy) is refused instead of loading changed weights. It is no
protection against an attacker, who can rewrite the checksum too: what makes loading safe is
that it runs no code.

A file that passes the checksum is still checked for consistency by the classes that own
the state (each ``_from_state``: sizes, offsets and token ids against each other), so every
damaged or crafted file raises :class:`IncompatibleFileError` at load rather than an
``IndexError`` in predict. ``save`` writes atomically (``write_file``).

``pickle`` / ``joblib`` also work (and load on CPU-only machines), but loading a pickle runs
whatever code the file names: only unpickle files you trust. See SECURITY.md.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import math
import os
import pickle
import stat
import warnings
import zipfile
from collections.abc import Set, ValuesView
from typing import Any

import numpy as np
import pandas as pd
import sklearn
import torch

from ._frame import python_value
from ._stack import catch_warnings
from ._version import __version__

FORMAT = "tabmoe.TabularMoEClassifier"
FORMAT_VERSION = 1


class IncompatibleFileError(ValueError):
    """The file is not a tabmoe model, is damaged, or was written by an incompatible version."""


class UnsafeFileError(IncompatibleFileError, pickle.UnpicklingError):
    """The file is no tabmoe archive: damaged where the archive starts, or a pickle that
    would run code to load. Both an :class:`IncompatibleFileError` and a
    ``pickle.UnpicklingError``."""


# ------------------------------------------------------------- values
def encode_value(value: Any, what: str = "category value", where: str = "") -> list:
    """A category / class value as ``[type tag, JSON value]``; ``what`` and ``where`` (e.g.
    "class label", " in column 'x'") place it in the TypeError for one that cannot be saved."""
    if isinstance(value, np.datetime64 | np.timedelta64):  # .item() gives ns as an int
        value = pd.Timestamp(value) if isinstance(value, np.datetime64) else pd.Timedelta(value)
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
    if isinstance(value, pd.Period):
        return ["period", [int(value.ordinal), value.freqstr]]
    if isinstance(value, pd.Interval):  # pd.cut's categories
        return ["interval", [encode_value(value.left, what, where), encode_value(value.right, what, where), value.closed]]
    raise TypeError(
        f"Cannot save {what} {value!r} of type {type(value).__name__}{where}: only str, int, "
        "float, bool, None, timestamps, timedeltas, periods and intervals can be saved safely."
    )


def first_unsaveable(values: Any, what: str = "category value", where: str = "") -> tuple[Any, TypeError] | None:
    """The first of ``values`` that :func:`encode_value` refuses, with its TypeError (one
    value of each type is tried); None when all can be saved."""
    tried = set()
    for value in values:
        if type(value) in tried:
            continue
        tried.add(type(value))
        try:
            encode_value(value, what, where)
        except TypeError as exc:
            return value, exc
    return None


def decode_value(item: list) -> Any:
    """The value of an :func:`encode_value` item ``[type tag, JSON value]`` (a numpy scalar
    comes back as the Python one); :class:`IncompatibleFileError` for an unknown tag."""
    tag, value = item
    if tag == "float":
        return float(value)
    if tag == "timestamp":
        return pd.Timestamp(value)
    if tag == "timedelta":
        if isinstance(value, list):
            return pd.Timedelta(np.timedelta64(value[0], value[1]))
        return pd.Timedelta(value)  # nanoseconds, as written before [count, unit]
    if tag == "period":
        return pd.Period(ordinal=value[0], freq=value[1])
    if tag == "interval":
        return pd.Interval(decode_value(value[0]), decode_value(value[1]), closed=value[2])
    if tag in ("none", "bool", "int", "str"):
        return value
    raise IncompatibleFileError(f"Unknown value type tag {tag!r} in file.")


def encode_index(index: pd.Index | None, where: str = "") -> list | None:
    """An index of category values (or None) as a JSON list of :func:`encode_value` items."""
    return None if index is None else [encode_value(v, where=where) for v in index]


def decode_index(items: list | None) -> pd.Index | None:
    """The object index written by :func:`encode_index`."""
    return None if items is None else pd.Index([decode_value(v) for v in items], dtype=object)


def json_params(params: dict) -> dict:
    """``get_params()`` as JSON (devices as strings, dicts with typed keys, tuples kept as
    tuples; arrays, ranges, sets and dict views as lists); TypeError otherwise."""
    out = {}
    for key, value in params.items():
        value = _json_param(value)
        try:
            json.dumps(value)
        except TypeError as exc:
            raise TypeError(f"Parameter {key}={value!r} cannot be saved as JSON.") from exc
        out[key] = value
    return out


def _json_param(value: Any) -> Any:
    value = python_value(value)  # e.g. a value from GridSearchCV's numpy grid
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, (np.ndarray, pd.Index, pd.Series)):
        value = value.tolist()
    if isinstance(value, (range, Set, ValuesView)):  # categorical_features=range(3), a set of
        try:  # names, dict.keys(): fit takes them, save failed after the training
            value = sorted(value) if isinstance(value, Set) else list(value)  # a set: one file
        except TypeError:  # names of several types
            value = list(value)
    if isinstance(value, np.random.RandomState):
        return None  # a RandomState cannot be stored as data; the fit is already done
    if isinstance(value, dict):
        return {"__dict__": [[encode_value(k), _json_param(v)] for k, v in value.items()]}
    if isinstance(value, tuple):  # JSON has lists only: get_params after load must equal it
        return {"__tuple__": [_json_param(v) for v in value]}
    if isinstance(value, list):
        return [_json_param(v) for v in value]
    return value




def load_params(params: dict) -> dict:
    """The parameters written by :func:`json_params`."""
    return {key: _loaded_param(value) for key, value in params.items()}


def _loaded_param(value: Any) -> Any:
    if isinstance(value, list):
        return [_loaded_param(v) for v in value]
    if isinstance(value, dict):
        if list(value) == ["__tuple__"]:
            return tuple(_loaded_param(v) for v in value["__tuple__"])
        if "__dict__" in value:
            return {decode_value(k): _loaded_param(v) for k, v in value["__dict__"]}
        return {k: _loaded_param(v) for k, v in value.items()}  # a dict's dict, written before tuples were kept
    return value


# ---------------------------------------------------------- estimator
def save(estimator: Any, path: str | os.PathLike) -> None:
    """Write a fitted estimator to ``path`` (JSON documents + CPU tensors; a leading ``~``
    is the user's home).

    The estimator supplies its state, ``estimator._get_state() -> (documents, tensors)``:
    ``documents`` maps each of DOCUMENT_KEYS to JSON-able data, ``tensors`` each of
    CHECKED_TENSORS to a dict of tensors ("train_sample" only where the estimator holds one,
    as a file written before adapt() existed does not). This module only writes them (with format, versions
    and checksum); it never reads the estimator's attributes itself.
    """
    documents, tensors = estimator._get_state()
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": json.dumps(
            {"tabmoe": __version__, "torch": torch.__version__, "sklearn": sklearn.__version__}
        ),
        **{key: json.dumps(documents[key]) for key in DOCUMENT_KEYS},
        **{
            key: {k: v.detach().cpu() for k, v in tensors[key].items()}
            for key in CHECKED_TENSORS
            if key in tensors
        },
    }
    payload["checksum"] = checksum(payload)
    write_file(payload, path)


# ------------------------------------------------------------- writing
#: Characters of the target's name that its temporary file's name starts with (at most 128
#: bytes in UTF-8, leaving room for the suffix below any file system's 255-byte limit).
TMP_STEM_CHARS = 32


def write_file(payload: dict, path: str | os.PathLike) -> None:
    """``torch.save`` ``payload`` to ``path`` atomically: into a temporary file in the same
    folder, flushed and fsynced, then renamed over ``path`` (``os.replace``). A failed write
    leaves an existing ``path`` as it was and removes the temporary file; the error
    (an ``OSError``) names ``path`` in plain words. A leading ``~`` is the user's home."""
    # a bytes path (load reads one) failed: "Can't mix strings and bytes"; "~/m.tabmoe" was
    # a folder "~" under the working directory, as tabmoe's data paths were before
    path = os.path.expanduser(os.fsdecode(path))
    if not path:  # abspath("") is the working folder: the temporary file went to its parent
        raise FileNotFoundError("Cannot save the model to '': the path is empty; give a file name.")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"Cannot save the model to {path!r}: it is a folder; give a file name.")
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise FileNotFoundError(f"Cannot save the model to {path!r}: the folder {folder!r} {what}.")
    with contextlib.suppress(FileNotFoundError):
        # The rename would replace a device, pipe or socket with a file (as root, /dev/full).
        mode = os.lstat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise OSError(errno.EINVAL, f"Cannot save the model to {path!r}: it is not a regular "
                          "file (a device, pipe or socket), which a save would replace; give a file name.")
    # The name's start only: the whole of a long name (up to the 255 bytes a file name may
    # have) plus ".<pid>.<hex>.tmp" was "File name too long" for a name the target can have.
    stem = os.path.basename(path)[:TMP_STEM_CHARS]
    tmp = os.path.join(folder, f".{stem}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    # A file saved over keeps its permissions: a private (0600) model file became 0644.
    # The temporary file is private until then, so it is never readable by more users.
    kept_mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.isfile(path) else None
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(tmp, flags, 0o666 if kept_mode is None else 0o600)
    except OSError as exc:
        raise _write_error(path, exc) from exc
    try:
        # fdopen first: a chmod that raised before it left the descriptor open
        with os.fdopen(fd, "wb") as file:
            if kept_mode is not None:
                os.chmod(tmp, kept_mode)  # the file is open for writing whatever its mode
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


#: The JSON documents of an estimator's state (see :func:`save`).
DOCUMENT_KEYS = ("params", "fitted", "tokenizer")
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


#: Lines of torch's refusal that advise loading unsafely or filing a torch issue: not ours to give.
_TORCH_ADVICE = ("weights_only", "Weights only load failed", "file an issue", "Check the documentation")


def _refusal_reason(exc: Exception) -> str:
    """The cause in torch's refusal (e.g. "Trying to load unsupported GLOBAL posix.system ..."),
    without its advice to set ``weights_only=False``, which would run the file's code."""
    lines = [line.split(" Please use")[0].strip() for line in str(exc).splitlines()]  # "... to allowlist"
    kept = [line for line in lines if line and not any(a in line for a in _TORCH_ADVICE)]
    return " ".join(kept) or "its pickle needs more than plain data"


def _compressed_member(file: Any) -> str | None:
    """The name of the first compressed member of the zip archive ``file`` (left at its
    start); None if there is none, or if ``file`` is no readable zip (torch.load says why)."""
    try:
        with zipfile.ZipFile(file) as archive:
            return next((i.filename for i in archive.infolist() if i.compress_type != zipfile.ZIP_STORED), None)
    except Exception:  # noqa: BLE001 - a damaged or foreign file: torch.load's error tells
        return None
    finally:
        file.seek(0)


def _oversized_tensor(payload: dict) -> str | None:
    """What is wrong with the first tensor of the payload that declares more bytes than its
    data holds (a view with stride 0, as ``expand`` makes: ``save`` never writes one); None
    if there is none. Checked before the checksum, whose ``contiguous()`` would allocate
    them all: a file of a few kilobytes could declare terabytes."""
    for key in CHECKED_TENSORS:
        tensors = payload.get(key)
        for name, tensor in tensors.items() if isinstance(tensors, dict) else ():
            if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
                continue  # refused by the checksum
            declared, held = tensor.numel() * tensor.element_size(), tensor.untyped_storage().nbytes()
            if declared > held:
                return (f"tensor {name!r} of {key!r} has shape {tuple(tensor.shape)} ({declared:,} bytes), "
                        f"but the file holds {held:,} bytes of data for it")
    return None


def _read(path: str) -> dict:
    """The payload of ``path``, its header checked; IncompatibleFileError if it is not one."""
    with contextlib.ExitStack() as stack:
        opened = stack.enter_context(open(path, "rb"))  # errors opening the file propagate
        # a pipe (/dev/stdin, a shell's <(...), a named pipe) cannot seek, as the zip reader
        # must: it failed with "io.UnsupportedOperation: File or stream is not seekable". Read
        # before taking the warnings lock: the pipe's writer may be a thread that needs it.
        file = opened if opened.seekable() else io.BytesIO(opened.read())
        stack.enter_context(catch_warnings())
        # torch warns about a plain pickle's protocol before refusing it: the error says more
        warnings.filterwarnings("ignore", message="Detected pickle protocol", category=UserWarning)
        compressed = _compressed_member(file)
        if compressed is not None:
            raise IncompatibleFileError(
                f"{path!r} is not a tabmoe file: its archive member {compressed!r} is compressed. "
                "tabmoe (torch.save) writes them uncompressed, and a compressed one can expand a "
                "thousandfold in memory as it is read."
            )
        try:
            payload = torch.load(file, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as exc:  # refused: it is no torch archive (a damaged
            # start, a plain pickle) or its pickle names something that would run code
            raise UnsafeFileError(
                f"{path!r} is refused: it is not a tabmoe file (damaged, or a pickle that would "
                f"run code to load): {_refusal_reason(exc)}"
            ) from exc
        except MemoryError:
            raise
        except Exception as exc:  # a damaged archive: RuntimeError, OSError, EOFError, KeyError, ...
            raise IncompatibleFileError(
                f"{path!r} is not a readable tabmoe file: damaged, or another kind of file "
                f"({type(exc).__name__} from torch.load: {exc})"
            ) from exc
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise IncompatibleFileError(f"{path!r} is not a saved TabularMoEClassifier.")
    version = payload.get("format_version")
    if version != FORMAT_VERSION:
        versions = payload.get("versions", "{}")
        raise IncompatibleFileError(
            # repr: a version "1" (a str) read "has file format version 1 ...; this tabmoe reads version 1"
            f"{path!r} has file format version {version!r} (written by {versions}); "
            f"this tabmoe reads version {FORMAT_VERSION}. Re-save it with a matching tabmoe."
        )
    oversized = _oversized_tensor(payload)
    if oversized is not None:
        raise IncompatibleFileError(f"{path!r} is damaged: {oversized}.")
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


def load(cls: type, path: str | os.PathLike) -> Any:
    """Read a file written by :func:`save` into ``cls._from_state(documents, tensors)`` (CPU
    tensors; :meth:`TabularMoEClassifier.load <tabmoe.TabularMoEClassifier.load>` moves
    the network to its device).

    Raises :class:`IncompatibleFileError` for files of another format or version, and
    :class:`UnsafeFileError` (also a ``pickle.UnpicklingError``) for files that are no torch
    archive or would need code execution to load. A file that loads is checked for internal
    consistency (sizes, offsets, token ids) before it is returned. A leading ``~`` in
    ``path`` is the user's home, as in :func:`save`; a pipe is read whole into memory.
    """
    path = os.path.expanduser(os.fspath(path))
    payload = _read(path)
    try:
        documents = {key: json.loads(payload[key]) for key in DOCUMENT_KEYS}
        # "train_sample" is absent from files written before adapt() existed
        tensors = {key: payload[key] for key in CHECKED_TENSORS if key in payload}
        return cls._from_state(documents, tensors)
    except IncompatibleFileError:
        raise
    except MemoryError:
        raise
    except Exception as exc:
        # A file that passed the checksum but does not describe a consistent model: a missing
        # or mistyped entry, or sizes and token ids that do not fit each other.
        raise IncompatibleFileError(f"{path!r} does not describe a valid model: {exc!r}{_writer(payload)}") from exc


def _writer(payload: dict) -> str:
    """Where the tabmoe that wrote ``payload`` is another than this one, a clause saying so:
    a newer one can write parameters and state (same format version) that this one lacks."""
    try:
        written = json.loads(payload["versions"])["tabmoe"]
    except (KeyError, TypeError, ValueError):  # no versions to name (absent, not JSON, not a dict)
        return ""
    if written == __version__:
        return ""
    return (f"; it was written by tabmoe {written!s}, and this is tabmoe {__version__}: "
            "load it with the version that wrote it")


#: Bytes of padding a saved str dtype of ``classes_`` may declare beyond its longest class.
MAX_CLASSES_PADDING = 2**20


def classes_dtype(code: str | None, classes: list | None = None) -> np.dtype | None:
    """dtype of ``classes_`` as saved (bool, int, float, str, datetime, timedelta or object);
    None if unknown. A str dtype wider than the longest of ``classes`` (as ``y``'s own width
    can be) is refused where the padding it adds passes ``MAX_CLASSES_PADDING`` bytes: a file
    of a few kilobytes declaring ``<U2000000000`` would allocate gigabytes per class."""
    dtype = None if code is None else np.dtype(code)
    if dtype is not None and dtype.kind == "U" and classes:
        longest = max(len(str(c)) for c in classes)
        if dtype.itemsize > 4 * longest and len(classes) * dtype.itemsize > MAX_CLASSES_PADDING:
            raise ValueError(f"classes dtype {code!r} is wider than its longest class ({longest} characters)")
    return dtype if dtype is not None and dtype.kind in "biufUOmM" else None


# ------------------------------------------------------- consistency checks
# Each checks one object rebuilt from a file against itself (to move next to its class's
# state restoring): a ValueError naming what does not fit, before a wrong size or token id
# could surface later as an IndexError in predict.
