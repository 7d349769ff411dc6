"""The labels of a ``class_weight`` dict, checked against the classes of ``y``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def class_weight_codes(name: str, weights: Any, classes: np.ndarray, *, strict: bool = True) -> np.ndarray | None:
    """The code (position in ``classes``) of each label of the dict ``weights``, -1 for a
    label not in ``y``; a ValueError naming ``name`` and those labels, always when
    ``strict``, else only where scikit-learn's ``compute_sample_weight`` refuses the dict
    (a class left out too): its own message named the classes left out ("The classes, [1],
    are not in class_weight"), which may weigh 1, not the label at fault (``{2: 3, 9: 5}``,
    or ``{"2": 3}`` for integer labels). A dict naming every class and more is accepted
    there, as scikit-learn's. None when ``weights`` is not a dict ("balanced", None)."""
    if not isinstance(weights, Mapping):
        return None
    labels = list(weights)
    codes = pd.Index(classes, dtype=object).get_indexer(pd.Index(labels, dtype=object))
    unknown = [label for label, code in zip(labels, codes, strict=True) if code < 0]
    if unknown and (strict or len(set(codes[codes >= 0].tolist())) < len(classes)):
        raise ValueError(f"{name} has labels not in y: {unknown}; the classes are {classes.tolist()}.")
    return codes
