"""3CosAdd analogy scores on planted analogies."""

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tabmoe import TabularMoEClassifier
from tabmoe.interpret.analogy import analogy_scores, model_vocabulary

from .moe_data import toy_table


def planted(n_rows=6, n_cols=5, dim=40, noise=0.0, seed=0):
    """word (r, c) = u_r + v_c (+ noise): (r, c):(r, c') :: (r', c):(r', c') holds linearly."""
    rs = np.random.RandomState(seed)
    u, v = rs.normal(size=(n_rows, dim)), rs.normal(size=(n_cols, dim))
    words = [f"{r}/{c}" for r in range(n_rows) for c in range(n_cols)]
    emb = np.array([u[r] + v[c] for r in range(n_rows) for c in range(n_cols)])
    emb += noise * rs.normal(size=emb.shape)
    questions = [
        (f"{r}/{c}", f"{r}/{c2}", f"{r2}/{c}", f"{r2}/{c2}")
        for r, r2 in itertools.permutations(range(n_rows), 2)
        for c, c2 in itertools.permutations(range(n_cols), 2)
    ]
    return emb, words, questions


def test_planted_analogies_are_found():
    emb, words, questions = planted()
    res = analogy_scores(emb, words, questions)
    assert res.n_questions == len(questions) and res.n_skipped == 0
    assert res.top1 == 1.0
    assert res.mean_cosine > 0.8
    assert res.predictions[0] == questions[0][3]


def test_noise_and_random_embeddings_score_lower():
    emb, words, questions = planted(noise=0.6)
    noisy = analogy_scores(emb, words, questions)
    rand = analogy_scores(np.random.RandomState(1).normal(size=emb.shape), words, questions)
    assert 1.0 > noisy.top1 > rand.top1
    assert rand.top1 < 0.15 and rand.mean_cosine < noisy.mean_cosine


def test_query_words_are_excluded_and_oov_skipped():
    # d would lose to b without the exclusion: b is closest to f = c - a + b when c ~ a
    emb = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.01], [0.1, 1.0]])
    res = analogy_scores(emb, ["a", "b", "c", "d"], [("a", "b", "c", "d"), ("a", "b", "c", "zzz")])
    assert res.top1 == 1.0 and res.n_questions == 1 and res.n_skipped == 1
    with pytest.raises(ValueError, match="duplicate"):
        analogy_scores(emb, ["a", "a", "c", "d"], [])
    with pytest.raises(ValueError, match="4 words"):
        analogy_scores(emb, list("abcd"), [("a", "b", "c")])
    empty = analogy_scores(emb, list("abcd"), [("x", "y", "z", "w")])
    assert empty.n_questions == 0 and np.isnan(empty.top1)


def test_model_experts_make_column_shift_analogies_exact_before_normalising():
    """alpha[w, j] = token part + column part, so (w,j):(w',j)::(w,k):(w',k) holds exactly."""
    X, y = toy_table()
    X = X.drop(columns="size")
    clf = TabularMoEClassifier(vocabulary="shared", max_epochs=2, random_state=0, device="cpu").fit(X, y)
    emb, names = model_vocabulary(clf, "experts")
    index = {n: i for i, n in enumerate(names)}
    a, b, c, d = (index[n] for n in ("color=a", "color=red", "noise0=a", "noise0=red"))
    np.testing.assert_allclose(emb[b] - emb[a] + emb[c], emb[d], atol=1e-5)
    tokens, token_names = model_vocabulary(clf, "tokens")
    assert tokens.shape == (len(token_names), clf.d_model) and "red" in token_names
    res = analogy_scores(emb, names, [("color=a", "color=red", "noise0=a", "noise0=red")])
    assert res.n_questions == 1


def test_column_shift_analogies_are_exact_only_with_a_shared_vocabulary_as_the_moe_page_says():
    """docs/moe.md said the column-shift analogy holds exactly for any trained one-layer
    model; with the default per-column vocabulary "noise0=a" and "noise1=a" are two tokens,
    and it did not hold."""
    X, y = toy_table()
    X = X.drop(columns="size")
    clf = TabularMoEClassifier(n_layers=1, max_epochs=2, random_state=0, device="cpu").fit(X, y)
    emb, names = model_vocabulary(clf, "experts")
    index = {n: i for i, n in enumerate(names)}
    a, b, c, d = (index[n] for n in ("noise1=a", "noise1=b", "noise0=a", "noise0=b"))
    assert np.abs(emb[b] - emb[a] + emb[c] - emb[d]).max() > 1e-3
    page = (Path(__file__).resolve().parents[1] / "docs" / "moe.md").read_text()
    (claim,) = [p for p in page.split("\n\n") if "column-shift" in p]
    assert 'vocabulary="shared"' in claim and 'vocabulary="per_column"' in claim


def test_zero_rows_never_rank_first():
    # every candidate but the zero row has a negative cosine with the query
    emb = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, -1.0]])
    res = analogy_scores(emb, ["zero", "a", "b", "c", "d"], [("a", "b", "c", "d")])
    assert res.predictions == ["d"]


def test_a_question_with_no_candidate_left_is_a_miss_without_prediction():
    """Once a, b, c and the zero rows were excluded every score was -inf and argmax gave
    word 0: a zero-row d listed first scored top-1 = 1.0, else a query word was predicted."""
    emb = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # d, a, b, c
    for order in ([0, 1, 2, 3], [1, 2, 3, 0]):  # d listed first, then last
        words = [["d", "a", "b", "c"][i] for i in order]
        res = analogy_scores(emb[order], words, [("a", "b", "c", "d"), ("a", "b", "c", "d")])
        assert (res.top1, res.n_questions, res.predictions) == (0.0, 2, [None, None]), words
    emb[0] = 1.0  # d has a direction again: the only candidate, the answer
    assert analogy_scores(emb, ["d", "a", "b", "c"], [("a", "b", "c", "d")]).predictions == ["d"]


def test_model_vocabulary_names_columns_as_explain_does_and_keeps_values_apart():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({10: rng.choice(["a", "b"], 201), 20: pd.Series([1, "1", 2] * 67, dtype=object)})
    clf = TabularMoEClassifier(block="attention", max_epochs=2, d_model=8, n_heads=2, random_state=0, device="cpu")
    clf.fit(X, rng.choice([0, 1], 201))
    _, names = model_vocabulary(clf, "experts")
    assert names == ["10=a", "10=b", "20=1", "20=2", "20='1'"]
    assert [c for c in clf.explain(X.head(1)).gates.columns][:2] == [10, 20]
    analogy_scores(*model_vocabulary(clf, "tokens"), [])  # distinct names: accepted
    with pytest.raises(IndexError, match="member 3 out of range for 1 member"):
        model_vocabulary(clf, member=3)


def test_non_finite_embeddings_are_refused_naming_their_rows():
    # NaN wins argmax: a NaN row was the answer to nearly every question, and an all-NaN
    # matrix scored top-1 = 1.0 (d was the only word left once a, b and c were excluded)
    emb, words, questions = planted()
    emb[7] = np.nan
    emb[9, 0] = np.inf
    with pytest.raises(
        ValueError, match=r"NaN or infinite values in 2 row\(s\), e.g. \['1/2', '1/4'\]"
    ):
        analogy_scores(emb, words, questions)
    with pytest.raises(ValueError, match="NaN or infinite"):
        analogy_scores(np.full((4, 2), np.nan), list("abcd"), [tuple("abcd")])


@pytest.mark.parametrize("words", [np.array(["a", "b", "a", "c"]), np.array([10, 20, 10, 30])], ids=["str", "int"])
def test_a_numpy_vocabulary_is_named_as_python_writes_its_words(words):
    # its words are numpy's elements: NumPy 2 wrote "[np.str_('a')]", "[np.int64(10)]"
    shown = repr([words[0].item()])
    with pytest.raises(ValueError, match=re.escape(f"duplicate words: {shown}; each embedding row")):
        analogy_scores(np.eye(4), words, [])
    emb = np.eye(4)
    emb[2, 0] = np.nan
    with pytest.raises(ValueError, match=re.escape(f"NaN or infinite values in 1 row(s), e.g. {shown}.")):
        analogy_scores(emb, words, [])


def test_model_vocabulary_of_an_unfitted_model_says_so():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match="not fitted yet"):  # was: no attribute 'module_'
        model_vocabulary(TabularMoEClassifier())


@pytest.mark.parametrize("batch_size", [0, -1, 2.5, None, True])
def test_batch_size_must_be_a_positive_integer(batch_size):
    """0 raised "range() arg 3 must not be zero", -1 "torch.cat(): expected a non-empty
    list of Tensors", neither naming the parameter; True ran with batches of one."""
    emb, words, questions = planted()
    with pytest.raises(ValueError, match=r"batch_size must be a positive integer, got"):
        analogy_scores(emb, words, questions[:3], batch_size=batch_size)


def test_a_large_vocabulary_is_scored_within_the_similarity_budget():
    """A batch of questions held batch_size x V float64 similarities, whatever V: 1,024
    questions on 200,000 words peaked 3.2 GB above the start (8 GB a copy at 10^6 words).
    Here 40,000 words: 1,024 x 40,000 = 41 million similarities, now at most 2^24 (419
    questions a batch), with the same scores as one question at a time."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Largest(TorchDispatchMode):
        numel = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, tuple | list) else [out]:
                if isinstance(t, torch.Tensor):
                    self.numel = max(self.numel, t.numel())
            return out

    rng = np.random.default_rng(0)
    emb, words = rng.normal(size=(40_000, 4)), [f"w{i}" for i in range(40_000)]
    questions = [tuple(f"w{i}" for i in rng.integers(0, 40_000, 4)) for _ in range(1_024)]
    with Largest() as mode:
        batched = analogy_scores(emb, words, questions)
    assert mode.numel <= 2**24, mode.numel
    one_by_one = analogy_scores(emb, words, questions, batch_size=1)
    assert batched.predictions == one_by_one.predictions and batched.top1 == one_by_one.top1
    assert batched.mean_cosine == pytest.approx(one_by_one.mean_cosine, rel=1e-12)


def test_model_vocabulary_names_are_distinct_where_column_names_hold_equals_signs():
    """Column 'a=b' with value 'c' and column 'a' with value 'b=c' were both named 'a=b=c', so
    the names model_vocabulary gives "ready for analogy_scores" were refused there as
    "vocabulary contains duplicate words.", naming none."""
    X = pd.DataFrame({"a=b": ["c", "d"] * 10, "a": ["b=c", "e"] * 10})
    clf = TabularMoEClassifier(max_epochs=1, n_layers=1, d_model=8, n_heads=2, random_state=0).fit(X, [0, 1] * 10)
    for kind in ("tokens", "experts"):
        emb, names = model_vocabulary(clf, kind)
        assert names == ["'a=b'='c'", "'a=b'='d'", "'a'='b=c'", "'a'='e'"]
        assert analogy_scores(emb, names, [names]).n_questions == 1
    with pytest.raises(ValueError, match=re.escape("duplicate words: ['a=b=c']; each embedding row needs")):
        analogy_scores(np.eye(3), ["a=b=c", "x", "a=b=c"], [])


def test_model_vocabulary_refuses_a_member_that_is_not_an_integer():
    """On an ensemble ``member=True`` silently gave member 1, ``"a"`` failed with "'<=' not
    supported between instances of 'int' and 'str'" and 1.5 with torch's "only integers,
    slices ... are valid indices"; on one model ``"a"`` read "member a out of range"."""
    X, y = toy_table()
    ensemble = TabularMoEClassifier(block="attention", max_epochs=2, d_model=8, n_heads=2, n_members=2,
                                    random_state=0, device="cpu").fit(X, y)
    single = TabularMoEClassifier(block="attention", max_epochs=2, d_model=8, n_heads=2,
                                  random_state=0, device="cpu").fit(X, y)
    for clf in (ensemble, single):
        for member in (True, "a", 1.5, None):
            with pytest.raises(ValueError, match=r"member must be an integer \(the ensemble member\), got"):
                model_vocabulary(clf, "experts", member=member)
    np.testing.assert_array_equal(model_vocabulary(ensemble, member=np.int64(1))[0], model_vocabulary(ensemble, member=1)[0])


@pytest.mark.parametrize("kind", ["grad", "bf16", "device"])
def test_a_torch_tensor_on_any_device_is_scored_as_its_values(kind, monkeypatch):
    """A network's weights (requires_grad), a bf16 table or a tensor off the CPU (a CUDA
    one, stood in for by a tensor whose numpy conversion is refused) failed inside numpy:
    "Can't call numpy() on Tensor that requires grad", "Got unsupported ScalarType
    BFloat16", "can't convert cuda:0 device type tensor to numpy"."""
    import torch

    emb, words, questions = planted()
    expected = analogy_scores(emb, words, questions)
    if kind == "bf16":
        bf16 = torch.as_tensor(emb).bfloat16()
        expected = analogy_scores(bf16.double().numpy(), words, questions)
        table = bf16
    elif kind == "grad":
        table = torch.tensor(emb, requires_grad=True)
    else:
        class OnDevice(torch.Tensor):  # numpy refuses it; moved to the CPU, it is a plain tensor
            def __array__(self, *args, **kwargs):
                raise TypeError("can't convert cuda:0 device type tensor to numpy")

            def to(self, *args, **kwargs):
                return self.as_subclass(torch.Tensor).to(*args, **kwargs)

        table = torch.as_tensor(emb).as_subclass(OnDevice)
    got = analogy_scores(table, words, questions)
    assert (got.top1, got.mean_cosine, got.predictions) == (expected.top1, expected.mean_cosine, expected.predictions)


def test_a_frame_of_questions_is_read_by_rows():
    """Iterating a DataFrame gives its column labels: a frame of questions with columns
    0-3 (read_csv's header=None) raised "object of type 'int' has no len()", one with
    columns a-d "got 'a'", and one with four-letter column names had each name taken as a
    question of four letters, all skipped: n_questions=0, top1=nan, without a word."""
    emb, words, questions = planted()
    expected = analogy_scores(emb, words, questions)
    for columns in (None, list("abcd"), ["from", "into", "king", "word"]):
        frame = pd.DataFrame(questions, columns=columns)
        got = analogy_scores(emb, words, frame)
        assert (got.n_questions, got.top1, got.predictions) == (expected.n_questions, expected.top1, expected.predictions)
    with pytest.raises(ValueError, match="an analogy question has 4 words .* got 0"):
        analogy_scores(emb, words, [0])


@pytest.mark.parametrize("kind", ["pyarrow", "polars"])
def test_a_polars_frame_or_pyarrow_table_of_questions_is_read_by_rows(kind):
    """Iterating a polars frame gives its columns: a frame of four questions had each
    column taken as a question (top1 0.0 where its rows score 1.0, without a word), other
    frames failed ("got shape: (600,) Series: 'a' ..."); a pyarrow Table, not iterable,
    was refused."""
    if kind == "polars":
        pl = pytest.importorskip("polars")  # extra "dev" (181 MB installed), not a dependency
        as_kind = pl.from_pandas
    else:
        pa = pytest.importorskip("pyarrow")  # an optional dependency (extra "data")
        def as_kind(frame):
            return pa.Table.from_pandas(frame, preserve_index=False)
    emb, words, questions = planted()
    for rows in (questions[:4], questions):
        expected = analogy_scores(emb, words, rows)
        got = analogy_scores(emb, words, as_kind(pd.DataFrame(rows, columns=list("abcd"))))
        assert (got.n_questions, got.top1, got.predictions) == (expected.n_questions, expected.top1, expected.predictions)


def test_a_pandas_frame_of_questions_is_read_as_itself_not_through_pyarrow(monkeypatch):
    """pandas frames export the Arrow stream too (pandas >= 2.2): a frame of named columns
    went through pyarrow, so words of mixed types in a column (an int and strings, a tuple)
    failed ("ArrowInvalid: Could not convert 'a' with type str: tried to convert to int64")
    where the same rows as a list score, and without pyarrow any named frame was "Reading a
    pandas.DataFrame needs pyarrow ... or pass a pandas DataFrame"."""
    import sys

    rng = np.random.default_rng(0)
    vocabulary = [1, "b", "c", "d", "a", ("t", 1), 2.5]
    emb = rng.normal(size=(len(vocabulary), 3))
    for rows in ([[1, "b", "c", "d"], ["a", "b", "c", "d"]], [[("t", 1), "b", "c", "d"]]):
        expected = analogy_scores(emb, vocabulary, rows)
        got = analogy_scores(emb, vocabulary, pd.DataFrame(rows, columns=list("abcd")))
        assert (got.n_questions, got.top1, got.predictions) == (expected.n_questions, expected.top1, expected.predictions)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # pyarrow is optional (extra "data")
    emb, words, questions = planted()
    expected = analogy_scores(emb, words, questions)
    got = analogy_scores(emb, words, pd.DataFrame(questions, columns=list("abcd")))
    assert (got.n_questions, got.top1, got.predictions) == (expected.n_questions, expected.top1, expected.predictions)


def test_arguments_that_are_not_sequences_or_hashable_words_are_named():
    """``analogy_scores(np.eye(2), None, [])`` raised "'NoneType' object is not iterable",
    an unhashable word "unhashable type: 'list'", ``model_vocabulary(clf.module_)``
    scikit-learn's "... is not an estimator instance" printing the whole module."""
    with pytest.raises(TypeError, match=r"^vocabulary must be a sequence of V words, got NoneType\.$"):
        analogy_scores(np.eye(2), None, [])
    with pytest.raises(TypeError, match=r"^questions must be a sequence of \(a, b, c, d\) questions, got NoneType"):
        analogy_scores(np.eye(2), ["a", "b"], None)
    with pytest.raises(TypeError, match=r"^vocabulary words must be hashable"):
        analogy_scores(np.eye(2), [["a"], "b"], [])
    with pytest.raises(TypeError, match=r"^an analogy question's words must be hashable, .* in \['a', \['x'\]"):
        analogy_scores(np.eye(2), ["a", "b"], [["a", ["x"], "a", "b"]])
    X, y = toy_table()
    clf = TabularMoEClassifier(max_epochs=1, d_model=8, n_heads=2, random_state=0, device="cpu").fit(X, y)
    with pytest.raises(TypeError, match=r"^model_vocabulary takes the fitted TabularMoEClassifier \(clf\), "
                                        r"not TabularMoE\.$"):
        model_vocabulary(clf.module_)


def test_model_vocabulary_gives_the_experts_of_a_linear_term_model():
    """A one-layer linear_term=True model has experts alpha[w, j] = W_V (e_w + p_j) + b_V (its
    linear term is a term of the label's output): model_vocabulary(clf, "experts") refused it
    with MixtureOfExperts.from_model's error about label logits, which it does not read."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 60), "b": rng.normal(size=60)})
    y = rng.choice([0, 1], 60)
    clf = TabularMoEClassifier(
        n_layers=1, linear_term=True, d_model=8, n_heads=2, ff_dim=8, max_epochs=1, random_state=0
    ).fit(X, y)
    rows, names = model_vocabulary(clf, "experts")
    module, tok = clf.module_, clf.tokenizer_
    with torch.no_grad():
        value, table = module.blocks[0].attention.value, module.token_table()
        expected = np.concatenate([
            value(table[torch.as_tensor(tok.output_token_ids(j))] + module.column_embedding[j]).numpy()
            for j in range(2)
        ])
    assert names == model_vocabulary(clf, "tokens")[1]
    np.testing.assert_allclose(rows, expected, rtol=1e-5, atol=1e-6)
