"""Study 70's research-only reader: a value unseen in its column, but kept by another column,
read as that column's token of the same value, not as the untrained UNKNOWN token.

Many tables write one alphabet in several columns: a board's squares (x / o / b), a DNA
window (A / C / G / T), yes / no answers, ordinal scales (low / med / high / vhigh in
car's `buying` and `maint`). With a vocabulary per column, a value column j never held at
fit is UNKNOWN there even when column j' learned a token for the very same value. The
paper's one code space (``vocabulary="shared"``) reads it as that token, and study 38
(refitted after the fix that does so) lost in distribution on the shared space itself; this
reader keeps the per-column network and borrows only for such values: the row is predicted
as the mean of the label probabilities with x_j read as column j'`s token of the value, over
every categorical column j' != j that kept it,

    p(y | x) = mean_{j'} p(y | x_-j, x_j = token_{j'}(v)),

each embedding entering at column j's position (token_{j'}(v)'s embedding plus column j's).
Only rows with exactly one UNKNOWN cell whose value another column kept are re-read (the
held-out check of study 52 alters one column); every other row keeps the UNKNOWN reading.
The fit is the estimator's, unchanged, and so is its own ``predict``: :meth:`readings`
gives the borrowed reading's predictions beside it, so ``research.py`` pairs both on the
same network.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import torch
from impute_unknown import _label_proba

from tabmoe import TabularMoEClassifier
from tabmoe.tokenizer import UNKNOWN


class BorrowedUnknownClassifier(TabularMoEClassifier):
    """Research-only (study 70): the defaults' fit and predictions, with :meth:`readings`."""

    def readings(self, X: Any) -> dict[str, np.ndarray]:
        """``{"borrow": predictions}``: the label read with borrowed tokens where they apply."""
        head = self._label_logits(X)
        return {"borrow": self.classes_[borrowed_logits(self, X, head).argmax(1)]}


def borrowed_ids(tokenizer, frame: pd.DataFrame, row: int, j: int) -> list[int]:
    """Token ids, one per other categorical column that kept ``frame``'s value at (row, j)."""
    value = frame.iat[row, j]
    if pd.isna(value):
        return []
    ids = []
    for other in np.flatnonzero(tokenizer.is_categorical_):
        if other == j:
            continue
        index, token = tokenizer._build_lookup(int(other))
        at = index.get_indexer(pd.Index([value], dtype=object))[0]
        if at >= 0 and token[at] != UNKNOWN:
            ids.append(int(token[at]))
    return ids


@torch.no_grad()
def borrowed_logits(estimator: TabularMoEClassifier, X: Any, head_logits: np.ndarray) -> np.ndarray:
    """(n, n_classes) float32 log-probabilities: the label head's (``head_logits``, from
    ``_label_logits(X)``), with each row holding exactly one UNKNOWN cell whose value another
    column kept re-read as the mean over those columns' tokens of the value."""
    if estimator.n_members != 1 or estimator.numeric_embedding_ == "piecewise" or estimator.vocabulary != "per_column":
        raise ValueError("the borrowing reader takes one member, bin embeddings and vocabulary='per_column'")
    frame = estimator._prepare_X(X)
    with warnings.catch_warnings():  # the label head's pass has warned about the unseen values
        warnings.simplefilter("ignore")
        tokens = estimator._transform(frame)  # (n, L-1)
    out = torch.log_softmax(torch.from_numpy(head_logits).float(), dim=1).numpy()
    unseen = tokens == UNKNOWN
    module, device = estimator.module_.eval(), estimator._module_device()
    order = np.searchsorted(np.sort(estimator.label_token_ids_), estimator.label_token_ids_)
    with estimator._predict_autocast():
        for row in np.flatnonzero(unseen.sum(1) == 1):
            j = int(np.flatnonzero(unseen[row])[0])
            ids = borrowed_ids(estimator.tokenizer_, frame, int(row), j)
            if not ids:
                continue
            filled = np.repeat(tokens[row : row + 1], len(ids), axis=0)  # (K, L-1)
            filled[:, j] = ids
            attend = estimator._attend(filled)
            t = torch.from_numpy(filled).long().to(device)
            att = None if attend is None else torch.from_numpy(attend).to(device)
            proba = _label_proba(module, t, att, order).mean(0)  # (C,)
            out[row] = torch.log(proba.clamp_min(1e-30)).cpu().numpy()
    return out


def main(argv: list[str] | None = None) -> int:
    """Predict seconds of ``unknown="token"`` and ``"borrow"`` (the estimator's option, which
    reads as this module's reader does) on rows that all hold one unseen value that the five
    other columns kept, one thread; and whether the option's predictions equal the reader's."""
    import argparse
    import time

    from tabmoe.bench import limited_threads

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args(argv)
    rng = np.random.RandomState(0)
    levels = ["low", "med", "high", "vhigh"]
    X = pd.DataFrame({f"c{i}": rng.choice(levels, args.rows) for i in range(6)})
    y = (X["c0"].isin(["high", "vhigh"]) ^ X["c1"].isin(["low"])).to_numpy().astype(int)
    seen = (X["c0"] != "vhigh").to_numpy()  # c0 never holds "vhigh" at fit; c1-c5 do
    test = X[~seen]
    with limited_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BorrowedUnknownClassifier(random_state=0, unknown="token").fit(X[seen], y[seen])
        reader = model.readings(test)["borrow"]
        for mode in ("token", "borrow") * 2:
            model.set_params(unknown=mode)
            start = time.perf_counter()
            pred = model.predict(test)
            print(f"unknown={mode!r}: {time.perf_counter() - start:.3f} s for {len(test)} rows")
        print(f"the option's predictions equal the reader's: {bool(np.array_equal(pred, reader))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
