"""What each baseline promises beyond the shared contract: its defaults, its guards, its loop."""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
import torch
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from torch import nn

from tabmoe.baselines import (
    FTTransformerClassifier,
    TableEncoder,
    TabNetClassifier,
    TabTransformerClassifier,
    ft_transformer,
    reference,
    tab_transformer,
    tabnet,
)
from tabmoe.baselines.encoding import CODE_MISSING, CODE_UNKNOWN, N_RESERVED_CODES
from tabmoe.data import auto_mpg_origin_split
from tabmoe.nn.trainer import param_groups

from .baseline_factories import BASELINE_FACTORIES

torch.set_num_threads(1)

SMALL_NETWORKS = {
    "ft_transformer": lambda **kw: FTTransformerClassifier(
        n_blocks=1, d_block=16, attention_n_heads=2, learning_rate=1e-3, device="cpu", **kw
    ),
    "tab_transformer": lambda **kw: TabTransformerClassifier(
        dim=16, depth=1, heads=2, learning_rate=1e-3, device="cpu", **kw
    ),
    "tabnet": lambda **kw: TabNetClassifier(device="cpu", **kw),
}


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/conftest.py


def mixed(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n).astype(object),
            "size": rng.normal(size=n),
            "kind": pd.Categorical(rng.choice(["a", "b"], n)),
        }
    )
    return X, np.where((X["colour"] == "red") | (X["size"] > 1.0), "yes", "no")


def defaults_of(cls) -> dict:
    return {
        name: p.default
        for name, p in inspect.signature(cls.__init__).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


# ----------------------------------------------------------------- encoder
def test_encoder_codes_reserve_missing_and_unknown_per_column():
    X = pd.DataFrame({"a": ["x", "y", None, "x"], "b": pd.Categorical(["p", "q", "p", "q"])})
    encoder = TableEncoder().fit(X)
    assert encoder.cardinalities_.tolist() == [2 + N_RESERVED_CODES, 2 + N_RESERVED_CODES]
    codes, numeric = encoder.encode(X)
    assert codes[:, 0].tolist() == [2, 3, CODE_MISSING, 2]
    assert codes[:, 1].tolist() == [2, 3, 2, 3]
    assert numeric.shape == (4, 0)
    with pytest.warns(UserWarning, match="'a'"):
        unseen, _ = encoder.encode(pd.DataFrame({"a": ["new"], "b": pd.Categorical(["q"])}))
    assert unseen.tolist() == [[CODE_UNKNOWN, 3]]


def test_encoder_numeric_block_standardises_and_flags_missing():
    X = pd.DataFrame({"u": [1.0, 2.0, 3.0, np.nan], "v": [10, 20, 30, 40]})
    encoder = TableEncoder().fit(X)
    _, numeric = encoder.encode(X)
    assert encoder.n_numeric_ == 3  # u, v, and u's missing indicator
    np.testing.assert_allclose(numeric[:3, 0], [-1.224745, 0.0, 1.224745], rtol=1e-5)
    assert numeric[3, 0] == 0.0  # NaN -> the training mean
    assert numeric[:, 2].tolist() == [0, 0, 0, 1]
    # Values outside the training range are not clipped (standard scaling extrapolates).
    _, far = encoder.encode(pd.DataFrame({"u": [100.0], "v": [10]}))
    assert far[0, 0] > 100


def test_encoder_weights_scale_like_repeated_rows():
    X = pd.DataFrame({"u": [0.0, 1.0, 5.0]})
    weighted = TableEncoder().fit(X, sample_weight=[1, 2, 0]).encode(X)[1]
    repeated = TableEncoder().fit(pd.DataFrame({"u": [0.0, 1.0, 1.0]})).encode(X)[1]
    np.testing.assert_allclose(weighted, repeated, rtol=1e-12)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        TableEncoder().fit(X, sample_weight=[1, -1, 1])
    with pytest.raises(ValueError, match=r"^sample_weight must be numbers.*'1,5'"):  # numpy's words alone before
        TableEncoder().fit(X, sample_weight=["1,5", "2", "1"])


@pytest.mark.parametrize("scale", [1e-6, 1e16, 1e300])
def test_encoder_reads_only_relative_weights(scale):
    # StandardScaler counts the weights' sum as the rows seen: weights of 1e16 left the column
    # unscaled (its constant-column test's rounding allowance grows with that count: scale_
    # 1), 1e300 overflowed the variance and every value became missing (0, indicator set)
    X = pd.DataFrame({"u": [0.0, 1.0, 5.0, 2.0]})
    weight = np.array([1.0, 2.0, 1.0, 3.0])
    expected = TableEncoder().fit(X, sample_weight=weight).encode(X)[1]
    scaled = TableEncoder().fit(X, sample_weight=weight * scale).encode(X)[1]
    assert scaled.shape == expected.shape == (4, 1)
    np.testing.assert_allclose(scaled, expected, rtol=1e-12)


@pytest.mark.parametrize("scale", [2.0**600, 1e160, 1e300, 1e-170, 1e-300])
@pytest.mark.parametrize("weighted", [False, True])
def test_encoder_standardises_columns_of_extreme_magnitude(scale, weighted):
    # StandardScaler's squares overflowed beyond about 1e154: at 1e160 the column was left
    # unscaled (the torch baselines then diverged on it), at 1e300 its variance was NaN and
    # every value became missing (0, indicator set); they underflowed below about 1e-160: at
    # 1e-170 the column was left unscaled, ~0 in every row
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"u": rng.normal(size=60), "w": rng.normal(size=60)})
    X.loc[[3, 9], "u"] = np.nan
    weight = rng.integers(1, 4, size=60) if weighted else None
    expected = TableEncoder().fit(X, sample_weight=weight).encode(X)[1]
    extreme = X.assign(u=X["u"] * scale)
    numeric = TableEncoder().fit(extreme, sample_weight=weight).encode(extreme)[1]
    assert numeric.shape == expected.shape == (60, 3)  # u, w and u's missing indicator
    np.testing.assert_allclose(numeric, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(numeric[:, 1:], expected[:, 1:])


def test_encoder_numeric_block_is_standard_scalers_bit_for_bit():
    # Columns of ordinary magnitude (up to 1e70 and down to 1e-70, a constant one whose mean
    # is off by rounding, integers, NaN) are StandardScaler's and SimpleImputer's output
    # exactly: only extreme columns are brought to an ordinary scale first.
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(1)
    X = pd.DataFrame({f"e{e}": rng.normal(size=80) * 10.0**e for e in (-70, -8, 0, 3, 70)})
    X["constant"] = 0.1
    X["count"] = rng.integers(0, 1000, size=80)
    X.loc[::9, "e3"] = np.nan
    weight = rng.integers(1, 3, size=80).astype(float)  # mean in [1, 2): used as it is
    values = np.ascontiguousarray(X.to_numpy(float))  # (row-major, as the encoder's)
    for w in (None, weight):
        numeric = TableEncoder().fit(X, sample_weight=w).encode(X)[1]
        reference = make_pipeline(
            StandardScaler(),
            SimpleImputer(strategy="constant", fill_value=0.0, add_indicator=True),
        ).fit(values, standardscaler__sample_weight=w)
        np.testing.assert_array_equal(numeric, reference.transform(values))


def test_encoder_max_categories_keeps_the_most_frequent_values():
    X = pd.DataFrame({"a": ["r"] * 5 + ["s"] * 1 + ["t"] * 3 + ["u"] * 2})
    encoder = TableEncoder(max_categories=4).fit(X)  # two reserved + two kept
    assert encoder.cardinalities_.tolist() == [4]
    codes, _ = encoder.encode(pd.DataFrame({"a": ["r", "s", "t", "u"]}))
    assert codes[:, 0].tolist() == [2, CODE_UNKNOWN, 3, CODE_UNKNOWN]


def test_encoder_one_hot_drop_first_is_pandas_get_dummies():
    X = pd.DataFrame({"a": ["x", "y", "z", "x"], "n": [1.0, 2.0, 3.0, 4.0]})
    encoder = TableEncoder(one_hot=True, drop="first").fit(X)
    dense = encoder.transform(X).toarray()
    dummies = pd.get_dummies(X["a"], drop_first=True).to_numpy(dtype=float)
    np.testing.assert_array_equal(dense[:, :2], dummies)


@pytest.mark.parametrize("one_hot", [False, True])
def test_encoder_output_ignores_sklearns_pandas_output(one_hot):
    X, _ = mixed(50)
    X.loc[:4, "size"] = np.nan
    expected = TableEncoder(one_hot=one_hot).fit(X)
    with sklearn.config_context(transform_output="pandas"):
        for encoder in (expected, TableEncoder(one_hot=one_hot).fit(X)):
            out = encoder.transform(X)
            assert isinstance(out, sparse.csr_matrix if one_hot else np.ndarray)
            reference = expected.transform(X)
            np.testing.assert_array_equal(
                out.toarray() if one_hot else out, reference.toarray() if one_hot else reference
            )
            (_, codes, numeric), = encoder.encode_batches(X, batch_rows=50)
            assert isinstance(codes, np.ndarray) and isinstance(numeric, np.ndarray)
            np.testing.assert_array_equal(numeric, expected.encode(X)[1])


def test_encoder_names_its_output_columns():
    # TableEncoder had no get_feature_names_out: a Pipeline around it could not name its
    # features (AttributeError).
    X, _ = mixed(50)
    X.loc[:4, "size"] = np.nan
    dense = TableEncoder().fit(X)
    expected = ["colour", "kind", "size", "missingindicator_size"]
    assert dense.get_feature_names_out().tolist() == expected
    assert len(expected) == dense.transform(X).shape[1]
    one_hot = TableEncoder(one_hot=True, drop="first").fit(X)
    names = one_hot.get_feature_names_out()
    assert len(names) == one_hot.transform(X).shape[1]
    assert names[-2:].tolist() == expected[-2:]
    assert all(n.startswith(("colour_", "kind_")) for n in names[:-2])
    assert make_pipeline(TableEncoder()).fit(X).get_feature_names_out().tolist() == expected
    positional = TableEncoder().fit(X.to_numpy()).get_feature_names_out().tolist()
    assert positional == ["x0", "x2", "x1", "missingindicator_x1"]
    with pytest.raises(ValueError, match="input_features"):
        dense.get_feature_names_out(["a", "b", "c"])


# ------------------------------------------------------------ FT-Transformer
def test_ft_transformer_defaults_are_rtdl_defaults():
    rtdl = pytest.importorskip("rtdl_revisiting_models")
    kwargs = rtdl.FTTransformer.get_default_kwargs(n_blocks=3)
    defaults = defaults_of(FTTransformerClassifier)
    for key in (
        "n_blocks",
        "d_block",
        "attention_n_heads",
        "attention_dropout",
        "ffn_dropout",
        "ffn_d_hidden_multiplier",
        "residual_dropout",
    ):
        assert defaults[key] == kwargs[key] == ft_transformer.PAPER_DEFAULTS[key], key
    model = rtdl.FTTransformer(n_cont_features=1, cat_cardinalities=[], d_out=1, **kwargs)
    optimizer = model.make_default_optimizer()
    assert defaults["learning_rate"] == optimizer.defaults["lr"]
    assert defaults["weight_decay"] == optimizer.defaults["weight_decay"]


def test_ft_transformer_decays_only_linear_weights():
    """rtdl's rule (no decay on embeddings, norms, biases), via the trainer's param_groups."""
    X, y = mixed(60)
    clf = SMALL_NETWORKS["ft_transformer"](max_epochs=1, weight_decay=0.1).fit(X, y)
    groups = param_groups(clf.module_, 0.1)
    decayed = {id(p) for g in groups if g["weight_decay"] > 0 for p in g["params"]}
    linear = {id(m.weight) for m in clf.module_.modules() if isinstance(m, nn.Linear)}
    assert decayed == linear
    # rtdl's own groups agree but for its output head's LayerNorm weight, which it decays.
    rtdl_decayed = {id(p) for p in clf.module_.model.make_parameter_groups()[0]["params"]}
    head_norm = clf.module_.model.backbone.output.normalization.weight
    assert rtdl_decayed - decayed == {id(head_norm)} and decayed <= rtdl_decayed


def test_ft_transformer_embeds_categoricals_and_numerics_separately():
    X, y = mixed(60)
    clf = SMALL_NETWORKS["ft_transformer"](max_epochs=1).fit(X, y)
    model = clf.module_.model
    assert [e.num_embeddings for e in model.cat_embeddings.embeddings] == [3 + 2, 2 + 2]
    assert model.cont_embeddings.weight.shape == (1, 16)  # one numeric column, d_block 16


def test_d_block_must_divide_into_heads():
    X, y = mixed(30)
    with pytest.raises(ValueError, match="d_block=30 must be a multiple of attention_n_heads=8"):
        FTTransformerClassifier(d_block=30, device="cpu").fit(X, y)


def test_feed_forward_width_of_zero_is_refused_by_name():
    """rtdl truncates d_block * ffn_d_hidden_multiplier: 8 * 0.1 gave a zero-width
    feed-forward (its blocks were a bias alone), which trained without a word."""
    X, y = mixed(30)
    clf = FTTransformerClassifier(
        n_blocks=1, d_block=8, attention_n_heads=8, ffn_d_hidden_multiplier=0.1, device="cpu"
    )
    with pytest.raises(ValueError, match=r"ffn_d_hidden_multiplier=0\.1 with d_block=8 .* = 0"):
        clf.fit(X, y)
    assert not hasattr(clf, "module_")
    clf.set_params(ffn_d_hidden_multiplier=0.125).fit(X, y)  # int(8 * 0.125) = 1 trains


# ------------------------------------------------------------ TabTransformer
def test_tab_transformer_defaults_are_the_papers():
    defaults = defaults_of(TabTransformerClassifier)
    for key, value in tab_transformer.PAPER_DEFAULTS.items():
        assert defaults[key] == value, key
    assert (defaults["dim"], defaults["depth"], defaults["heads"]) == (32, 6, 8)


def test_tab_transformer_unseen_and_missing_stay_in_their_columns_rows():
    """The library adds column offsets into one table: every code must stay in its range."""
    X, y = mixed(60)
    clf = SMALL_NETWORKS["tab_transformer"](max_epochs=1).fit(X, y)
    network = clf.module_
    offsets = network.model.categories_offset.tolist()
    cardinalities = network.cardinalities.tolist()
    X_new = X.head(4).copy()
    X_new["colour"] = ["purple", None, "red", "blue"]
    with pytest.warns(UserWarning, match="'colour'"):
        codes, _ = clf.encoder_.encode(X_new)
    rows = codes + np.asarray(offsets)
    for j in range(codes.shape[1]):
        assert (rows[:, j] >= offsets[j]).all()
        assert (rows[:, j] < offsets[j] + cardinalities[j]).all()
    assert codes[0, 0] == CODE_UNKNOWN and codes[1, 0] == CODE_MISSING


def tiny_tab_transformer(cardinalities: list[int], n_numeric: int) -> nn.Module:
    return tab_transformer.TabTransformerNetwork(
        cardinalities,
        n_numeric,
        2,
        dim=8,
        depth=1,
        heads=2,
        dim_head=4,
        attn_dropout=0.0,
        ff_dropout=0.0,
        mlp_hidden_mults=(2,),
    )


def test_tab_transformer_refuses_out_of_range_codes_instead_of_aliasing():
    network = tiny_tab_transformer([3, 4], 0)
    ok = torch.tensor([[2, 3]])
    assert network(ok, torch.zeros(1, 0)).shape == (1, 2)
    with pytest.raises(IndexError, match=r"column position\(s\) \[0\]"):
        network(torch.tensor([[3, 0]]), torch.zeros(1, 0))  # 3 would read column 1's row


def test_tab_transformer_classifier_checks_codes_before_they_reach_the_network(monkeypatch):
    """Out-of-range codes are refused while still numpy arrays on the CPU, in fit and in
    predict: on a device the network does not check them (a check of device tensors waits
    for the device every batch and breaks torch.compile's graph)."""
    X, y = mixed(60)
    clf = SMALL_NETWORKS["tab_transformer"](max_epochs=1, random_state=0).fit(X, y)
    fold, forwards = TableEncoder._fold, []

    def aliasing(self, codes):
        codes = fold(self, codes)
        codes[:, 1] = self.cardinalities_[1]  # one past the last column's range
        return codes

    monkeypatch.setattr(TableEncoder, "_fold", aliasing)
    network = tab_transformer.TabTransformerNetwork
    monkeypatch.setattr(network, "forward", lambda *a: forwards.append(1))
    message = r"column position\(s\) \[1\]: TabTransformer would read another column's embedding"
    with pytest.raises(IndexError, match=message):
        clf.predict_proba(X)
    with pytest.raises(IndexError, match=message):
        SMALL_NETWORKS["tab_transformer"](max_epochs=1, random_state=0).fit(X, y)
    assert forwards == []


def test_tab_transformer_compiles_to_one_graph():
    """No data-dependent branch in forward under torch.compile (fullgraph refuses one)."""
    network = tiny_tab_transformer([3, 4], 2)
    compiled = torch.compile(network, backend="eager", fullgraph=True)
    codes, numeric = torch.tensor([[2, 3], [0, 1]]), torch.zeros(2, 2)
    torch.testing.assert_close(compiled(codes, numeric), network(codes, numeric))


@pytest.mark.parametrize(("n_numeric", "normed"), [(1, False), (2, False), (3, True)])
def test_tab_transformer_layer_norm_needs_three_continuous_values(n_numeric, normed):
    network = tiny_tab_transformer([3], n_numeric)
    assert isinstance(network.model.norm, nn.LayerNorm) == normed


def test_tab_transformer_column_embedding_is_not_decayed():
    """The shared rule (no decay on biases, norms and embeddings) covers the library's
    per-column ``shared_category_embed``, a bare Parameter: decayed before, as a matrix."""
    X, y = mixed(60)
    clf = SMALL_NETWORKS["tab_transformer"](max_epochs=1, weight_decay=0.1).fit(X, y)
    groups = param_groups(clf.module_, 0.1)
    decayed = {id(p) for g in groups if g["weight_decay"] > 0 for p in g["params"]}
    assert id(clf.module_.model.shared_category_embed) not in decayed
    linear = {id(m.weight) for m in clf.module_.modules() if isinstance(m, nn.Linear)}
    assert decayed == linear


# --------------------------------------------------------------------- TabNet
def test_tabnet_defaults_are_pytorch_tabnets():
    tab_model = pytest.importorskip("pytorch_tabnet.tab_model")
    library = tab_model.TabNetClassifier
    fields = {f.name: f.default for f in library.__dataclass_fields__.values()}
    fit = {k: p.default for k, p in inspect.signature(library.fit).parameters.items()}
    ours = defaults_of(TabNetClassifier)
    for key in (
        "n_d",
        "n_a",
        "n_steps",
        "gamma",
        "n_independent",
        "n_shared",
        "momentum",
        "lambda_sparse",
    ):
        assert ours[key] == fields[key] == tabnet.PAPER_DEFAULTS[key], key
    assert ours["batch_size"] == fit["batch_size"] == 1024
    assert ours["virtual_batch_size"] == fit["virtual_batch_size"] == 128
    assert ours["max_epochs"] == fit["max_epochs"]
    assert ours["n_iter_no_change"] == fit["patience"]
    assert ours["learning_rate"] == library().optimizer_params["lr"]


def test_raw_tabnet_trains_zero_batches_on_small_tables():
    """The defect the adapter guards against: defaults + drop_last on < 1024 rows."""
    tab_model = pytest.importorskip("pytorch_tabnet.tab_model")
    X, y = mixed(500)
    Z = TableEncoder().fit(X).transform(X).astype(np.float32)
    counter = tabnet.StepCounter()
    raw = tab_model.TabNetClassifier(verbose=0, seed=0, device_name="cpu")
    with tabnet.quiet(0):
        raw.fit(Z, (y == "yes").astype(int), max_epochs=3, callbacks=[counter])
    assert counter.n_steps == 0  # ... and it still predicts, untrained


@pytest.mark.parametrize(
    ("n", "batch", "virtual", "expected"),
    [
        (500, 1024, 128, (384, 128)),
        (100, 1024, 128, (100, 100)),
        (2, 1024, 128, (2, 2)),
        (5000, 1024, 128, (1024, 128)),
        (300, 256, 100, (200, 100)),
    ],
)
def test_tabnet_batch_sizes_fit_the_data(n, batch, virtual, expected):
    got = tabnet.tabnet_batch_sizes(n, batch, virtual)
    assert got == expected
    assert 1 <= got[0] <= n and got[0] % got[1] == 0 and got[1] >= 2


def test_tabnet_adapter_trains_every_epoch_on_a_small_table():
    X, y = mixed(200)
    clf = TabNetClassifier(max_epochs=5, random_state=0, device="cpu").fit(X, y)
    assert clf.batch_size_ == 128 and clf.virtual_batch_size_ == 128
    assert clf.n_steps_ == 5 and clf.n_iter_ == 5


def test_tabnet_adapter_raises_when_no_step_was_taken(monkeypatch):
    X, y = mixed(100)
    monkeypatch.setattr(tabnet, "tabnet_batch_sizes", lambda n, b, v: (1024, 128))
    with pytest.raises(RuntimeError, match="no optimisation step"):
        TabNetClassifier(max_epochs=2, device="cpu").fit(X, y)


def test_tabnet_needs_two_training_rows():
    X, _ = mixed(3)
    y = np.array(["a", "b", "b"])
    with pytest.raises(ValueError, match="at least 2 training rows"):
        TabNetClassifier(early_stopping=True, validation_fraction=0.5, device="cpu").fit(X, y)


@pytest.mark.parametrize(
    ("name", "size"),
    [("ft_transformer", "d_block"), ("ft_transformer", "n_blocks"), ("tab_transformer", "dim"),
     ("tabm", "k"), ("tabm", "d_block"), ("tabmoe", "d_model"), ("tabmoe", "n_heads"),
     ("tabmoe", "ff_dim"), ("tabnet", "n_d"), ("tabnet", "n_steps"), ("tabnet", "n_shared"),
     ("tabnet", "cat_emb_dim")],
)
def test_a_network_size_given_as_a_bool_is_refused_by_name(name, size):
    """True passes scikit-learn's integer interval: as a width it failed inside torch with
    "empty(): argument 'size' ... must be tuple of ints, not bool", naming no parameter;
    TabNet's sizes trained as 1 without a word (n_d=True: a decision layer of width 1)."""
    from .classifiers import CLASSIFIER_FACTORIES

    X, y = mixed(40)
    clf = {**BASELINE_FACTORIES, **CLASSIFIER_FACTORIES}[name]().set_params(**{size: True})
    if name in ("ft_transformer", "tabmoe") and size != "n_heads":
        clf.set_params(**{"ft_transformer": {"attention_n_heads": 1}, "tabmoe": {"n_heads": 1}}[name])
    with pytest.raises(ValueError, match=f"The '{size}' parameter of .* Got True instead"):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_")


@pytest.mark.parametrize("mults", [(True, 2), (4, True), [True]])
def test_tab_transformer_mlp_multiple_given_as_a_bool_is_refused_by_name(mults):
    """True passed the positive-integer check and widened its layer 1x without a word."""
    X, y = mixed(40)
    clf = SMALL_NETWORKS["tab_transformer"](mlp_hidden_mults=mults, max_epochs=1)
    with pytest.raises(ValueError, match=r"mlp_hidden_mults must hold positive integers"):
        clf.fit(X, y)
    assert not hasattr(clf, "classes_")


def test_tabnet_batch_of_one_row_is_refused_by_name():
    """A batch of one row gave batch normalisation a one-row chunk: torch's "Expected more
    than 1 value per channel when training", naming no parameter."""
    X, y = mixed(40)
    with pytest.raises(ValueError, match="'batch_size' parameter of TabNetClassifier"):
        TabNetClassifier(batch_size=1, max_epochs=1, device="cpu").fit(X, y)


# ---------------------------------------------------------- shared behaviour
@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_networks_learn_a_simple_rule(name):
    X, y = mixed(300)
    clf = SMALL_NETWORKS[name](max_epochs=40, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.85


@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_same_random_state_same_probabilities(name):
    X, y = mixed(120)
    a = SMALL_NETWORKS[name](max_epochs=3, random_state=7).fit(X, y).predict_proba(X)
    b = SMALL_NETWORKS[name](max_epochs=3, random_state=7).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_eval_set_turns_early_stopping_on_and_restores_the_best_epoch(name):
    X, y = mixed(300)
    X_val, y_val = mixed(100, seed=1)
    clf = SMALL_NETWORKS[name](max_epochs=200, n_iter_no_change=3, random_state=0)
    clf.fit(X, y, eval_set=(X_val, y_val))
    assert all("val_loss" in record for record in clf.history_)
    assert clf.n_iter_ < 200
    losses = [record["val_loss"] for record in clf.history_]
    assert losses[clf.best_epoch_ - 1] <= min(losses) + 1e-4  # best within the tolerance
    # the restored weights are the best epoch's: their validation loss is that epoch's
    proba = np.clip(clf.predict_proba(X_val), 1e-12, 1)
    codes = np.searchsorted(clf.classes_, y_val)
    restored = -np.log(proba[np.arange(len(y_val)), codes]).mean()
    assert restored == pytest.approx(losses[clf.best_epoch_ - 1], rel=1e-3)


@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_early_stopping_holds_out_validation_fraction(name):
    X, y = mixed(200)
    clf = SMALL_NETWORKS[name](
        max_epochs=3, early_stopping=True, validation_fraction=0.25, random_state=0
    ).fit(X, y)
    assert "val_loss" in clf.history_[0]
    auto = SMALL_NETWORKS[name](max_epochs=3, early_stopping="auto", random_state=0).fit(X, y)
    assert "val_loss" not in auto.history_[0]  # "auto": off below 10,000 rows
    default = SMALL_NETWORKS[name](max_epochs=3, random_state=0).fit(X, y)
    # on by default as their authors train them; TabNet keeps "auto" (pytorch-tabnet's rule)
    assert ("val_loss" in default.history_[0]) == (name != "tabnet")


@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_pickle_round_trip(name):
    X, y = mixed(80)
    clf = SMALL_NETWORKS[name](max_epochs=2, random_state=0).fit(X, y)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize("name", sorted(SMALL_NETWORKS))
def test_cuda_requested_without_cuda_is_a_clear_error(name):
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    X, y = mixed(30)
    with pytest.raises(ValueError, match="CUDA is not available"):
        SMALL_NETWORKS[name](max_epochs=1).set_params(device="cuda").fit(X, y)


# ---------------------------------------------------------------- references
def test_paper_one_hot_reproduces_table5_logistic_regression(auto_mpg):
    """drop='first' one-hot: the paper's LR OOD accuracy 0.6571 exactly (0.7214 without)."""
    split = auto_mpg_origin_split(auto_mpg)
    paper = reference.logistic_regression(categorical_features="all")
    score = paper.fit(split.X_train, split.y_train).score(split.X_test, split.y_test)
    assert score == pytest.approx(92 / 140)
    full = reference.logistic_regression(categorical_features="all", drop=None)
    assert full.fit(split.X_train, split.y_train).score(split.X_test, split.y_test) != score


def test_hist_gradient_boosting_splits_natively_on_codes():
    X, y = mixed(100)
    clf = reference.hist_gradient_boosting(max_iter=5).fit(X, y)
    mask = clf.estimator_.is_categorical_
    assert mask.tolist() == [True, True, False]  # colour, kind codes; the numeric block


def test_native_encoding_needs_a_native_estimator():
    X, y = mixed(30)
    clf = reference.EncodedClassifier(LogisticRegression(), "native")
    with pytest.raises(ValueError, match="categorical_features.*feature_types"):
        clf.fit(X, y)


def test_paper_grid_search_uses_the_authors_grid():
    search = reference.paper_grid_search(
        reference.random_forest(), reference.PAPER_GRIDS["random_forest"]
    )
    assert search.param_grid == {
        "estimator__criterion": ["gini", "entropy"],
        "estimator__n_estimators": [50, 100, 200],
        "estimator__max_depth": [1, 3, None],
    }
    assert search.cv.n_splits == 5 and type(search.cv).__name__ == "StratifiedKFold"


@pytest.mark.parametrize("name", ["ft_transformer", "tab_transformer", "tabm"])
def test_torch_baselines_fit_sample_weights_of_any_scale_as_unit_weights(name):
    # float32 training weights: 2**127 made an inf batch sum ("Training diverged"), 2**-150
    # zeros; the loss is a weighted mean, so a power-of-two rescaling changes nothing
    from tabmoe.registry import get_model

    from .baseline_factories import BASELINE_FACTORIES

    spec = get_model(name)
    if not spec.available():  # each needs its own optional package (the "baselines" extra)
        pytest.skip(f"{name} needs {', '.join(spec.requires)}")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=120), "b": rng.choice(list("pqr"), 120)})
    y = (X["a"] > 0).to_numpy()
    ones = np.ones(len(X))  # weighted, the encoder's quantiles take another (weighted) path
    plain = BASELINE_FACTORIES[name]().fit(X, y, sample_weight=ones).predict_proba(X)
    for scale in (2.0**127, 2.0**-150):
        scaled = BASELINE_FACTORIES[name]().fit(X, y, sample_weight=np.full(len(X), scale))
        np.testing.assert_array_equal(scaled.predict_proba(X), plain)


@pytest.mark.parametrize("name", ["logistic_regression", "hist_gradient_boosting", "lightgbm"])
@pytest.mark.parametrize("labels", [[1, 2, 3], ["b", "a", "c"], [-5, 3, 1000]])
def test_references_read_a_class_weight_dict_by_label(name, labels):
    # the inner estimator sees class codes: {labels[2]: 50} was read as code labels[2]
    # ("The classes, [0], are not in class_weight", LightGBM's KeyError), or, where a label
    # is also a code, weighted another class
    from tabmoe.registry import get_model

    spec = get_model(name)
    if not spec.available():
        pytest.skip(f"{name} needs {', '.join(spec.requires)}")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=90), "b": rng.choice(list("pq"), 90)})
    y = np.array(labels)[rng.integers(0, 3, 90)]
    weights = {labels[0]: 1.0, labels[2]: 50.0}  # labels[1] absent: weight 1
    params = {"random_state": 0} if name != "logistic_regression" else {}
    clf = spec.make_default(class_weight=weights, **params).fit(X, y)
    codes = {label: int(np.flatnonzero(clf.classes_ == label)[0]) for label in weights}
    assert clf.estimator_.get_params()["class_weight"] == {codes[k]: w for k, w in weights.items()}
    assert clf.predict_proba(X)[:, codes[labels[2]]].mean() > 0.8  # the class weighted 50x
    with pytest.raises(ValueError, match=r"class_weight has labels not in y: \['z'\]"):
        spec.make_default(class_weight={"z": 2.0}).fit(X, y)
