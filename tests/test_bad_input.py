"""Every classifier meets the same contract on bad or awkward input (see tests/classifiers.py)."""

import inspect
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest

from tabmoe.nn._base import TorchClassifier
from tabmoe.registry import MODELS

from .classifiers import CLASSIFIER_FACTORIES

pytestmark = pytest.mark.parametrize("name", list(CLASSIFIER_FACTORIES))


def frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "city": rng.choice(["paris", "rome", "oslo"], n).astype(object),
            "age": rng.normal(40, 10, n),
            "kind": pd.Categorical(rng.choice(["a", "b"], n)),
        }
    )
    y = np.array(["no", "yes"] * (n // 2))
    return X, y


def test_nan_and_none_in_any_column(name):
    X, y = frame()
    X.loc[0, "city"] = None
    X.loc[1, "age"] = np.nan
    X.loc[2, "kind"] = np.nan
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    Xp = X.copy()
    Xp.loc[:, "city"] = None
    proba = clf.predict_proba(Xp)
    assert proba.shape == (len(X), 2) and np.isfinite(proba).all()


def test_unseen_categories_warn_with_column_and_rate(name):
    X, y = frame()
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    Xp = X.copy()
    Xp.loc[:9, "city"] = "atlantis"
    with pytest.warns(UserWarning, match=r"'city'.*16\.7%"):
        proba = clf.predict_proba(Xp)
    assert np.isfinite(proba).all()


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda X: X.drop(columns="age"), "age"),
        (lambda X: X.assign(extra=1.0), "extra"),
        (lambda X: X.rename(columns={"kind": "type"}), "type"),
    ],
    ids=["missing", "extra", "renamed"],
)
def test_missing_extra_or_renamed_column_named(name, change, match):
    X, y = frame()
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    with pytest.raises(ValueError, match=match):
        clf.predict(change(X))


def _labels_with_missing(kind: str, n: int):
    """Labels of several containers and dtypes with one missing value at position 5."""
    base = ["no", "yes"] * (n // 2)
    if kind == "object-nan":
        return np.array([*base[:5], np.nan, *base[6:]], dtype=object)
    if kind == "list-none":
        return [*base[:5], None, *base[6:]]
    if kind == "tuple-nan":  # e.g. from zip(*rows): numpy read NaN as the text 'nan', a class
        return (*base[:5], np.nan, *base[6:])
    if kind == "tuple-none":  # was "'<' not supported between instances of 'NoneType' and 'str'"
        return (*base[:5], None, *base[6:])
    if kind == "string-na":
        return pd.Series([*base[:5], pd.NA, *base[6:]], dtype="string")
    if kind == "float-nan":
        return np.array(
            [*[0.0, 1.0] * (n // 2)][:5] + [np.nan] + [0.0, 1.0] * ((n - 6) // 2), dtype=float
        )
    if kind == "Int64-na":
        return pd.Series(
            [*[0, 1] * (n // 2)][:5] + [pd.NA] + [0, 1] * ((n - 6) // 2), dtype="Int64"
        )
    if kind == "category-nan":
        return pd.Series(pd.Categorical([*base[:5], None, *base[6:]]))
    raise AssertionError(kind)


def _with_eval_set(name: str):
    """A fresh classifier ``name``, skipping the test for the scikit-learn ones, whose fit takes
    no eval_set."""
    clf = CLASSIFIER_FACTORIES[name]()
    if "eval_set" not in inspect.signature(clf.fit).parameters:
        pytest.skip(f"{name} takes no eval_set")
    return clf


MISSING_LABELS = ["object-nan", "list-none", "tuple-nan", "tuple-none", "string-na", "float-nan", "Int64-na", "category-nan"]


@pytest.mark.parametrize("kind", MISSING_LABELS)
def test_missing_labels_are_a_clear_error(name, kind):
    """NaN / None / pd.NA in y: scikit-learn's "Input y contains NaN", for every classifier
    and container (an object array of str and NaN used to fail with a TypeError in sorting)."""
    X, _ = frame()
    y = _labels_with_missing(kind, len(X))
    assert len(y) == len(X)
    with pytest.raises(ValueError, match=r"Input y contains NaN.*position\(s\) \[5\]"):
        CLASSIFIER_FACTORIES[name]().fit(X, y)


@pytest.mark.parametrize(
    "labels, match",
    [
        # X.to_numpy()[:, -1] of a frame with a text column: scikit-learn's "Unknown label type:
        # unknown. Maybe you are trying to fit a classifier, which expects discrete classes on
        # a regression target with continuous values", for class codes 0 and 1
        ([0, 1], r"^Input y is an object array of int labels, whose type scikit-learn does not read.*y\.astype\(int\)"),
        ([False, True], r"^Input y is an object array of bool labels.*y\.astype\(bool\)"),
        # text beside numbers: "'<' not supported between instances of 'int' and 'str'"
        (["no", 1], r"^Input y mixes text with labels of another type \(int, str\).*y\.astype\(str\)"),
    ],
    ids=["ints", "bools", "text-and-ints"],
)
def test_labels_in_an_object_array_are_a_clear_error(name, labels, match):
    X, _ = frame()
    y = np.array(labels * (len(X) // 2), dtype=object)
    with pytest.raises(ValueError, match=match):
        CLASSIFIER_FACTORIES[name]().fit(X, y)


def test_the_label_columns_name_as_y_is_a_clear_error(name):
    """fit(data, "label") was scikit-learn's "y should be a 1d array, got an array of shape
    () instead"."""
    X, y = frame()
    with pytest.raises(ValueError, match=r"^y is the text 'label', not one label per row: .*data\.drop\(columns='label'\), data\['label'\]"):
        CLASSIFIER_FACTORIES[name]().fit(X.assign(label=y), "label")


def test_the_label_left_in_x_is_warned_about(name):
    """fit(data, data["label"]) trained on the label itself without a word (test accuracy 1.0
    on rows that hold it)."""
    from tabmoe import LabelColumnWarning
    from tabmoe._column_warnings import warn_label_column

    X, y = frame()
    data = X.assign(label=pd.Series(y, index=X.index).astype(object))
    with pytest.warns(LabelColumnWarning, match=r"its column 'label' equals y in every row.*data\.drop\(columns='label'\)"):
        CLASSIFIER_FACTORIES[name]().fit(data, data["label"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelColumnWarning)
        other = data["label"].copy()
        other.iloc[-1] = other.iloc[0] if other.iloc[-1] != other.iloc[0] else other.iloc[1]
        warn_label_column(data, other)  # one row differs: a column of its own
        warn_label_column(data, data["label"].rename("y"))  # another name
        warn_label_column(data, data["label"].to_numpy())  # no name to match
        warn_label_column(data.iloc[:5], data["label"])  # other lengths: sklearn's error
    with pytest.warns(LabelColumnWarning, match="its column 'label'"):
        warn_label_column(data, data[["label"]])  # a one-column DataFrame y, as scikit-learn reads it


@pytest.mark.parametrize("kind", ["object-nan", "string-na"])
def test_missing_labels_in_eval_set_are_a_clear_error(name, kind):
    clf = _with_eval_set(name)
    X, y = frame()
    with pytest.raises(ValueError, match=r"Input eval_set y contains NaN"):
        clf.fit(X, y, eval_set=(X, _labels_with_missing(kind, len(X))))


@pytest.mark.parametrize(
    "eval_set, match",
    [
        (lambda X, y: (X, y[:30]), r"eval_set: X_val has 60 rows and y_val has 30 labels"),
        (lambda X, y: X, r"eval_set must be a pair \(X_val, y_val\); got DataFrame"),
        (lambda X, y: (X, y, y), r"eval_set must be a pair"),
        # XGBoost's and LightGBM's form, a list of pairs: one pair was "got list", two were
        # read as X_val=(X, y), y_val=(X_val, y_val) ("inhomogeneous shape after 2 dimensions")
        (lambda X, y: [(X, y)], r"^eval_set takes one pair \(X_val, y_val\), not a list of 1 pair"),
        (lambda X, y: [(X, y), (X[:10], y[:10])], r"not a list of 2 pairs.*eval_set=\(X_val, y_val\)"),
        # y_val's errors named no argument, or fit's y: "Expected sequence or array-like, got
        # <class 'NoneType'>", "y should be a 1d array", "Unknown label type: continuous"
        (lambda X, y: (X, None), r"^requires eval_set y to be passed, but the target eval_set y is None"),
        (lambda X, y: (X, np.c_[y, y]), r"^eval_set y: y should be a 1d array, got an array of shape \(60, 2\)"),
        (lambda X, y: (X, np.linspace(0, 1, 60)), r"^eval_set y: Unknown label type: continuous"),
        # scikit-learn's "feature names should match", without eval_set or the columns
        (
            lambda X, y: (X[["kind", "city", "age"]], y),
            r"eval_set's X_val must have the same columns as X, "
            r"in the same order: X has \['city', 'age', 'kind'\], eval_set's X_val has \['kind', 'city', 'age'\] \(in another order\)\.$",
        ),
        (
            lambda X, y: (X.drop(columns="age").assign(size=1), y),
            r"eval_set's X_val has \['city', 'kind', 'size'\] \(lacks "
            r"\['age'\]; \['size'\] not in X\)\.$",
        ),
        # scikit-learn's words alone, naming neither eval_set nor X_val
        (lambda X, y: (X.iloc[:0], y[:0]), r"^eval_set's X_val: Found array with 0 sample\(s\)"),
        (lambda X, y: (X["age"], y), r"^eval_set's X_val: Expected 2D array, got 1D array"),
        # "X has 2 features, but ColumnTokenizer (TableEncoder) is expecting 3": a part the
        # caller never made, and not eval_set
        (lambda X, y: (X.to_numpy()[:, :2], y), r"^eval_set's X_val has 2 features, but X has 3: an array"),
        (lambda X, y: (X.assign(more=1).to_numpy().tolist(), y), r"^eval_set's X_val has 4 features, but X has 3"),
    ],
    ids=["lengths", "frame", "triple", "list-of-1-pair", "list-of-2-pairs", "y-none", "y-2d", "y-continuous", "reordered", "renamed", "empty", "1-d", "narrow-array", "wide-list"],
)
def test_malformed_eval_set_is_named(name, eval_set, match):
    clf = _with_eval_set(name)
    X, y = frame()
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, eval_set=eval_set(X, y))


def test_unseen_values_of_eval_set_are_named_as_eval_sets(name):
    """The unseen-value warning of eval_set's rows ("Column 'city': 60 value(s) (100.0% of
    rows) were not seen during fit") read as a problem of X; it now names eval_set's X_val at
    its end (a filter on the message's start still matches)."""
    clf = _with_eval_set(name)
    X, y = frame()
    with pytest.warns(UserWarning, match=r"^Column 'city': 60 value\(s\).* \(In eval_set's X_val\.\)$") as record:
        clf.fit(X, y, eval_set=(X.assign(city="lima"), y))
    assert all(w.filename == __file__ for w in record if "eval_set's X_val" in str(w.message))


def test_missing_values_of_eval_set_where_fit_saw_none_are_named_as_eval_sets(name):
    """eval_set's X_val is read as new rows: a missing value in a column that held none in X
    is warned about, naming X_val; the training rows (and an early-stopping hold-out, rows of X)
    are not."""
    clf = _with_eval_set(name)
    X, y = frame()
    with pytest.warns(UserWarning, match=r"^Column 'city': 60 value\(s\) \(100\.0% of rows\) are missing .*"
                      r" \(In eval_set's X_val\.\)$") as record:
        clf.fit(X, y, eval_set=(X.assign(city=None), y))
    assert all(w.filename == __file__ for w in record if "eval_set's X_val" in str(w.message))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*are missing and map to the MISSING token")
        clf.fit(X, y)


def test_negative_sample_weight_is_refused(name):
    """A negative weight turns a loss term into one to maximise (tabmoe trained to NaN)."""
    X, y = frame()
    weight = np.ones(len(X))
    weight[4] = -1.0
    with pytest.raises(ValueError, match="sample_weight"):
        CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=weight)


def test_sample_weight_that_is_no_number_is_named(name):
    """Weights read as text (a CSV's decimal commas), a dict or complex numbers were refused
    with numpy's "could not convert string to float: '1,5'" or "float() argument must be a
    string or a real number, not 'dict'", and "Complex data not supported" with the whole
    array, none naming sample_weight; scikit-learn's messages that name it are kept."""
    X, y = frame()
    text = np.array(["1,5"] * len(X), dtype=object)
    with pytest.raises(ValueError, match=r"^sample_weight must be numbers.*'1,5'.*pd\.to_numeric"):
        CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=text)
    with pytest.raises(TypeError, match=r"^sample_weight must be numbers.*'dict'"):
        CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=dict.fromkeys(range(len(X)), 1.0))
    with pytest.raises(ValueError, match=r"^sample_weight must be numbers.*Complex data not supported\.$"):
        CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=np.full(len(X), 1j))
    with pytest.raises(ValueError, match=r"^sample_weight\.shape == \(59,\), expected \(60,\)!$"):
        CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=np.ones(len(X) - 1))


def with_class_weight(name: str):
    """The classifier ``name`` when it takes ``class_weight`` itself; the references'
    (EncodedClassifier) is their inner estimator's, refused by its own library, so they skip."""
    clf = CLASSIFIER_FACTORIES[name]()
    if "class_weight" not in clf.get_params():
        pytest.skip(f"{name} takes no class_weight of its own (an inner estimator's)")
    return clf


def test_negative_class_weight_is_refused(name):
    clf = with_class_weight(name)
    X, y = frame()
    with pytest.raises(ValueError, match="class_weight"):
        clf.set_params(class_weight={"no": -1.0, "yes": 1.0}).fit(X, y)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_infinite_class_weight_is_refused(name, bad):
    """A NaN class weight trained tabmoe silently to NaN weights (the batch weight was NaN, so
    the divergence check never ran): NaN probabilities, and a file save wrote but load refused."""
    clf = with_class_weight(name)
    X, y = frame()
    with pytest.raises(ValueError, match="class_weight must be finite"):
        clf.set_params(class_weight={"no": bad, "yes": 1.0}).fit(X, y)


def test_class_weight_label_not_in_y_is_named(name):
    # scikit-learn's message named the class left out of the dict, which weighs 1, not the
    # label at fault: "The classes, ['no'], are not in class_weight"; the references say this
    clf = with_class_weight(name)
    X, y = frame()
    with pytest.raises(ValueError, match=r"class_weight has labels not in y: \['maybe'\]; the classes are \['no', 'yes'\]"):
        clf.set_params(class_weight={"yes": 2.0, "maybe": 3.0}).fit(X, y)
    assert not hasattr(clf, "classes_")


def test_class_weight_numpy_labels_not_in_y_are_named_as_python_writes_them(name):
    # a dict keyed by numpy's labels (dict(zip(np.unique(...), ...))): NumPy 2 wrote them
    # "labels not in y: [np.int64(5)]; the classes are [0, 1]"
    clf = with_class_weight(name)
    X, y = frame()
    weights = dict(zip(np.array([1, 5]), [2.0, 3.0], strict=True))
    with pytest.raises(ValueError, match=r"class_weight has labels not in y: \[5\]; the classes are \[0, 1\]"):
        clf.set_params(class_weight=weights).fit(X, (y == "yes").astype(int))


def test_class_weight_dict_of_digit_string_labels(name):
    # Labels "1" and "2" (OpenML's and CSVs' class columns) weighted {"1": 3.0} failed in every
    # torch model with scikit-learn's "The classes, [1, 2], are not in class_weight": its
    # compute_sample_weight looks a label up as int("1"). The dict is read by class codes now.
    clf = with_class_weight(name)
    X, _ = frame()
    y = np.array(["1", "2"] * (len(X) // 2), dtype=object)
    weights = {"1": 3.0}
    weighted = clf.set_params(class_weight=weights).fit(X, y)
    same = CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=np.where(y == "1", 3.0, 1.0))
    np.testing.assert_array_equal(weighted.predict_proba(X), same.predict_proba(X))
    with pytest.raises(ValueError, match=r"class_weight has labels not in y: \[1\]"):
        clf.set_params(class_weight={1: 3.0}).fit(X, y)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_class_weight_times_sample_weight_beyond_float64_trains(name, scale):
    # sample weights 1e200 times class weights 1e200 overflowed to inf: refused as "class_weight
    # must be finite" (it was); 1e-200 times 1e-200 underflowed to 0: "gives every row weight
    # 0". Each factor's scale is free: the fit is the fit with weights 1 and {"yes": 2}.
    clf = with_class_weight(name)
    X, y = frame()
    big = clf.set_params(class_weight={"no": scale, "yes": 2 * scale}).fit(X, y, sample_weight=np.full(len(y), scale))
    unit = CLASSIFIER_FACTORIES[name]().set_params(class_weight={"no": 1.0, "yes": 2.0}).fit(X, y)
    np.testing.assert_allclose(big.predict_proba(X), unit.predict_proba(X), atol=1e-6)


def test_class_weight_that_is_no_number_is_named(name):
    # numpy's "could not convert string to float: 'abc'" named no parameter
    clf = with_class_weight(name)
    X, y = frame()
    with pytest.raises(ValueError, match=r"class_weight's weights must be numbers: got \{'yes': 'abc'\}"):
        clf.set_params(class_weight={"yes": "abc"}).fit(X, y)


def test_class_weight_leaving_every_row_weight_zero_is_refused_naming_it(name):
    # tabmoe's default early stopping named validation_fraction ("set early_stopping=False"),
    # which then failed with "Training made no optimisation step"
    clf = with_class_weight(name)
    X, y = frame()
    with pytest.raises(ValueError, match=r"class_weight=\{'no': 0.0, 'yes': 0.0\} gives every row weight 0"):
        clf.set_params(class_weight={"no": 0.0, "yes": 0.0}).fit(X, y)
    with pytest.raises(ValueError, match=r"'yes': 1.0\} times sample_weight gives every row weight 0"):
        clf.set_params(class_weight={"no": 0.0, "yes": 1.0}).fit(X, y, sample_weight=(y == "no").astype(float))
    assert not hasattr(clf, "classes_")


def test_rows_of_weight_zero_are_absent_rows_to_the_front_end_too(name):
    # Every model left rows of weight 0 out of its training but fitted its front end on them
    # (the references fitted the one-hot vocabulary, reference levels, missing indicators and
    # scaling on every row): a value only they held got a token or column of its own, the
    # bins and scaling moved, so the fit was not the fit on the weighted rows (predict_proba
    # up to 0.2 off; logistic regression 0.006 on 150 rows where its own fit is exact).
    X, y = frame()
    extra = pd.DataFrame({"city": ["lima"] * 20, "age": np.r_[np.nan, np.linspace(-50, 200, 19)],
                          "kind": pd.Categorical(["b"] * 20, categories=X["kind"].cat.categories)})
    padded_X = pd.concat([X, extra], ignore_index=True)
    padded_y = np.r_[y, ["yes"] * 20]
    weight = np.r_[np.ones(len(X)), np.zeros(20)]
    # the rows alone with their weights: RandomForest's bootstrap draws by sample_weight
    alone = CLASSIFIER_FACTORIES[name]().fit(X, y, sample_weight=np.ones(len(X)))
    with warnings.catch_warnings():
        # their values are not read as unseen ones either
        warnings.filterwarnings("error", message=".*not seen during fit")
        warnings.filterwarnings("error", message="Found unknown categories")
        padded = CLASSIFIER_FACTORIES[name]().fit(padded_X, padded_y, sample_weight=weight)
    if not isinstance(padded, TorchClassifier):
        names = padded.encoder_.get_feature_names_out()
        np.testing.assert_array_equal(names, alone.encoder_.get_feature_names_out())
    np.testing.assert_allclose(padded.predict_proba(X), alone.predict_proba(X), rtol=0, atol=1e-6)


def test_a_class_whose_rows_all_weigh_zero_gets_probability_zero(name):
    # The references passed its rows to their library at weight 0: CatBoost gave it up to
    # 0.04 and the others' probabilities moved (0.28 MLP, 0.009 logistic regression) from
    # the fit on the other rows alone; GradientBoosting refused a table whose other rows
    # hold one class ("y contains 1 class after sample_weight trimmed").
    if isinstance(CLASSIFIER_FACTORIES[name](), TorchClassifier):
        # documented (docs/guide/training.md): their output head keeps every class of y
        pytest.skip("a torch model's output head has every class of y (untrained for this one)")
    X, y = frame()
    y3 = np.where(np.arange(len(y)) < 10, "maybe", y).astype(object)
    weight = (y3 != "maybe").astype(float)
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y3, sample_weight=weight)
    alone = CLASSIFIER_FACTORIES[name]().fit(X[10:], y3[10:], sample_weight=weight[10:])
    proba = clf.predict_proba(X)
    assert clf.classes_.tolist() == ["maybe", "no", "yes"] and (proba[:, 0] == 0).all()
    np.testing.assert_allclose(proba[:, 1:], alone.predict_proba(X), rtol=0, atol=1e-6)
    assert "maybe" not in set(clf.predict(X))
    one = CLASSIFIER_FACTORIES[name]().fit(X, y3, sample_weight=(y3 == "no").astype(float))
    np.testing.assert_array_equal(one.predict_proba(X[:3]), [[0.0, 1.0, 0.0]] * 3)
    assert one.predict(X[:3]).tolist() == ["no"] * 3


def test_sample_weight_as_a_series_fits_without_a_read_only_warning(name):
    # pandas copy-on-write gives a read-only array; torch.from_numpy warned about it.
    X, y = frame()
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not writable")
        CLASSIFIER_FACTORIES[name]().fit(
            X, y, sample_weight=pd.Series(np.ones(len(X)), index=X.index)
        )


def test_single_class_is_refused(name):
    X, y = frame()
    with pytest.raises(ValueError, match="class"):
        CLASSIFIER_FACTORIES[name]().fit(X, np.full(len(X), "yes"))


def test_empty_input_is_refused(name):
    X, y = frame()
    with pytest.raises(ValueError, match="0 sample"):
        CLASSIFIER_FACTORIES[name]().fit(X.iloc[:0], y[:0])
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    with pytest.raises(ValueError, match="0 sample"):
        clf.predict(X.iloc[:0])


def test_records_and_a_series_are_refused_with_what_to_pass(name):
    """A list of dicts, a row taken as a Series (``X.iloc[0]``) and a row as a dict got numpy's advice,
    "Reshape your data either using array.reshape(-1, 1) ...", which made a column of dicts
    or an array read by position."""
    X, y = frame()
    with pytest.raises(ValueError, match=r"^Expected 2D array, got 1D array instead: a list of 60 dicts \(records\)\. Pass pd\.DataFrame\(X\)"):
        CLASSIFIER_FACTORIES[name]().fit(X.to_dict("records"), y)
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    row = X.set_index(np.arange(len(X)) * 7).iloc[1]  # named np.int64(7), shown as 7
    with pytest.raises(ValueError, match=r"a pandas Series \(name 7, 3 values\)\. For one row, pass a one-row DataFrame \(X\.iloc\[\[i\]\]"):
        clf.predict(row)
    # the other way the message gives, for a row of mixed types
    assert clf.predict(row.to_frame().T.infer_objects()).shape == (1,)
    # a row as a dict (a request's payload): "which numpy reads as one value", and no advice
    with pytest.raises(ValueError, match=r"a dict\. For one row \(a value per column\), pass pd\.DataFrame\(\[X\]\); "
                                         r"for columns \(a list of values per column\), pd\.DataFrame\(X\)\.$"):
        clf.predict(row.to_dict())
    assert clf.predict(pd.DataFrame([row.to_dict()])).shape == (1,)


def test_inf_in_numeric_column_named(name):
    X, y = frame()
    X.loc[3, "age"] = np.inf
    with pytest.raises(ValueError, match="'age'"):
        CLASSIFIER_FACTORIES[name]().fit(X, y)


def test_numeric_column_given_as_datetimes_is_named(name):
    X, y = frame()
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    with pytest.raises(
        TypeError, match="Column 'age' held number values at fit and holds datetime"
    ):
        clf.predict(X.assign(age=pd.date_range("2020-01-01", periods=len(X))))


def test_a_datetime_column_held_as_objects_is_read_as_datetimes(name):
    # pd.concat with rows whose date was None (or row.to_frame().T) makes the column objects:
    # the tokenizer read them, then the baselines' numeric block refused them as "non-numeric"
    X, y = frame()
    X["when"] = pd.date_range("2020-01-01", periods=len(X), freq="D")
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    # (pandas 2's concat keeps datetime64 there: the cast makes pandas 3's objects on both)
    appended = pd.concat([X[:50], X[50:].assign(when=None)], ignore_index=True).astype({"when": object})
    assert appended["when"].dtype == object
    expected = clf.predict_proba(X.assign(when=X["when"].where(X.index < 50)))
    np.testing.assert_allclose(clf.predict_proba(appended), expected, rtol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(X.assign(when=X["when"].dt.date)), clf.predict_proba(X), rtol=1e-6)


def test_an_array_after_a_frame_fit_warns_once(name):
    X, y = frame()
    X = X.astype({"kind": object})  # an object array keeps every column's values
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        proba = clf.predict_proba(X.to_numpy())
    names = [str(w.message) for w in caught if "valid feature names" in str(w.message)]
    assert len(names) == 1, names  # the classifier's own, not again for an encoder inside
    np.testing.assert_allclose(proba, clf.predict_proba(X), atol=1e-12)


def test_fit_leaves_the_callers_global_rngs_alone(name):
    """As scikit-learn's estimators with a fixed seed: the reference baselines drew an unused
    seed from numpy's global RNG on every fit."""
    import torch

    X, y = frame()
    np.random.seed(0)
    torch.manual_seed(0)
    CLASSIFIER_FACTORIES[name]().fit(X, y)
    assert np.random.rand() == np.random.RandomState(0).rand()
    assert torch.rand(1).item() == torch.rand(1, generator=torch.Generator().manual_seed(0)).item()


def test_mixed_type_object_column(name):
    X, y = frame()
    X["mixed"] = pd.Series([1, "one", 2.5, None, True, "one"] * 10, dtype=object)
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert clf.predict(X).shape == (len(X),)


def test_multiclass_int_labels(name):
    X, _ = frame(90)
    y = np.arange(90) % 3
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    assert clf.predict_proba(X).shape == (90, 3)
    assert set(clf.predict(X)) <= {0, 1, 2}


def test_many_categories_column_fits(name):
    """10^4 distinct values in one column fit quickly; 10^5 is the slow test below."""
    X, y = frame(10_000)
    X["user"] = [f"u{i}" for i in range(len(X))]
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    assert clf.predict(X.iloc[:5]).shape == (5,)


@pytest.mark.slow
def test_hundred_thousand_category_column_bounded_memory(name):
    """Fit with a 10^5-category column in a subprocess; peak RSS stays under 3 GiB."""
    if name in MODELS and MODELS[name].missing():  # the subprocess would fail on the import
        pytest.skip(MODELS[name].install_hint())
    code = textwrap.dedent(
        f"""
        import resource, numpy as np, pandas as pd, torch
        torch.set_num_threads(1)
        from tests.classifiers import CLASSIFIER_FACTORIES
        n = 100_000
        rng = np.random.default_rng(0)
        X = pd.DataFrame({{"user": [f"u{{i}}" for i in range(n)], "age": rng.normal(size=n)}})
        y = rng.integers(0, 2, n)
        clf = CLASSIFIER_FACTORIES[{name!r}]()
        one_epoch = dict(max_epochs=1, batch_size=512, early_stopping=False)
        if {name!r} == "tabmoe":  # the paper's width: the 10^5-wide output layer's time grows
            one_epoch.update(d_model=20, n_heads=5, ff_dim=5)  # with d_model, not its memory
        clf.set_params(**{{k: v for k, v in one_epoch.items() if k in clf.get_params()}})
        clf.fit(X, y).predict(X)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    peak_mib = int(out.stdout.strip().splitlines()[-1])
    assert peak_mib < 3 * 1024, f"peak RSS {peak_mib} MiB"


def test_every_feature_constant_fits_and_predicts(name):
    """A table in which no column varies: every model fits it (the boosting references
    predict the class prior); CatBoost refused it ("All features are either constant or
    ignored"). Prediction rows may hold another number, and missing values."""
    X = pd.DataFrame(
        {
            "city": ["paris"] * 60,
            "age": np.full(60, 40.0),
            "kind": pd.Categorical(["a"] * 60, categories=["a", "b"]),
        }
    )
    y = np.array(["no"] * 35 + ["yes"] * 25)
    clf = CLASSIFIER_FACTORIES[name]().fit(X, y)
    Xp = pd.DataFrame(
        {
            "city": ["paris", None, "paris"],
            "age": [40.0, np.nan, 41.0],
            "kind": pd.Categorical(["a", None, "a"], categories=["a", "b"]),
        }
    )
    proba = clf.predict_proba(Xp)
    assert proba.shape == (3, 2) and np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(Xp)) <= {"no", "yes"}
