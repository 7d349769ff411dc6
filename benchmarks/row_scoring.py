"""Study 53's research-only reader: the class whose completed row the fitted network finds
most probable, not the label head's alone.

The network is trained to predict every column of a row from the others (the label is one
more column). ``TabularMoEClassifier`` predicts with the label's column only:
log p(y = c | x). :class:`RowScoredClassifier` completes the row with each class c in turn
and adds what the feature columns' heads say about that completion:

    score(c) = log p(y = c | x) + row_weight * sum_j log p(x_j | x_-j, y = c)

over the feature columns j whose value is one the network predicts (MISSING and UNKNOWN are
not: ``ColumnHeads.nll`` leaves them out, as the training loss does). With ``row_weight``
equal to ``feature_loss_weight`` (0.1) the class chosen is the one whose completed row has
the lowest training loss; with 1 it is the row's pseudo-log-likelihood (Besag 1975), the
score that masked language models rank sentences by (Salazar et al., *Masked Language Model
Scoring*, ACL 2020). ``row_weight = 0`` is the estimator's own prediction.

The fit is the estimator's, unchanged: only the reading differs, so a variant pairs with the
defaults on the same network. The leave-one-out pass is exact for one layer, the only depth
the research protocol's tables (at most 2,100 training rows) get.

    python benchmarks/row_scoring.py [--rows 5000] [--columns 40] [--row-weight 0.1]

times predict with the label head and with the reader, side by side on speed_defaults.py's
table (fitted on 4/5 of the rows, the other 1/5 predicted).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from tabmoe import TabularMoEClassifier


class RowScoredClassifier(TabularMoEClassifier):
    """Research-only (study 53): predictions by :func:`row_scores` with ``row_weight``."""

    # Set on the instance after construction, not an __init__ parameter (as
    # research.py's TrainerOptionsClassifier.trainer_extra): research.py never clones.
    row_weight: float = 0.0

    def _label_logits(self, X: Any) -> np.ndarray:
        head = super()._label_logits(X)
        if self.row_weight == 0:
            return head
        return row_scores(self, X, head, self.row_weight)


@torch.no_grad()
def feature_log_likelihood(estimator: TabularMoEClassifier, X: Any, rows: int = 512) -> np.ndarray:
    """(n, n_classes) float64: sum_j log p(x_j | x_-j, y = c) over the predictable feature
    values of each row of ``X``, for each class c in ``classes_`` order."""
    if estimator.n_layers_ != 1 or estimator.n_members != 1:
        raise ValueError("row scoring reads one leave-one-out pass: n_layers_=1 and n_members=1 only")
    frame = estimator._prepare_X(X)
    tokens = estimator._transform(frame)  # (n, L-1)
    attend = estimator._attend(tokens)
    position = estimator._positions(frame, label=True)  # (n, L) or None
    module, device = estimator.module_.eval(), estimator._module_device()
    out = np.zeros((len(frame), len(estimator.classes_)), dtype=np.float64)
    with estimator._predict_autocast():  # as the label head's pass: bf16 where mixed_precision
        for start in range(0, len(tokens), rows):
            part = slice(start, start + rows)
            feats = torch.from_numpy(tokens[part]).long().to(device)
            att = None if attend is None else F.pad(torch.from_numpy(attend[part]), (0, 1), value=True).to(device)
            frac = None if position is None else torch.from_numpy(position[part]).to(device)
            for k, label in enumerate(estimator.label_token_ids_):
                full = F.pad(feats, (0, 1), value=int(label))  # (B, L): the row completed with class k
                hidden = module.hidden_loo(full, att, None, frac)  # (B, L, d)
                nll, valid = module.heads.nll(hidden, full)  # (B, L)
                if att is not None:
                    valid = valid & att
                features = (nll * valid)[:, :-1].sum(1)  # (B,)
                out[part, k] = -features.double().cpu().numpy()
    return out


def row_scores(estimator: TabularMoEClassifier, X: Any, head_logits: np.ndarray, row_weight: float) -> np.ndarray:
    """(n, n_classes) scores: the label head's log-probabilities plus ``row_weight`` x the
    features' log-likelihood of the row completed with each class."""
    head = torch.log_softmax(torch.from_numpy(head_logits).double(), dim=1).numpy()
    return (head + row_weight * feature_log_likelihood(estimator, X)).astype(np.float32)


def main(argv: list[str] | None = None) -> int:
    """Predict seconds of the row-scoring reader against the label head's, side by side on
    speed_defaults.py's table (one thread, the defaults' fit)."""
    import argparse
    import time

    from speed_defaults import mixed_table

    from tabmoe.bench import limited_threads

    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--columns", type=int, default=40)
    parser.add_argument("--row-weight", type=float, default=0.1)
    args = parser.parse_args(argv)
    X, y = mixed_table(args.rows, args.columns)
    test, train = slice(None, args.rows // 5), slice(args.rows // 5, None)
    with limited_threads(1):
        model = RowScoredClassifier(random_state=0).fit(X.iloc[train], y[train])
        for weight in (0.0, args.row_weight, 0.0, args.row_weight):  # twice, interleaved
            model.row_weight = weight
            start = time.perf_counter()
            accuracy = float(np.mean(model.predict(X.iloc[test]) == y[test]))
            print(f"row_weight={weight}: predict {time.perf_counter() - start:.2f} s "
                  f"for {len(y[test])} rows, accuracy {accuracy:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
