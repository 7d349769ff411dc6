"""Study 55's research-only readers: a value unseen at fit read as the network's expectation
over the column's seen values, not as the untrained UNKNOWN token.

A categorical value the network never saw becomes UNKNOWN, whose embedding is never trained
(study 52: neither training it nor leaving the column out of the attention does better on
values held out of training). The network does know what a column's value is likely to be:
it is trained to predict every column from the others. So a row whose column j is unseen
can be predicted as the mixture over j's seen values v,

    p(y | x) = sum_v q(v) p(y | x_-j, x_j = v),

which is what a Bayesian reading of "some value of j, not one we know" gives when j's true
value is taken to be distributed like the seen ones. ``q`` is:

* ``"conditional"``: the network's own distribution of j given the rest of the row,
  q(v) = sum_c p(c | x_-j) p(x_j = v | x_-j, y = c): column j's head with j masked and the
  label set to each class c (the contexts the feature heads are trained in, where the label
  is visible), weighted by the label head's probabilities with j left out of the attention;
* ``"frequency"``: v's share of the training rows the estimator keeps
  (``train_sample_tokens_``, every training row up to 10,000).

Only rows with exactly one unseen categorical value are re-read (a row with several keeps
the UNKNOWN reading; the held-out check of study 52 alters one column). The fit is the
estimator's, unchanged, and its own ``predict`` is too: :meth:`readings` gives the other
readings' predictions beside it, so ``research.py`` pairs them on the same network.

    python benchmarks/impute_unknown.py [--rows 2000]

times predict with the UNKNOWN token and with each reader on a table whose predicted rows
all hold one unseen value (one thread).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from tabmoe import TabularMoEClassifier
from tabmoe.tokenizer import MASK, UNKNOWN

SOURCES = ("conditional", "frequency")
#: Completed rows (row x value) a forward pass.
BATCH_ROWS = 4096


class ImputedUnknownClassifier(TabularMoEClassifier):
    """Research-only (study 55): the defaults' fit and predictions, with :meth:`readings`."""

    def readings(self, X: Any) -> dict[str, np.ndarray]:
        """``{"impute_<source>": predictions}`` for each source in ``SOURCES``."""
        head = self._label_logits(X)
        return {f"impute_{s}": self.classes_[imputed_logits(self, X, head, s).argmax(1)] for s in SOURCES}


def _label_proba(module, tokens: torch.Tensor, attend: torch.Tensor | None, order: np.ndarray) -> torch.Tensor:
    """(B, C) float32 label probabilities in ``classes_`` order from feature tokens (B, L-1)."""
    return torch.softmax(module.label_logits(tokens, attend).float()[:, order], dim=1)


def _conditional(estimator, module, tokens: torch.Tensor, attend: torch.Tensor | None, j: int,
                 ids: torch.Tensor, order: np.ndarray) -> torch.Tensor:
    """(B, V) q(v) = sum_c p(c | x_-j) p(x_j = v | x_-j, y = c) for rows ``tokens`` (B, L-1)."""
    b = len(tokens)
    left_out = torch.ones_like(tokens, dtype=torch.bool) if attend is None else attend.clone()
    left_out[:, j] = False
    weight = _label_proba(module, tokens, left_out, order)  # (B, C): p(c | x_-j)
    masked = tokens.clone()
    masked[:, j] = MASK
    full_attend = None if attend is None else F.pad(attend, (0, 1), value=True)
    if full_attend is not None:
        full_attend[:, j] = True  # the MASK is attended, as in training
    query = torch.tensor([j], device=tokens.device)
    q = torch.zeros(b, len(ids), device=tokens.device)
    for k, label in enumerate(estimator.label_token_ids_):  # classes_ order
        full = F.pad(masked, (0, 1), value=int(label))  # (B, L): the row with y = c_k
        h = module.hidden(full, full_attend, query)[:, 0]  # (B, d)
        q += weight[:, k : k + 1] * torch.softmax(module.heads.column_logits(h, ids).float(), dim=1)
    return q


def _frequency(estimator, j: int, ids: np.ndarray) -> np.ndarray:
    """(V,) each of column j's value tokens' share of the kept training rows (uniform if none)."""
    counts = (estimator.train_sample_tokens_[:, j][:, None] == ids[None, :]).sum(0).astype(np.float64)
    return counts / counts.sum() if counts.sum() > 0 else np.full(len(ids), 1.0 / len(ids))


@torch.no_grad()
def imputed_logits(estimator: TabularMoEClassifier, X: Any, head_logits: np.ndarray, source: str) -> np.ndarray:
    """(n, n_classes) float32 log-probabilities: the label head's (``head_logits``, from
    ``_label_logits(X)``), with each row holding exactly one unseen categorical value
    re-read as the mixture over that column's seen values weighted by ``source``'s q."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    if estimator.n_members != 1 or estimator.numeric_embedding_ == "piecewise" or estimator.unknown != "token":
        raise ValueError("the imputing readers take one member, bin embeddings and unknown='token'")
    frame = estimator._prepare_X(X)
    with warnings.catch_warnings():  # the label head's pass has warned about the unseen values
        warnings.simplefilter("ignore")
        tokens = estimator._transform(frame)  # (n, L-1)
    attend = estimator._attend(tokens)
    unseen = tokens == UNKNOWN
    single = unseen.sum(1) == 1
    out = torch.log_softmax(torch.from_numpy(head_logits).float(), dim=1).numpy()
    module, device = estimator.module_.eval(), estimator._module_device()
    order = np.searchsorted(np.sort(estimator.label_token_ids_), estimator.label_token_ids_)
    with estimator._predict_autocast():
        for j in np.flatnonzero((unseen & single[:, None]).any(0)):
            rows = np.flatnonzero(single & unseen[:, j])
            ids = np.asarray(estimator.tokenizer_.output_token_ids(j), dtype=np.int64)  # (V,)
            ids_t = torch.from_numpy(ids).to(device)
            if source == "frequency":
                prior = torch.from_numpy(_frequency(estimator, j, ids)).float().to(device)
            step = max(1, BATCH_ROWS // len(ids))
            for start in range(0, len(rows), step):
                part = rows[start : start + step]
                t = torch.from_numpy(tokens[part]).long().to(device)  # (B, L-1)
                att = None if attend is None else torch.from_numpy(attend[part]).to(device)
                if source == "conditional":
                    q = _conditional(estimator, module, t, att, int(j), ids_t, order)  # (B, V)
                else:
                    q = prior.expand(len(part), -1)
                filled = t.repeat_interleave(len(ids), 0)  # (B*V, L-1), value-fastest
                filled[:, j] = ids_t.repeat(len(part))
                att_f = None if att is None else att.repeat_interleave(len(ids), 0)
                proba = _label_proba(module, filled, att_f, order).view(len(part), len(ids), -1)  # (B, V, C)
                mixed = torch.einsum("bv,bvc->bc", q, proba)  # (B, C)
                out[part] = torch.log(mixed.clamp_min(1e-30)).cpu().numpy()
    return out


def main(argv: list[str] | None = None) -> int:
    """Predict seconds of the UNKNOWN reading and of each imputing reader, one thread."""
    import argparse
    import time

    import pandas as pd

    from tabmoe.bench import limited_threads

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2000)
    args = parser.parse_args(argv)
    rng = np.random.RandomState(0)
    X = pd.DataFrame({f"c{i}": rng.choice(list("abcdefgh"), args.rows) for i in range(10)})
    y = (X["c0"].isin(list("abcd")) ^ X["c1"].isin(list("aceg"))).to_numpy().astype(int)
    test = X.iloc[: args.rows // 5].copy()
    test["c0"] = "z"  # unseen in every predicted row
    with limited_threads(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ImputedUnknownClassifier(random_state=0, unknown="token").fit(X.iloc[args.rows // 5 :], y[args.rows // 5 :])
        start = time.perf_counter()
        head = model._label_logits(test)
        print(f"UNKNOWN token: {time.perf_counter() - start:.3f} s for {len(test)} rows")
        for source in SOURCES:
            start = time.perf_counter()
            imputed_logits(model, test, head, source)
            print(f"impute {source}: {time.perf_counter() - start:.3f} s (after the head's pass)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
