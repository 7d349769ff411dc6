"""Linear analogy diagnostic (3CosAdd, docs/paper.md section 6) for any embedding matrix.

A question ``(a, b, c, d)`` reads "a is to b as c is to d". With unit-normalised rows
``e``, the query is ``f = e_c - e_a + e_b``; every vocabulary word except a, b and c is
ranked by cosine with f. Reported: top-1 accuracy (the best word is d) and the mean of
``cos(f, e_d)`` over the scored questions; questions with a word outside the vocabulary are
skipped and counted. This is the protocol of the paper's Tables 1-2 (Google analogy set).

:func:`model_vocabulary` gives a fitted :class:`~tabmoe.TabularMoEClassifier`'s token
embeddings or (one-layer models) its continuous word experts ``alpha[w, j]`` with
``"column=value"`` names, ready for :func:`analogy_scores`.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence, Sized
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted

from .._frame import as_arrow_table, python_value
from ..nn.ensemble import StackedModel
from .moe import value_experts

#: Similarities a batch of questions holds at most (float64: 128 MiB): a batch is
#: ``questions x V``, so ``batch_size`` questions of a large vocabulary held 1.6 GB a copy
#: at V = 200,000 (3.2 GB peak) and would hold 8 GB at V = 10^6.
MAX_BATCH_SIMILARITIES = 2**24


@dataclass
class AnalogyResult:
    """3CosAdd scores over the questions whose four words are in the vocabulary."""

    top1: float  # share of scored questions whose best-ranked word is d
    mean_cosine: float  # mean cos(f, e_d)
    n_questions: int  # scored questions
    n_skipped: int  # questions with a word outside the vocabulary
    predictions: list = field(default_factory=list)  # best-ranked word per scored question (None: no candidate)


def analogy_scores(
    embeddings: Any,
    vocabulary: Iterable,
    questions: Any,
    batch_size: int = 1024,
) -> AnalogyResult:
    """Score analogy ``questions`` (a, b, c, d) on ``embeddings`` (V, dim) named by ``vocabulary`` (V,).

    ``questions``: an iterable of 4-word sequences, or a DataFrame (pandas, polars, a
    pyarrow Table) of four columns with one question per row.

    Rows must be finite (ValueError naming them otherwise); they are normalised to unit
    length first (zero rows stay zero and never rank first). A question with no candidate
    left (every other word a zero row) is a miss with prediction None.
    Computation is in float64, at most ``batch_size`` questions at a time, on the CPU:
    ``embeddings`` may be a tensor on any device (a network's weights, with their gradient).
    A batch holds questions x V similarities, at most ``MAX_BATCH_SIMILARITIES`` (fewer
    questions a batch on a vocabulary of more than 16,384 words), so memory stays bounded
    whatever V.
    """
    if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    if isinstance(embeddings, torch.Tensor):  # numpy reads CPU tensors only, without grad or bf16
        embeddings = embeddings.detach().to("cpu", torch.float64)
    emb = torch.as_tensor(np.asarray(embeddings, dtype=np.float64))
    if (table := as_arrow_table(questions)) is not None:
        # a polars DataFrame or pyarrow Table, read by rows as a pandas frame: iterating a
        # polars frame gives its columns, each taken as a question (of four rows: silently)
        questions = zip(*(column.to_pylist() for column in table.columns), strict=True)
    if emb.ndim != 2:
        raise ValueError(f"embeddings must be a 2-d (V, dim) matrix, got shape {tuple(emb.shape)}.")
    for name, arg, what in (("vocabulary", vocabulary, "V words"), ("questions", questions, "(a, b, c, d) questions")):
        if not isinstance(arg, Iterable):  # was: "'NoneType' object is not iterable"
            raise TypeError(f"{name} must be a sequence of {what}, got {type(arg).__name__}.")
    words = list(vocabulary)
    if len(words) != emb.shape[0]:
        raise ValueError(f"vocabulary has {len(words)} words for {emb.shape[0]} embedding rows.")
    bad = (~torch.isfinite(emb).all(1)).nonzero()[:, 0].tolist()
    if bad:  # NaN wins argmax: a NaN row answered nearly every question, a NaN matrix scored 1.0
        shown = [python_value(words[i]) for i in bad[:5]]
        raise ValueError(
            f"embeddings hold NaN or infinite values in {len(bad)} row(s), e.g. {shown}."
        )
    try:
        index = {w: i for i, w in enumerate(words)}
    except TypeError as exc:  # was: a bare "unhashable type: 'list'"
        raise TypeError(f"vocabulary words must be hashable (str, int, ...): {exc}.") from None
    if len(index) != len(words):
        seen: set = set()
        repeated = list(dict.fromkeys(python_value(w) for w in words if w in seen or seen.add(w)))
        raise ValueError(f"vocabulary contains duplicate words: {repeated[:5]}{' ...' if len(repeated) > 5 else ''}; "
                         "each embedding row needs a name of its own.")
    norms = emb.norm(dim=1, keepdim=True)
    unit = emb / norms.clamp_min(1e-300)
    zero = norms[:, 0] == 0  # (V,) rows with no direction: never a prediction
    rows, skipped = [], 0
    if isinstance(questions, pd.DataFrame):  # iterating a frame gives its column labels
        questions = questions.itertuples(index=False, name=None)
    for q in questions:
        if not isinstance(q, Sized) or len(q) != 4:
            raise ValueError(f"an analogy question has 4 words (a, b, c, d), got {q!r}.")
        try:
            known = all(w in index for w in q)
        except TypeError as exc:
            raise TypeError(f"an analogy question's words must be hashable, as vocabulary words: {exc}, in {q!r}.") from None
        if known:
            rows.append([index[w] for w in q])
        else:
            skipped += 1
    if not rows:
        return AnalogyResult(float("nan"), float("nan"), 0, skipped)
    ids = torch.as_tensor(rows)  # (Q, 4)
    hits, cosines, predictions = 0, [], []
    batch_size = max(1, min(int(batch_size), MAX_BATCH_SIMILARITIES // len(words)))  # sims: (batch, V)
    for start in range(0, len(ids), batch_size):
        a, b, c, d = ids[start : start + batch_size].T
        f = unit[c] - unit[a] + unit[b]  # (q, dim)
        f = f / f.norm(dim=1, keepdim=True).clamp_min(1e-300)
        sims = f @ unit.T  # (q, V)
        cosines.append(sims.gather(1, d[:, None])[:, 0])
        sims.scatter_(1, torch.stack([a, b, c], 1), -torch.inf)  # exclude the query words
        sims[:, zero] = -torch.inf
        best = sims.argmax(1)
        # no candidate left (every word a query word or a zero row): argmax gave word 0
        ranked = torch.isfinite(sims.gather(1, best[:, None])[:, 0])
        hits += int(((best == d) & ranked).sum())
        predictions.extend(words[i] if ok else None for i, ok in zip(best.tolist(), ranked.tolist(), strict=True))
    return AnalogyResult(
        top1=hits / len(ids),
        mean_cosine=float(torch.cat(cosines).mean()),
        n_questions=len(ids),
        n_skipped=skipped,
        predictions=predictions,
    )


def _value_names(clf: Any, j: int) -> list[str]:
    tok = clf.tokenizer_
    if tok.categories_[j] is not None and tok.vocabulary != "shared":
        return _distinct_names(tok.categories_[j])
    if tok.vocabulary == "shared":
        return _distinct_names(tok.shared_values_)
    return [f"bin{k}" for k in range(int(tok.n_tokens_per_column_[j]))]


def _distinct_names(values: Sequence) -> list[str]:
    """``str`` of each value, or ``repr`` when two differ only in type (``1`` and ``"1"``)."""
    names = [str(v) for v in values]
    return names if len(set(names)) == len(names) else [repr(v) for v in values]


def _column_names(clf: Any) -> list[str]:
    """The names ``explain`` gives the columns: a frame's labels (ints, tuples as their
    repr), ``x0, x1, ...`` only for a model fitted without column labels."""
    names = getattr(clf, "feature_names_in_", None)
    if names is not None:
        return [str(n) for n in names]
    labels = clf.tokenizer_.fitted_column_labels()
    return list(labels) if labels is not None else [f"x{j}" for j in range(clf.n_features_in_)]


def model_vocabulary(
    clf: Any, kind: Literal["tokens", "experts"] = "experts", member: int = 0
) -> tuple[np.ndarray, list[str]]:
    """Embedding rows and names from a fitted ``TabularMoEClassifier``.

    ``"tokens"``: the value-token embeddings (V_values, d_model) — with a shared vocabulary
    one row per value (named by the value), else one per (column, value); with
    ``numeric_embedding="piecewise"`` a bin's row is its embedding at the bin's upper bound.
    ``"experts"`` (one-layer models, ``linear_term=True`` included; not
    ``numeric_embedding="piecewise"``): ``alpha[w, j]`` for every column j and each of its
    values w, heads concatenated: (sum_j n_j, H * K). Names are ``"column=value"``, a
    numeric column's values named by their bin (``"age=bin3"``); where two would read alike
    (columns named with ``=``), every name quotes both parts (``"'a=b'='c'"``).
    ``member`` picks the ensemble member.
    """
    if not hasattr(clf, "fit"):  # e.g. clf.module_: sklearn's error printed the whole module
        raise TypeError(f"model_vocabulary takes the fitted TabularMoEClassifier (clf), not {type(clf).__name__}.")
    check_is_fitted(clf)  # an unfitted estimator: NotFittedError, not "no attribute 'module_'"
    if isinstance(member, bool) or not isinstance(member, numbers.Integral):
        # True picked member 1; a str or float failed inside the ensemble or torch
        raise ValueError(f"member must be an integer (the ensemble member), got {member!r}.")
    module = clf.module_
    if isinstance(module, StackedModel):
        module = module.member(member)
    elif member not in (0, -1):
        raise IndexError(f"member {member} out of range for 1 member (the model has n_members=1).")
    tok = clf.tokenizer_
    columns = _column_names(clf)
    with torch.no_grad():
        if kind == "tokens":
            table = module.token_table().detach().cpu().numpy()
            if tok.vocabulary == "shared":
                ids = tok.output_token_ids(0)
                return table[ids], _value_names(clf, 0)
            rows = [table[tok.output_token_ids(j)] for j in range(len(columns))]
            return np.concatenate(rows), _pair_names(clf, columns)
        if kind != "experts":
            raise ValueError(f"kind must be 'tokens' or 'experts', got {kind!r}.")
        # value_experts, not MixtureOfExperts.from_model: a linear_term=True model has experts
        # (from_model refuses it for its label logits, which this does not read)
        token_experts, column_experts = value_experts(module)
        rows = []
        for j in range(len(columns)):
            ids = torch.as_tensor(tok.output_token_ids(j), device=token_experts.device)
            alpha = token_experts[:, ids] + column_experts[:, j : j + 1]  # (H, n_j, K)
            rows.append(alpha.transpose(0, 1).flatten(1).cpu().numpy())
        return np.concatenate(rows), _pair_names(clf, columns)


def _pair_names(clf: Any, columns: list[str]) -> list[str]:
    """``"column=value"`` for every column's values; where two read alike (column ``a=b``
    with value ``c`` and column ``a`` with value ``b=c``: analogy_scores refused them as
    duplicate words), both parts quoted (``'a=b'='c'``, ``'a'='b=c'``) in every name."""
    pairs = [(col, v) for j, col in enumerate(columns) for v in _value_names(clf, j)]
    names = [f"{col}={v}" for col, v in pairs]
    return names if len(set(names)) == len(names) else [f"{col!r}={v!r}" for col, v in pairs]
