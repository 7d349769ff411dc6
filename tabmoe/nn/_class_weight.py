"""The labels of a ``class_weight`` dict, checked against the classes of ``y``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd


def check_class_weight_labels(class_weight: Any, classes: np.ndarray) -> None:
    """ValueError naming ``class_weight`` and its labels not in ``y`` where scikit-learn's
    ``compute_sample_weight`` refuses the dict: some label is not a class and some class is
    not a label. Its own message named the classes left out ("The classes, [1], are not in
    class_weight"), which may weigh 1, not the label at fault (``{2: 3, 9: 5}``, or ``{"2": 3}``
    for integer labels). A dict naming every class and more is accepted, as scikit-learn's."""
    if not isinstance(class_weight, Mapping):
        return
    labels = list(class_weight)
    codes = pd.Index(classes, dtype=object).get_indexer(pd.Index(labels, dtype=object))
    unknown = [label for label, code in zip(labels, codes, strict=True) if code < 0]
    if unknown and len(set(codes[codes >= 0].tolist())) < len(classes):
        raise ValueError(
            f"class_weight has labels not in y: {unknown}; the classes are {classes.tolist()}."
        )
