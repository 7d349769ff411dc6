"""Models saved by tabmoe 0.1.0 (before the layout change of issue 18) load and predict
identically: a saved file and a pickle, committed under tests/fixtures/models/ (made by
``make_models.py`` there)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from tabmoe import TabularMoEClassifier

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"
# The pickles were written under NumPy 2, whose arrays pickle as numpy._core (absent in 1.x).
numpy_2 = pytest.mark.skipif(
    int(np.__version__.split(".")[0]) < 2, reason="the committed pickle needs NumPy >= 2"
)


def rows_and_expected() -> tuple[pd.DataFrame, list, np.ndarray]:
    X = pd.read_csv(MODELS / "v0.1.0-rows.csv")
    X[["colour", "size"]] = X[["colour", "size"]].astype(object)
    doc = json.loads((MODELS / "v0.1.0-proba.json").read_text())
    return X, doc["classes"], np.asarray(doc["proba"])


def test_saved_file_of_v0_1_0_loads_and_predicts_identically():
    X, classes, expected = rows_and_expected()
    est = TabularMoEClassifier.load(MODELS / "v0.1.0-tabmoe.tabmoe")
    assert est.classes_.tolist() == classes
    np.testing.assert_allclose(est.predict_proba(X), expected, rtol=0, atol=1e-6)


@numpy_2
def test_pickle_of_v0_1_0_loads_and_predicts_identically():
    X, classes, expected = rows_and_expected()
    with open(MODELS / "v0.1.0-tabmoe.pkl", "rb") as file:
        est = pickle.load(file)  # a committed file of ours: trusted
    assert isinstance(est, TabularMoEClassifier)
    assert est.classes_.tolist() == classes
    np.testing.assert_allclose(est.predict_proba(X), expected, rtol=0, atol=1e-6)
    # parameters added since read as what the old model did; the estimator clones
    params = clone(est).get_params()
    assert (params["n_jobs"], params["unknown_rate"], params["numeric_embedding"]) == (None, 0.0, "bins")
    assert (params["unknown"], params["label_smoothing"], params["feature_warmup_epochs"]) == ("token", 0.0, 0)
    assert params["refit"] is False and est.refit_history_ is None


@numpy_2
def test_pickle_of_v0_1_0_saves_and_loads(tmp_path):
    """Saving writes the tokenizer's bin count, which a tokenizer pickled before it existed
    does not hold as an attribute: it is its integer ``n_bins``."""
    X, _, expected = rows_and_expected()
    with open(MODELS / "v0.1.0-tabmoe.pkl", "rb") as file:
        est = pickle.load(file)  # a committed file of ours: trusted
    assert not hasattr(est.tokenizer_, "n_bins_")
    est.save(tmp_path / "again.tabmoe")
    again = TabularMoEClassifier.load(tmp_path / "again.tabmoe")
    assert again.tokenizer_.n_bins_ == est.tokenizer_.n_bins
    np.testing.assert_allclose(again.predict_proba(X), expected, rtol=0, atol=1e-6)


@numpy_2
def test_pickle_of_v0_1_0_refuses_to_save_after_set_params_of_a_network_parameter(tmp_path):
    """The pickle holds no record of the parameters its network was built with: after
    ``set_params(d_model=16)`` save wrote a file that load refused ("weights
    'column_embedding' have shape (4, 8) in the file, but the network its parameters
    describe has (4, 16)"). The values it was pickled with are that record now."""
    X, _, expected = rows_and_expected()
    with open(MODELS / "v0.1.0-tabmoe.pkl", "rb") as file:
        est = pickle.load(file)  # a committed file of ours: trusted
    est.set_params(d_model=16)
    with pytest.raises(ValueError, match=r"Cannot save: set_params changed d_model=8 -> 16"):
        est.save(tmp_path / "m.tabmoe")
    with pytest.raises(ValueError, match=r"Cannot adapt: set_params changed d_model=8 -> 16"):
        est.adapt(X)
    assert list(tmp_path.iterdir()) == []
    est.set_params(d_model=8).save(tmp_path / "m.tabmoe")  # set back: saves and loads
    np.testing.assert_allclose(TabularMoEClassifier.load(tmp_path / "m.tabmoe").predict_proba(X), expected, rtol=0, atol=1e-6)
