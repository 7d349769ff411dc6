"""The public estimators' documentation and validation against their signatures.

Every ``__init__`` parameter has a ``_parameter_constraints`` entry (scikit-learn's
convention: the estimator validates it itself, naming itself, before any work), and the
NumPy-style "Parameters" section of the docstring names exactly the signature's parameters
(the torch baselines document their shared training parameters once, on
``TorchTabularClassifier``).
"""

from __future__ import annotations

import importlib
import inspect
import re

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


def documented_names(doc: str | None, section: str = "Parameters") -> set[str]:
    """Names of the entries of a NumPy-style section (``a, b : type`` groups included)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    names: set[str] = set()
    inside = False
    for line, under in zip(lines, [*lines[1:], ""], strict=True):
        if re.fullmatch(r"-{3,}", under.strip()) and line.strip():
            inside = line.strip() == section
            continue
        if inside and line.strip() and not line.startswith(" ") and not re.fullmatch(r"-{3,}", line):
            head = line.partition(" :")[0].rstrip(":")
            names |= {name.strip() for name in head.split(",") if name.strip()}
    return names


TRAINING = "Training parameters every subclass takes (after its architecture parameters)"
SPEED = "Speed parameters (FT-Transformer, TabTransformer, TabM; not TabNet, which has its own loop)"


@pytest.mark.parametrize("cls", [*ESTIMATORS, baselines.StagedGridSearchCV], ids=lambda c: c.__name__)
def test_docstring_parameters_are_the_signatures(cls):
    documented = documented_names(cls.__doc__)
    if "The training parameters and fitted attributes are those of" in " ".join(cls.__doc__.split()):
        base = baselines.torch_base.TorchTabularClassifier.__doc__
        shared = documented_names(base, TRAINING) | documented_names(base, SPEED)
        assert shared, "TorchTabularClassifier's sections were renamed"
        documented |= shared
    assert sorted(set(init_parameters(cls)) - documented) == []
    assert sorted(documented - set(init_parameters(cls))) == []


def small_table() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"colour": rng.choice(["r", "g", "b"], 40), "size": rng.normal(size=40)})
    return X, np.where(X["colour"] == "r", "yes", "no")


def fitted_tabnet() -> baselines.TabNetClassifier:
    pytest.importorskip("pytorch_tabnet")  # extra "baselines", as test_tabnet_fixes.py skips
    X, y = small_table()
    return baselines.TabNetClassifier(max_epochs=1, batch_size=16, virtual_batch_size=8).fit(X, y)


FITTED = {
    "TabularMoEClassifier": lambda: tabmoe.TabularMoEClassifier(max_epochs=1, d_model=8, n_heads=2, ff_dim=8).fit(
        *small_table()
    ),
    "ColumnTokenizer": lambda: tabmoe.ColumnTokenizer().fit(small_table()[0]),
    "TableEncoder": lambda: baselines.TableEncoder().fit(small_table()[0]),
    "EncodedClassifier": lambda: baselines.EncodedClassifier(LogisticRegression()).fit(*small_table()),
    "TabNetClassifier": fitted_tabnet,
}
ONLY_AFTER = {"adapt_history_"}  # set by TabularMoEClassifier.adapt


@pytest.mark.parametrize("name", sorted(FITTED))
def test_fitted_attributes_are_the_documented_ones(name):
    estimator = FITTED[name]()
    documented = documented_names(type(estimator).__doc__, "Attributes")
    fitted = {k for k in vars(estimator) if k.endswith("_") and not k.startswith("_")}
    fitted |= {k for k in documented if k not in fitted and hasattr(estimator, k)}  # properties
    assert sorted(fitted - documented) == []
    assert sorted(documented - fitted - ONLY_AFTER) == []


@pytest.mark.parametrize(
    "module, name",
    [
        ("tabmoe.data.files", "load_table_file"),
        ("tabmoe.data.openml", "load_openml"),
        ("tabmoe.nn.network", "TabularMoE"),
    ],
)
def test_other_docstring_parameters_are_the_signatures(module, name):
    if module == "tabmoe.data.openml":
        # the data extra; without it the import is an ImportError naming the extra, which
        # importorskip (pytest >= 9.1: ModuleNotFoundError only) does not skip
        pytest.importorskip("openml")
    documented = getattr(importlib.import_module(module), name)
    assert documented_names(documented.__doc__) == set(inspect.signature(documented).parameters)


# Members of the API pages (docs/api/*.md) that rendered with no text at all.
UNDOCUMENTED_BEFORE = [
    ("tabmoe.interpret.moe", "MixtureOfExperts.from_model"),
    ("tabmoe.persistence", "decode_value"),
]


@pytest.mark.parametrize("module, name", UNDOCUMENTED_BEFORE)
def test_api_page_member_has_a_docstring(module, name):
    member = importlib.import_module(module)  # core modules: nothing to skip
    for part in name.split("."):
        member = getattr(member, part)
    assert inspect.getdoc(member)
