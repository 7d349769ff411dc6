"""Parameters given as numpy scalars (a grid built with numpy: ``np.linspace``,
``np.arange``) train, adapt and save as the same Python numbers do."""

import numpy as np
import pytest

from tabmoe import TabularMoEClassifier

from .moe_data import toy_table

FAST = dict(max_epochs=2, d_model=8, n_heads=2, ff_dim=8, random_state=0, device="cpu")


@pytest.fixture(scope="module")
def data():
    return toy_table(n=80, seed=0)


@pytest.mark.parametrize("warmup", [0, 2])
def test_a_numpy_float32_feature_loss_weight_fits_and_adapts_as_the_float(data, warmup):
    # fit raised "TypeError: can't assign a numpy.float32 to a torch.FloatTensor" in the
    # loss; with a warm-up fit passed and adapt (no warm-up) raised it
    X, y = data
    params = dict(FAST, feature_warmup_epochs=warmup)
    ref = TabularMoEClassifier(**params, feature_loss_weight=0.5).fit(X, y).adapt(X, max_epochs=1)
    clf = TabularMoEClassifier(**params, feature_loss_weight=np.float32(0.5)).fit(X, y).adapt(X, max_epochs=1)
    np.testing.assert_array_equal(clf.predict_proba(X), ref.predict_proba(X))


@pytest.mark.parametrize("schedule", [dict(lr_decay_patience=1), dict(lr_warmup_epochs=1)])
def test_a_numpy_float32_learning_rate_with_a_schedule_saves(data, tmp_path, schedule):
    # history_'s "lr" kept the float32 of learning_rate: save, after the training, raised
    # "TypeError: Object of type float32 is not JSON serializable"
    X, y = data
    clf = TabularMoEClassifier(**FAST, **schedule, learning_rate=np.float32(1e-3)).fit(X, y)
    assert all(type(record["lr"]) is float for record in clf.history_)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert loaded.history_ == clf.history_
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize("params", [dict(d_model=np.int16(8)), dict(n_members=np.uint8(2)),
                                    dict(n_layers=2, n_heads=np.int8(2), ff_dim=np.int16(8))])
def test_narrow_numpy_integer_sizes_fit_and_predict_as_the_ints(data, params):
    # the rows per forward pass were computed in the parameter's dtype: 2**23 // int16(32) was
    # "OverflowError: Python integer 8388608 out of bounds for int16", after the training
    X, y = data
    clf = TabularMoEClassifier(**{**FAST, **params}).fit(X, y)
    ref = TabularMoEClassifier(**{**FAST, **{k: int(v) for k, v in params.items()}}).fit(X, y)
    np.testing.assert_array_equal(clf.predict_proba(X), ref.predict_proba(X))
