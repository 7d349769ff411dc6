"""A fit that early stopping ended barely better than the class prior (its validation loss
within 5% of the constant model's): warned, as scikit-learn's ``ConvergenceWarning`` warns of
a fit that stopped before it converged.

A network's label loss can sit at the class prior's for tens of epochs before it finds the
interaction that names a class (R's ``Star``, its school code a category: 40 epochs flat at
the prior, then 0.40 -> 0.89 accuracy with a patience of 100; docs/research.md#study-71).
Patience counted from the first epoch then stops the fit on the plateau, and the model
predicts little more than the class frequencies, silently. Waiting for the prior to be
beaten on every table lost accuracy (study 71), so the remedy stays the user's: this says
when to apply it. The margin is 5%: Star's two stopped fits ended 1.5% below the prior and
0.1% above it (a 100-row hold-out's log loss varies by a few percent), the fit that left the
plateau 85% below; of the suite's 140 default fits in study 71 at most 5 ended within 5% of
the prior (those ``prior_margin=0.05`` moved), on its smallest, weakest-signal tables.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._paper_config import AUTO_PATIENCE, AUTO_PATIENCE_RATE
from .._stack import user_stacklevel
from .trainer import TrainResult

#: The best hold-out label log loss must be this far below the prior's, relatively, not to warn.
PRIOR_MARGIN = 0.05
#: What n_iter_no_change="auto" waited, for the message (an integer such as 30 waits longer)
AUTO_NOTE = f": {AUTO_PATIENCE} epochs plus {AUTO_PATIENCE_RATE} per epoch before the best"


def prior_log_loss(y_train: np.ndarray, w_train: np.ndarray, y_val: np.ndarray, w_val: np.ndarray) -> float:
    """The weighted log loss on ``y_val`` of predicting the training rows' weighted class
    frequencies for every row (the constant model); inf if a validation class has none."""
    n_classes = int(max(y_train.max(initial=0), y_val.max(initial=0))) + 1
    freq = np.bincount(y_train, weights=w_train, minlength=n_classes) / w_train.sum()
    with np.errstate(divide="ignore"):
        return float(-(w_val * np.log(freq[y_val])).sum() / w_val.sum())


def warn_if_at_prior(name: str, result: TrainResult, n_iter_no_change: int | str,
                     train: tuple[np.ndarray, np.ndarray], validation: tuple[np.ndarray, np.ndarray]) -> None:
    """A ``ConvergenceWarning`` if early stopping ended the fit (``result``) with its best
    validation loss (the weighted label log loss) less than ``PRIOR_MARGIN`` below the class
    prior's, where that is above 0; ``train`` and ``validation``: (class codes, row weights) of
    either side."""
    if not result.stopped_early or result.diverged or result.best_epoch is None:
        return
    best = next(r["val_loss"] for r in result.history if r["epoch"] == result.best_epoch)
    prior = prior_log_loss(*train, *validation)
    # prior 0: every weighted training row and every validation row is of one class (the
    # others weigh 0), which the constant model predicts perfectly: nothing to learn, no
    # plateau (every such fit warned, "not 5% below ... (-0.0000)")
    if not prior > 0 or not best >= (1 - PRIOR_MARGIN) * prior:
        return
    # with unequal row weights (class_weight="balanced": log(n_classes)) the prior is the
    # weighted frequencies', not the frequencies' a reader would compute from y
    weighted = "rows' weighted " if np.ptp(train[1]) > 0 else ""
    warnings.warn(
        f"{name}: early stopping ended the fit at epoch {len(result.history)} with a validation "
        f"log loss of {best:.4f} (epoch {result.best_epoch}), not {PRIOR_MARGIN:.0%} below that of "
        f"predicting the training {weighted}class frequencies ({prior:.4f}). The network may have stopped on a plateau "
        "before it learned: if history_'s val_loss is flat to the stop, raise n_iter_no_change "
        f"(now {n_iter_no_change!r}{AUTO_NOTE if n_iter_no_change == 'auto' else ''}); or the features say "
        "little about the label.",
        ConvergenceWarning, stacklevel=user_stacklevel(),
    )
