"""The public estimators' documentation and validation against their signatures.

Every ``__init__`` parameter has a ``_parameter_constraints`` entry (scikit-learn's
convention: the estimator validates it itself, naming itself, before any work).
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.utils._param_validation import InvalidParameterError

import tabmoe
from tabmoe import baselines

# StagedGridSearchCV is left out: it inherits GridSearchCV's constraints and checks
# staged_param in fit (tests/test_staged_search.py).
ESTIMATORS = [
    tabmoe.TabularMoEClassifier,
    tabmoe.ColumnTokenizer,
    baselines.TableEncoder,
    baselines.EncodedClassifier,
    baselines.FTTransformerClassifier,
    baselines.TabTransformerClassifier,
    baselines.TabMClassifier,
    baselines.TabNetClassifier,
]


def init_parameters(cls: type) -> list[str]:
    return [p for p in inspect.signature(cls).parameters if p != "self"]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_init_parameter_has_a_constraint(cls):
    constraints = cls._parameter_constraints
    assert [p for p in init_parameters(cls) if p not in constraints] == []
    assert [p for p in constraints if p not in init_parameters(cls)] == []


def test_encoded_classifier_validates_drop_itself():
    X = pd.DataFrame({"colour": list("rgbrgb"), "size": np.arange(6.0)})
    clf = baselines.EncodedClassifier(LogisticRegression(), drop="last")
    with pytest.raises(InvalidParameterError, match="'drop' parameter of EncodedClassifier"):
        clf.fit(X, [0, 1, 0, 1, 0, 1])
