"""Integer sizes of a network given as a bool: True passes scikit-learn's integer interval."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils._param_validation import Interval, InvalidParameterError


def check_network_sizes(estimator: Any) -> None:
    """InvalidParameterError naming the first of ``estimator._network_sizes`` (widths, depths
    and counts of layers or heads, each an int, >= 1 unless its constraint's interval says
    otherwise) given as a bool: as a width True failed inside torch (``empty(): argument 'size'
    ... must be tuple of ints, not bool``), naming nothing, and as a count it silently meant 1."""
    for name in getattr(estimator, "_network_sizes", ()):
        value = getattr(estimator, name)
        if isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The {name!r} parameter of {type(estimator).__name__} must be an int in the "
                f"range [{_lower_bound(estimator, name)}, inf). Got {value!r} instead."
            )


def _lower_bound(estimator: Any, name: str) -> int:
    """The left end of ``name``'s integer interval in ``_parameter_constraints`` (1 if none)."""
    for constraint in getattr(estimator, "_parameter_constraints", {}).get(name, ()):
        if isinstance(constraint, Interval) and constraint.left is not None:
            return int(constraint.left)
    return 1
