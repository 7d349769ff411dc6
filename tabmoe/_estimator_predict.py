"""``TabularMoEClassifier``'s label logits at predict time, in bounded memory, and
``unknown="borrow"``: a category unseen in its column, but kept by other categorical columns,
read as their tokens of it (docs/research.md#study-70)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import torch

from .nn._base import predict_chunk_rows
from .tokenizer import MISSING, UNKNOWN


class PredictMixin:
    """The label's logits of ``TabularMoEClassifier`` for the rows of ``X``."""

    @torch.no_grad()
    def _label_logits(self, X: Any) -> np.ndarray:
        """(n, n_classes) float32 logits, ``classes_`` order. ``X`` is checked once, tokenized a
        chunk of whole batches at a time (``predict_chunk_rows``), run ``_predict_rows()`` rows
        at a time: memory beyond ``X`` and the output does not grow with the rows."""
        frame = self._prepare_X(X)  # checks that the estimator is fitted first
        rows = self._predict_rows()
        chunk = predict_chunk_rows(rows, frame.shape[1])
        chunks = self.tokenizer_.transform_batches(frame, chunk, unseen_note=self._unseen_note(),
                                                   missing_note=self._missing_note())
        module, device = self.module_.eval(), self._module_device()
        out = np.empty((len(frame), len(self.classes_)), dtype=np.float32)
        # Per-column vocabularies only: the shared code space already reads a value another
        # column kept as its one token, and keeps a value rarer than min_frequency in its own
        # column UNKNOWN on purpose (borrowing read it as the shared token there).
        borrow = self.unknown == "borrow" and getattr(self.tokenizer_, "vocabulary", "per_column") != "shared"
        with self._predict_autocast():
            for part, chunk_tokens in chunks:
                positions = self._positions(frame.iloc[part], label=False)
                out[part] = self._run_label(module, device, chunk_tokens, positions, rows)
                if borrow:
                    self._borrow(module, device, frame.iloc[part], chunk_tokens, positions, rows, out[part])
        return out

    def _run_label(self, module, device, tokens: np.ndarray, positions: np.ndarray | None, rows: int) -> np.ndarray:
        """(n, n_classes) float32 label logits of feature ``tokens`` (n, L-1), ``rows`` a pass."""
        attend = self._attend(tokens)
        column = np.searchsorted(np.sort(self.label_token_ids_), self.label_token_ids_)
        out = np.empty((len(tokens), len(self.classes_)), dtype=np.float32)
        for start in range(0, len(tokens), rows):
            batch = slice(start, start + rows)
            t = torch.from_numpy(tokens[batch]).to(device)
            att = None if attend is None else torch.from_numpy(attend[batch]).to(device)
            pos = None if positions is None else torch.from_numpy(positions[batch]).to(device)
            out[batch] = module.label_logits(t, att, pos).float()[:, column].cpu().numpy()
        return out

    def _borrow(self, module, device, frame: pd.DataFrame, tokens: np.ndarray, positions: np.ndarray | None,
                rows: int, out: np.ndarray) -> None:
        """Re-read in ``out`` (n, n_classes) each row whose one UNKNOWN cell is a categorical
        value other categorical columns kept: log of the mean label probabilities over the row
        read with each such column's token of it (study 70's reading, exactly). The borrowed
        copies are run in groups of at most max(n, ``rows``) (one row's copies at least): a
        chunk's copies all at once were up to (categorical columns - 1) times the chunk."""
        cells = borrowed_cells(self.tokenizer_, frame, tokens)
        limit, group, copies = max(len(tokens), rows), [], 0
        for cell in cells:
            if group and copies + len(cell[2]) > limit:
                self._borrow_group(module, device, group, tokens, positions, rows, out)
                group, copies = [], 0
            group.append(cell)
            copies += len(cell[2])
        if group:
            self._borrow_group(module, device, group, tokens, positions, rows, out)

    def _borrow_group(self, module, device, cells: list[tuple[int, int, np.ndarray]], tokens: np.ndarray,
                      positions: np.ndarray | None, rows: int, out: np.ndarray) -> None:
        """``_borrow`` for ``cells`` (``borrowed_cells``' entries), their copies run at once."""
        filled = np.concatenate([np.repeat(tokens[row : row + 1], len(ids), axis=0) for row, _, ids in cells])
        starts = np.cumsum([0] + [len(ids) for _, _, ids in cells])
        for (_, j, ids), start in zip(cells, starts[:-1], strict=False):
            filled[start : start + len(ids), j] = ids
        pos = None if positions is None else np.concatenate(
            [np.repeat(positions[row : row + 1], len(ids), axis=0) for row, _, ids in cells])
        logits = torch.from_numpy(self._run_label(module, device, filled, pos, rows))
        proba = torch.softmax(logits, dim=1)
        for k, (row, _, _) in enumerate(cells):
            mean = proba[starts[k] : starts[k + 1]].mean(0)
            out[row] = torch.log(mean.clamp_min(1e-30)).numpy()


def borrowed_cells(tokenizer: Any, frame: pd.DataFrame, tokens: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """``(row, column j, token ids)`` for each row of ``tokens`` (n, L-1) whose only UNKNOWN
    cell is in a categorical column j and holds a value other categorical columns kept: the
    ids are those columns' tokens of that value (``tokenizer.token_id``, values compared as
    the tokenizer compares them). Rows with no such cell, or with several UNKNOWN cells,
    are not listed: they keep the UNKNOWN reading."""
    unseen = tokens == UNKNOWN
    categorical = np.flatnonzero(tokenizer.is_categorical_)
    cells, known = [], {}  # known: (j, type, value) -> ids, looked up once per distinct value (1 is not True)
    for row in np.flatnonzero(unseen.sum(1) == 1):
        j = int(np.flatnonzero(unseen[row])[0])
        if not tokenizer.is_categorical_[j]:
            continue
        value = frame.iat[int(row), j]
        try:
            ids = known.get((j, type(value), value))
        except TypeError:  # unhashable: the tokenizer has refused it already
            continue
        if ids is None:
            found = [tokenizer.token_id(int(other), value) for other in categorical if other != j]
            ids = known[(j, type(value), value)] = np.asarray(
                [i for i in found if i is not None and i not in (UNKNOWN, MISSING)], dtype=tokens.dtype)
        if len(ids):
            cells.append((int(row), j, ids))
    return cells
