import pickle
import warnings

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from tabmoe import TabularMoEClassifier, paper_config
from tabmoe.persistence import IncompatibleFileError

from .moe_data import toy_table

FAST = dict(max_epochs=30, learning_rate=0.01, early_stopping=False, random_state=0, device="cpu")


def test_learns_and_predicts_classes(mixed_frame):
    X, y = mixed_frame
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(np.log(proba), clf.predict_log_proba(X), atol=1e-6)
    assert set(clf.predict(X)) <= {"no", "yes"}
    assert clf.score(X, y) > 0.85
    assert clf.n_features_in_ == 3 and list(clf.feature_names_in_) == ["colour", "size", "kind"]
    assert len(clf.history_) == clf.n_iter_ == 30


def test_same_random_state_same_probabilities_twice(mixed_frame):
    X, y = mixed_frame
    quick = {**FAST, "max_epochs": 5}  # equality needs no converged model
    a = TabularMoEClassifier(**quick).fit(X, y).predict_proba(X)
    b = TabularMoEClassifier(**quick).fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)
    c = TabularMoEClassifier(**{**quick, "random_state": 1}).fit(X, y).predict_proba(X)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize(
    "y", [np.array([0, 1, 2] * 20), np.array(["a", "b"] * 30), np.array([True, False] * 30)]
)
def test_int_str_bool_labels_binary_and_multiclass(y):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"f": y.astype(str), "noise": rng.normal(size=len(y))})
    clf = TabularMoEClassifier(**FAST).fit(X, y)
    assert clf.classes_.tolist() == sorted(set(y.tolist()))
    assert clf.predict(X).dtype == clf.classes_.dtype
    assert clf.score(X, y) == 1.0


def test_pipeline_with_column_transformer(mixed_frame):
    X, y = mixed_frame
    pre = ColumnTransformer(
        [("num", StandardScaler(), ["size"]), ("cat", "passthrough", ["colour", "kind"])]
    ).set_output(transform="pandas")
    pipe = Pipeline([("pre", pre), ("clf", TabularMoEClassifier(**FAST))]).fit(X, y)
    assert pipe.score(X, y) > 0.85
    # without pandas output the object array is re-typed per column: size stays numeric
    pipe2 = Pipeline([("pre", clone(pre).set_output(transform="default")),
                      ("clf", TabularMoEClassifier(**FAST))]).fit(X, y)
    assert pipe2.named_steps["clf"].tokenizer_.is_categorical_.tolist() == [False, True, True]


@pytest.mark.slow  # worker processes: ~20 s; the default suite stays under 10 minutes
def test_grid_search_parallel_cross_val_and_clone(mixed_frame):
    X, y = mixed_frame
    grid = GridSearchCV(TabularMoEClassifier(**FAST), {"d_model": [16, 32]}, cv=2, n_jobs=2)
    grid.fit(X, y)
    assert grid.best_params_["d_model"] in (16, 32)
    scores = cross_val_score(TabularMoEClassifier(**FAST), X, y, cv=3)
    assert scores.mean() > 0.8
    clf = TabularMoEClassifier(d_model=8, learning_rate=0.01)
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and twin is not clf


def test_early_stopping_default_auto_rule_and_eval_set(mixed_frame):
    X, y = mixed_frame
    default = TabularMoEClassifier(max_epochs=3, random_state=0, device="cpu").fit(X, y)
    assert "val_loss" in default.history_[0]  # on by default, on a 10% hold-out
    clf = TabularMoEClassifier(**{**FAST, "early_stopping": "auto"}).fit(X, y)
    assert "val_loss" not in clf.history_[0]  # "auto", <= 10,000 rows, no eval_set: off
    clf = TabularMoEClassifier(**{**FAST, "max_epochs": 200, "early_stopping": "auto"}, n_iter_no_change=3)
    clf.fit(X[:150], y[:150], eval_set=(X[150:], y[150:]))
    assert "val_loss" in clf.history_[0]
    assert clf.n_iter_ < 200 and clf.best_epoch_ <= clf.n_iter_
    best = min(h["val_loss"] for h in clf.history_)
    assert best == clf.history_[clf.best_epoch_ - 1]["val_loss"]
    forced = TabularMoEClassifier(**{**FAST, "early_stopping": True}, validation_fraction=0.2).fit(X, y)
    assert "val_loss" in forced.history_[0]


def test_class_and_sample_weight_shift_predictions():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"noise": rng.choice(list("abc"), 300)})
    y = np.array(["major"] * 240 + ["minor"] * 60)
    plain = TabularMoEClassifier(**FAST).fit(X, y).predict_proba(X)[:, 1].mean()
    balanced = TabularMoEClassifier(**FAST, class_weight="balanced").fit(X, y)
    weighted = TabularMoEClassifier(**FAST).fit(X, y, sample_weight=np.where(y == "minor", 4.0, 1.0))
    assert balanced.predict_proba(X)[:, 1].mean() > plain + 0.2
    assert weighted.predict_proba(X)[:, 1].mean() > plain + 0.2


@pytest.mark.parametrize("scale", [2.0**127, 2.0**-70, 2.0**-150])
def test_sample_weight_of_any_scale_fits_as_unit_weights(scale):
    # The loss is a weighted mean: weights beyond float32's range (2**127: an inf batch sum,
    # "Training diverged"), below it (2**-150: zero, "no rows of non-zero weight") or below the
    # trainer's 1e-12 floor of a batch's weight (2**-70: barely trained) fit as unit weights.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.choice(list("pqr"), 200)})
    y = (X["a"] > 0).to_numpy()
    quick = {**FAST, "max_epochs": 3, "early_stopping": True}
    plain = TabularMoEClassifier(**quick).fit(X, y).predict_proba(X)
    scaled = TabularMoEClassifier(**quick).fit(X, y, sample_weight=np.full(len(X), scale)).predict_proba(X)
    np.testing.assert_array_equal(scaled, plain)  # scaled by a power of two: nothing rounds


@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("n_members", [1, 2])
def test_rows_of_weight_zero_change_nothing(early_stopping, n_members):
    # A row of weight 0 is absent: it stayed in the training batches, where it took a batch's
    # place (16-row batches of 1.6 weighted rows trained each such row ten times as hard) and a
    # batch of such rows alone took an optimiser step on no data (Adam moves on its momentum).
    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.choice(list("abcd"), 240) for c in "pqr"})
    y = np.where((X["p"] == "a") | (X["q"] == "b"), "yes", "no")
    params = {**FAST, "max_epochs": 4, "batch_size": 16, "early_stopping": early_stopping, "n_members": n_members}
    plain = TabularMoEClassifier(**params).fit(X[:120], y[:120])
    weight = np.r_[np.ones(120), np.zeros(120)]
    padded = TabularMoEClassifier(**params).fit(X, y, sample_weight=weight)
    losses = [[(h["train_loss"], h.get("val_loss", 0.0)) for h in c.history_] for c in (plain, padded)]
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-6)
    np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), rtol=0, atol=1e-6)


def test_rows_of_weight_zero_do_not_count_in_the_table_size_rules(monkeypatch):
    # n_layers="auto" and early_stopping="auto" read the table's size: 120 weighted rows and
    # 120 of weight 0 are a 120-row table (both rules counted 240 rows).
    from tabmoe import _paper_config as defaults

    monkeypatch.setattr(defaults, "AUTO_LAYERS_ROWS", 120)
    monkeypatch.setattr(defaults, "AUTO_EARLY_STOPPING_ROWS", 120)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.choice(list("abcd"), 240) for c in "pqr"})
    y = np.where(X["p"] == "a", "yes", "no")
    params = {**FAST, "max_epochs": 2, "n_layers": "auto", "early_stopping": "auto"}
    plain = TabularMoEClassifier(**params).fit(X[:120], y[:120])
    padded = TabularMoEClassifier(**params).fit(X, y, sample_weight=np.r_[np.ones(120), np.zeros(120)])
    assert plain.n_layers_ == padded.n_layers_ == 1
    assert "val_loss" not in padded.history_[0]
    np.testing.assert_allclose(padded.predict_proba(X), plain.predict_proba(X), rtol=0, atol=1e-6)
    assert TabularMoEClassifier(**params).fit(X, y).n_layers_ == 2  # 240 weighted rows


def test_paper_config_is_the_papers_whatever_was_done_to_the_shared_dict(monkeypatch):
    """``paper_config()`` copied the public ``PAPER_CONFIG``, so a caller's edit to that dict
    (``PAPER_CONFIG["d_model"] = 64``) changed every later "paper" configuration."""
    import tabmoe

    expected = paper_config()
    monkeypatch.setitem(tabmoe.PAPER_CONFIG, "d_model", 64)
    monkeypatch.delitem(tabmoe.PAPER_CONFIG, "n_heads")
    assert paper_config() == expected and paper_config() is not paper_config()


def test_paper_config_is_the_papers(auto_mpg):
    cfg = paper_config()
    assert cfg | {} == {
        "d_model": 20, "n_heads": 5, "ff_dim": 5, "n_layers": 1, "dropout": 0.1,
        "block": "transformer", "gate": "softmax", "embedding_init": 0.05, "learning_rate": 1e-3, "weight_decay": 0.0,
        "max_epochs": 200, "batch_size": "paper", "early_stopping": False,
        "masking": "leave_one_out", "feature_loss_weight": 1.0, "vocabulary": "shared",
        "categorical_features": "all",
    }
    from tabmoe.data import auto_mpg_origin_split

    split = auto_mpg_origin_split(auto_mpg)
    clf = TabularMoEClassifier(**{**cfg, "max_epochs": 2}, random_state=0).fit(split.X_train, split.y_train)
    # shared code space: tertile codes 0..2 (+ cylinders 0..2) -> 3 value tokens, label reuses them
    assert clf.tokenizer_.n_tokens_ == 6 and clf.label_token_ids_.tolist() == [3, 4, 5]
    assert clf._rows_per_batch(245, 7, "leave_one_out") == 18  # 128 masked copies / 7 columns
    assert clf.module_.blocks[0].attention.key_dim == 4


def test_auto_batch_size_gives_about_16_steps_per_epoch():
    clf = TabularMoEClassifier()
    assert clf._rows_per_batch(100, 5, "leave_one_out") == 16  # at least 16 rows
    assert clf._rows_per_batch(2100, 5, "leave_one_out") == 131  # rows // 16
    assert clf._rows_per_batch(10**6, 50, "leave_one_out") == 256  # at most 256 rows
    assert TabularMoEClassifier(batch_size=64)._rows_per_batch(2100, 5, "leave_one_out") == 64


def test_invalid_parameters_are_named(mixed_frame):
    X, y = mixed_frame
    with pytest.raises(ValueError, match="d_model"):
        TabularMoEClassifier(d_model=0).fit(X, y)
    with pytest.raises(ValueError, match="n_heads=3"):
        TabularMoEClassifier(d_model=20, n_heads=3).fit(X, y)
    with pytest.raises(ValueError, match="n_layers=1"):
        TabularMoEClassifier(n_layers=2, masking="leave_one_out").fit(X, y)
    with pytest.raises(ValueError, match="device"):
        TabularMoEClassifier(device="cuda:7" if not __import__("torch").cuda.is_available() else "nope").fit(X, y)


def test_deep_model_random_masking_trains(mixed_frame):
    X, y = mixed_frame
    # lr 3e-3: FAST's 1e-2 leaves two-layer random masking at the majority class on some
    # seeds whatever the numeric embedding (bins: 0.765-0.98 over seeds 0-3; 3e-3: 1.0)
    clf = TabularMoEClassifier(**{**FAST, "learning_rate": 3e-3}, n_layers=2).fit(X, y)
    assert clf.score(X, y) > 0.8


def test_pickle_joblib_and_safe_save_round_trip(mixed_frame, tmp_path):
    X, y = mixed_frame
    clf = TabularMoEClassifier(**FAST, class_weight={"no": 1.0, "yes": 2.0}).fit(X, y)
    expected = clf.predict_proba(X)
    assert np.array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), expected)
    joblib.dump(clf, tmp_path / "m.joblib")
    assert np.array_equal(joblib.load(tmp_path / "m.joblib").predict_proba(X), expected)
    clf.save(tmp_path / "m.tabmoe")
    loaded = TabularMoEClassifier.load(tmp_path / "m.tabmoe")
    assert np.array_equal(loaded.predict_proba(X), expected)
    assert loaded.get_params() == clf.get_params()
    assert loaded.classes_.tolist() == ["no", "yes"]


def test_load_refuses_pickled_code_and_foreign_files(mixed_frame, tmp_path):
    import torch

    X, y = mixed_frame
    TabularMoEClassifier(**FAST).fit(X, y).save(tmp_path / "ok.tabmoe")
    payload = torch.load(tmp_path / "ok.tabmoe", weights_only=True)

    class Exploit:
        def __reduce__(self):
            return (print, ("pwned",))

    torch.save({**payload, "evil": Exploit()}, tmp_path / "evil.tabmoe")
    with pytest.raises(pickle.UnpicklingError):
        TabularMoEClassifier.load(tmp_path / "evil.tabmoe")
    torch.save({**payload, "format_version": 99}, tmp_path / "future.tabmoe")
    with pytest.raises(IncompatibleFileError, match="version 99"):
        TabularMoEClassifier.load(tmp_path / "future.tabmoe")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "other.pt")
    with pytest.raises(IncompatibleFileError, match="not a saved"):
        TabularMoEClassifier.load(tmp_path / "other.pt")


def test_rows_per_batch_resolves_auto_as_fit_does():
    X = pd.DataFrame({"a": list("xyzx" * 10), "b": list("pq" * 20), "c": list("uvw" * 13) + ["u"]})
    y = np.arange(40) % 2
    clf = TabularMoEClassifier(max_epochs=1, d_model=4, n_heads=2, ff_dim=2, device="cpu", batch_size="paper").fit(X, y)
    assert clf.rows_per_batch(40) == 32  # 128 masked copies of 3 features + the label
    assert clf.rows_per_batch(20_000) == 256  # above 10,000 rows
    clf.set_params(batch_size="auto")
    assert clf.rows_per_batch(40) == 16 and clf.rows_per_batch(2100) == 131
    clf.set_params(batch_size=7)
    assert clf.rows_per_batch(40) == 7


def test_warnings_point_at_the_callers_line():
    """UNKNOWN-category warnings name the user's call (this file), not tabmoe's or sklearn's
    internals, whichever public method raised them."""
    import pandas as pd

    X = pd.DataFrame({"a": ["x", "y"] * 20, "b": ["p", "q", "r", "s"] * 10})
    y = [0, 1] * 20
    clf = TabularMoEClassifier(max_epochs=1, random_state=0).fit(X, y)
    unseen = pd.DataFrame({"a": ["z", "x"], "b": ["p", "new"]})
    calls = [clf.predict, clf.predict_proba, lambda X: clf.score(X, [0, 1]), clf.explain,
             clf.tokenizer_.transform]
    for call in calls:
        with pytest.warns(UserWarning, match="not seen during fit") as record:
            call(unseen)
        assert {w.filename for w in record} == {__file__}, [(w.filename, w.lineno) for w in record]


def test_validation_fraction_is_a_share_or_a_number_of_rows(monkeypatch):
    from tabmoe.nn._base import validation_split

    y = np.repeat([0, 1], 50)
    for given, rows in ((0.1, 10), (0.25, 25), (7, 7), (1, 1), ("auto", 10)):
        train, val = validation_split(y, given, seed=0)
        assert len(val) == rows and len(train) == 100 - rows
        assert not set(train) & set(val)
    # "auto": 10% (the same rows as 0.1) up to 1,000 rows, then at most 100 rows up to 10,000
    # rows, then 10% again (the same rows as 0.1)
    np.testing.assert_array_equal(validation_split(y, "auto", 3)[1], validation_split(y, 0.1, 3)[1])
    big = np.arange(10_001) % 3
    np.testing.assert_array_equal(validation_split(big, "auto", 3)[1], validation_split(big, 0.1, 3)[1])
    for n, rows in ((999, 100), (1_001, 100), (2_099, 100), (10_000, 100), (10_001, 1_001),
                    (50_000, 5_000), (37, 4)):
        assert len(validation_split(np.arange(n) % 2, "auto", seed=0)[1]) == rows
    with pytest.raises(ValueError, match="validation_fraction='auto' leaves no rows"):
        validation_split(np.array([0]), "auto", seed=0)
    with pytest.raises(ValueError, match="validation_fraction=100 leaves no rows"):
        validation_split(y, 100, seed=0)
    with pytest.raises(ValueError, match="validation_fraction must be .* got True"):
        validation_split(y, True, seed=0)
    # fewer rows left than classes: not stratified (scikit-learn would refuse), still split,
    # with a warning that a class is held out whole
    with pytest.warns(UserWarning, match="every row of at least 1 class is held out"):
        train, val = validation_split(y, 99, seed=0)
    assert len(train) == 1 and len(val) == 99

    X, labels = toy_table()
    seen = []
    import tabmoe.nn._base as base

    def spy(y, fraction, seed):
        seen.append(validation_split(y, fraction, seed))
        return seen[-1]

    monkeypatch.setattr(base, "validation_split", spy)
    clf = TabularMoEClassifier(**{**FAST, "early_stopping": True, "max_epochs": 2}, validation_fraction=30)
    clf.fit(X, labels)
    assert "val_loss" in clf.history_[0] and len(seen[0][1]) == 30
    with pytest.raises(ValueError, match="got True"):  # refused even when no hold-out is drawn
        TabularMoEClassifier(**FAST, validation_fraction=True).fit(X, labels)
    for bad in (1.0, 0, -3):
        with pytest.raises(ValueError, match="'validation_fraction' parameter"):
            TabularMoEClassifier(**FAST, validation_fraction=bad).fit(X, labels)


def test_a_class_seen_once_stays_in_training_and_the_rest_is_stratified():
    from sklearn.model_selection import train_test_split

    from tabmoe.nn._base import validation_split

    y = np.concatenate([np.repeat([0, 1], [60, 30]), [2]])  # class 2: one row (index 90)
    for seed in range(20):
        train, val = validation_split(y, 0.1, seed)
        assert 90 in train and len(val) == 10 and len(train) == 81
        assert sorted(np.bincount(y[val], minlength=3)) == [0, 3, 7]  # 2:1 as in y
    plain = np.repeat([0, 1], 50)  # no class seen once: the split is what it always was
    expected = train_test_split(np.arange(100), test_size=10, stratify=plain, random_state=5)[1]
    np.testing.assert_array_equal(validation_split(plain, 0.1, 5)[1], expected)


def test_the_hold_out_never_takes_every_row_of_a_class():
    """A split that is not stratified (fewer rows held out than classes) took both rows of a
    two-row class in 7 of 100 seeds here, and 2 rows of 3 two-row classes in 20: that class
    was never trained. One of its rows now trades places with a training row; a split where
    every class keeps a training row is as it was."""
    from sklearn.model_selection import train_test_split

    from tabmoe.nn._base import validation_split

    many = np.concatenate([np.repeat(np.arange(7), 2), np.full(46, 7)])  # 8 classes, 60 rows
    pairs = np.repeat([0, 1, 2], 2)
    for y, fraction in ((many, "auto"), (pairs, 2)):
        for seed in range(100):
            train, val = validation_split(y, fraction, seed)
            assert len(val) == (6 if fraction == "auto" else 2) and len(train) + len(val) == len(y)
            assert sorted(np.concatenate([train, val])) == list(range(len(y)))
            assert set(y[train]) == set(y)  # every class trains
            plain = train_test_split(np.arange(len(y)), test_size=len(val), random_state=seed)
            if set(y[plain[0]]) == set(y):
                np.testing.assert_array_equal(val, plain[1])


def test_a_hold_out_that_must_take_a_class_whole_says_so_and_what_to_do():
    """Where no hold-out leaves every class a training row (each class seen once), the fit
    runs as before, and a warning names validation_fraction and the ways out."""
    X = pd.DataFrame({"a": ["x", "y", "z", "z"]})
    clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0)
    with pytest.warns(UserWarning, match=r"holds out 1 of 2 rows, more than the 0 that leave each of the 2 "
                                         r"classes a training row: every row of at least 1 class is held out"
                                         r".*eval_set=\(X_val, y_val\) or set early_stopping=False\.$"):
        clf.fit(X.iloc[:2], ["p", "q"])
    with pytest.warns(UserWarning, match=r"validation_fraction=2 holds out 2 of 4 .*eval_set=\(X_val, y_val\), set early_stopping=False or validation_fraction=1 \(rows\)"):
        clf.set_params(validation_fraction=2).fit(X, ["p", "q", "r", "r"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.set_params(validation_fraction=1).fit(X, ["p", "q", "r", "r"])  # one row to spare
        for early_stopping in (False, "auto"):  # nothing held out
            clf.set_params(early_stopping=early_stopping).fit(X.iloc[:2], ["p", "q"])


def test_the_hold_out_default_is_auto_for_tabmoe_and_a_tenth_for_the_baselines():
    import inspect

    from tabmoe.baselines.ft_transformer import FTTransformerClassifier

    assert TabularMoEClassifier().validation_fraction == "auto"
    assert inspect.signature(FTTransformerClassifier).parameters["validation_fraction"].default == 0.1


def test_an_array_after_a_frame_fit_warns_once_naming_the_estimator(recwarn):
    X, y = toy_table()
    clf = TabularMoEClassifier(block="attention", max_epochs=2, random_state=0, device="cpu").fit(X, y)
    recwarn.clear()
    proba = clf.predict_proba(X.to_numpy())
    names = [str(w.message) for w in recwarn if "valid feature names" in str(w.message)]
    assert len(names) == 1 and "TabularMoEClassifier" in names[0]  # not again for its ColumnTokenizer
    np.testing.assert_array_equal(proba, clf.predict_proba(X))


def test_rows_per_batch_names_a_bad_row_count():
    X, y = toy_table()
    clf = TabularMoEClassifier(max_epochs=1, random_state=0, device="cpu").fit(X, y)
    assert clf.rows_per_batch(2100) == 131
    for bad in (-5, 0, 2.5, True):
        with pytest.raises(ValueError, match="n_rows must be a positive integer"):
            clf.rows_per_batch(bad)
