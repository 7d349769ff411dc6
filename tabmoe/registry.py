"""Every model of the benchmark in one registry: name -> (factory, paper defaults, search space).

``get_model(name).make(**params)`` builds the estimator with the paper defaults overridden
by ``params`` (the ``fixed-budget`` protocol), ``make_default(**params)`` with the class's own
defaults (what a user constructs; where :func:`tabmoe.tuning.tune` searches from); ``make_paper()`` adds the paper's tuning protocol where it had one (the
5-fold stratified grid search of the scikit-learn references) and the paper's own column
handling where it differs from the general one: tabmoe's ``make()`` reads numeric columns as
numbers (``categorical_features="auto"``, per-column vocabularies, 10 unordered bins and
patience 10 as the committed fixed-budget runs had), its ``make_paper()`` is ``TabularMoEClassifier(**paper_config())``
(every column an integer code, one shared vocabulary; the binning keys it also carries have no
numeric column to act on). A search space is a plain
``suggest(trial) -> dict`` of estimator parameters, Optuna's define-by-run style: Optuna is
never imported here, the tuner passes its ``Trial``.

    spec = get_model("ft_transformer")
    study.optimize(lambda trial: score(spec.make_default(**spec.suggest(trial), random_state=0)))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sklearn.base import BaseEstimator

from ._optional import installed
from ._paper_config import PAPER_CONFIG
from .baselines import ft_transformer, reference, tab_transformer, tabm, tabnet
from .estimator import TabularMoEClassifier

#: tabmoe on a general table: the paper's network and training, but columns read by dtype
#: (numeric ones binned, not one token per distinct value) with one vocabulary per column.
#: The paper's integer-coded columns in one shared vocabulary: ``make_paper()``.
TABMOE_GENERAL_COLUMNS = {"categorical_features": "auto", "vocabulary": "per_column"}
#: Numeric columns as the committed fixed-budget runs binned them (before the defaults of
#: docs/research.md#study-5): 10 unordered quantile bins.
TABMOE_BINNED_NUMERICS = {"n_bins": 10, "numeric_embedding": "bins"}
#: Patience as the committed fixed-budget runs had it (the class default before
#: docs/research.md#study-75 made it "auto"), as for the other deep models there.
TABMOE_FIXED_PATIENCE = {"n_iter_no_change": 10}


class ReadOnlyMapping(Mapping):
    """A read-only copy of a mapping (item assignment is a TypeError). Unlike
    ``types.MappingProxyType`` it pickles and deep-copies (``copy.deepcopy``,
    ``dataclasses.asdict`` of a spec), as a copy of its own."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Any] = ()) -> None:
        object.__setattr__(self, "_items", dict(items))

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return repr(self._items)

    def __reduce__(self) -> tuple:
        return type(self), (self._items,)


@dataclass(frozen=True)
class ModelSpec:
    """How to build, configure and tune one model.

    ``paper_defaults``, ``paper_overrides`` and ``paper_grid`` are read-only copies of the
    mappings given (a grid's axes become tuples): a spec is shared by every caller of
    :func:`get_model`, so a change to them would change every later construction. Build a
    changed configuration with ``make(**params)`` or ``{**spec.paper_defaults, ...}``.
    """

    name: str
    factory: Callable[..., BaseEstimator]
    paper_defaults: Mapping[str, Any]
    suggest: Callable[[Any], dict]
    description: str
    paper_grid: Mapping[str, Sequence] | None = None
    requires: tuple[str, ...] = field(default=())
    #: The extra of tabmoe that installs ``requires`` (``pip install '.[<extra>]'``).
    extra: str | None = None
    #: Parameters the paper's protocol (:meth:`make_paper`) sets over ``paper_defaults``.
    paper_overrides: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # copies, not views: the module dicts they come from (e.g. reference.PAPER_DEFAULTS)
        # may change without changing the spec
        frozen = {
            "paper_defaults": ReadOnlyMapping(self.paper_defaults),
            "paper_overrides": ReadOnlyMapping(self.paper_overrides),
        }
        if self.paper_grid is not None:
            frozen["paper_grid"] = ReadOnlyMapping(
                {key: tuple(values) for key, values in self.paper_grid.items()}
            )
        for name, value in frozen.items():
            object.__setattr__(self, name, value)  # frozen dataclass

    @property
    def paper_params(self) -> dict[str, Any]:
        """The parameters :meth:`make_paper` builds with (before ``params`` and its grid)."""
        return {**self.paper_defaults, **self.paper_overrides}

    def missing(self) -> list[str]:
        """The optional packages this model needs that are not installed."""
        return [module for module in self.requires if not installed(module)]

    def install_hint(self) -> str:
        """What to install for the missing optional packages (empty when none is missing)."""
        missing = self.missing()
        if not missing:
            return ""
        where = f": pip install '.[{self.extra}]'" if self.extra else ""
        return f"missing {', '.join(missing)}{where}"

    def available(self) -> bool:
        """Whether the optional packages this model needs are installed."""
        return not self.missing()

    def make(self, **params: Any) -> BaseEstimator:
        """The estimator with the paper defaults, overridden by ``params`` (``fixed-budget``)."""
        return self.factory(**{**self.paper_defaults, **params})

    def make_default(self, **params: Any) -> BaseEstimator:
        """The estimator as a user constructs it (the class's own defaults), overridden by
        ``params``: what :func:`tabmoe.tuning.tune` searches from (``tuned``). Equal to
        :meth:`make` for every model but tabmoe, whose paper defaults are the paper's schedule."""
        return self.factory(**params)

    def make_paper(self, n_jobs: int | None = None, **params: Any) -> BaseEstimator:
        """The paper's configuration (``paper_params`` overridden by ``params``), inside the
        paper's grid search when the paper tuned this model; an axis of the grid that
        ``params`` sets is searched at that value alone (as :func:`~tabmoe.tuning.tune`'s fixed
        parameters win over its search). ``n_jobs`` is the grid search's where there is one,
        the estimator's otherwise (as in :meth:`make`; CatBoost, which has no ``n_jobs``,
        takes ``thread_count`` instead)."""
        if self.paper_grid is None:
            extra = {} if n_jobs is None else {"n_jobs": n_jobs}
            return self.factory(**{**self.paper_params, **params, **extra})
        estimator = self.factory(**{**self.paper_params, **params})
        # lists of the caller's own: the search's param_grid holds them. An axis searched over
        # a value params sets replaced it silently (the bench recorded the value as fixed).
        grid = {key: [params[key]] if key in params else list(values) for key, values in self.paper_grid.items()}
        return reference.paper_grid_search(estimator, grid, n_jobs=n_jobs)


def suggest_tabmoe(trial: Any) -> dict:
    """tabmoe's own space, around its defaults (the class's: d_model 64, 4 heads, ff_dim 128,
    one layer up to 10,000 rows, dropout 0, lr 1e-3, feature_loss_weight 0.1, ordered numeric
    embeddings, ``n_bins="auto"``), bounded by the values docs/research.md measured to lose on
    average on ID validation over the openml-ood splits, which one table may still prefer:
    width 32 and 128 (#study-28, #study-16), ff_dim 4x the width (#study-44; 1x not measured),
    two layers (#study-42; taken above 10,000 rows, #study-43), dropout 0.1 (#study-16,
    #study-18), lr 5e-4 and 2e-3 (#study-20, #study-31), feature_loss_weight 0.03 and 0.3
    (#study-19), piecewise and binned numeric embeddings (#study-33, #study-5)."""
    d_model = trial.suggest_categorical("d_model", [32, 64, 128])
    return {
        "d_model": d_model,
        "n_heads": trial.suggest_categorical("n_heads", [2, 4, 8]),  # each divides every width
        "ff_dim": round(trial.suggest_categorical("ff_multiplier", [1.0, 2.0, 4.0]) * d_model),
        "n_layers": trial.suggest_int("n_layers", 1, 2),
        "masking": "auto",  # leave-one-out for one layer, random masking for two
        "dropout": trial.suggest_float("dropout", 0.0, 0.1),
        "learning_rate": trial.suggest_float("learning_rate", 5e-4, 2e-3, log=True),
        "feature_loss_weight": trial.suggest_float("feature_loss_weight", 0.03, 0.3, log=True),
        "numeric_embedding": trial.suggest_categorical("numeric_embedding", ["ordered", "piecewise", "bins"]),
        "n_bins": trial.suggest_categorical("n_bins", ["auto", 10, 20, 40]),
        # No "vocabulary": a shared vocabulary makes every column categorical, one token per
        # distinct float of a numeric column; it is the paper's setup (make_paper), not a
        # setting for general tables.
    }


#: The point of :func:`suggest_tabmoe`'s space that is ``TabularMoEClassifier()`` (its
#: ``n_layers="auto"`` is one layer up to 10,000 rows): ``tune(get_model("tabmoe"), ...,
#: enqueue=[TABMOE_DEFAULT_TRIAL])`` scores the defaults first, so the search is measured
#: against them on the same validation rows.
TABMOE_DEFAULT_TRIAL: dict = {
    "d_model": 64, "n_heads": 4, "ff_multiplier": 2.0, "n_layers": 1, "dropout": 0.0,
    "learning_rate": 1e-3, "feature_loss_weight": 0.1, "numeric_embedding": "ordered", "n_bins": "auto",
}

#: The paper protocol trains the deep baselines on every training row, without a validation
#: part (its tables have none); their default since 0.1.0 is early stopping on a hold-out.
#: "auto" is off on the paper's tables (< 10,000 rows), as the committed paper runs were made.
PAPER_PROTOCOL_TRAINING = {"early_stopping": "auto"}

_SPECS = [
    ModelSpec(
        "tabmoe",
        TabularMoEClassifier,
        {**PAPER_CONFIG, **TABMOE_GENERAL_COLUMNS, **TABMOE_BINNED_NUMERICS, **TABMOE_FIXED_PATIENCE},
        suggest_tabmoe,
        "Bidirectional attention as a mixture of continuous word experts (the paper's model)",
        paper_overrides={k: PAPER_CONFIG[k] for k in TABMOE_GENERAL_COLUMNS},
    ),
    ModelSpec(
        "ft_transformer",
        ft_transformer.FTTransformerClassifier,
        ft_transformer.PAPER_DEFAULTS,
        ft_transformer.suggest,
        "FT-Transformer (Gorishniy et al. 2021), rtdl-revisiting-models",
        requires=("rtdl_revisiting_models",),
        extra="baselines",
        paper_overrides=PAPER_PROTOCOL_TRAINING,
    ),
    ModelSpec(
        "tab_transformer",
        tab_transformer.TabTransformerClassifier,
        tab_transformer.PAPER_DEFAULTS,
        tab_transformer.suggest,
        "TabTransformer (Huang et al. 2020), tab-transformer-pytorch",
        requires=("tab_transformer_pytorch",),
        extra="baselines",
        paper_overrides=PAPER_PROTOCOL_TRAINING,
    ),
    ModelSpec(
        "tabnet",
        tabnet.TabNetClassifier,
        tabnet.PAPER_DEFAULTS,
        tabnet.suggest,
        "TabNet (Arik & Pfister 2021), pytorch-tabnet",
        requires=("pytorch_tabnet",),
        extra="baselines",
    ),
    ModelSpec(
        "logistic_regression",
        reference.logistic_regression,
        reference.PAPER_DEFAULTS["logistic_regression"],
        reference.suggest_logistic_regression,
        "LogisticRegression on one-hot features",
    ),
    *(
        ModelSpec(
            name,
            factory,
            reference.PAPER_DEFAULTS[name],
            reference.grid_suggester(name),
            description,
            paper_grid=reference.PAPER_GRIDS[name],
        )
        for name, factory, description in [
            ("random_forest", reference.random_forest, "RandomForest on one-hot features"),
            (
                "gradient_boosting",
                reference.gradient_boosting,
                "GradientBoosting on one-hot features (the paper's GB)",
            ),
            (
                "hist_gradient_boosting",
                reference.hist_gradient_boosting,
                "HistGradientBoosting with native categorical splits",
            ),
            ("mlp", reference.mlp, "MLP on one-hot features (the paper's MLP)"),
        ]
    ),
    ModelSpec(
        "xgboost",
        reference.xgboost,
        reference.PAPER_DEFAULTS["xgboost"],
        reference.suggest_xgboost,
        "XGBoost with native categorical splits (optional: tabmoe[gbdt])",
        requires=("xgboost",),
        extra="gbdt",
    ),
    ModelSpec(
        "catboost",
        reference.catboost,
        reference.PAPER_DEFAULTS["catboost"],
        reference.suggest_catboost,
        "CatBoost with its own categorical handling, at its defaults (optional: tabmoe[gbdt])",
        requires=("catboost",),
        extra="gbdt",
    ),
    ModelSpec(
        "lightgbm",
        reference.lightgbm,
        reference.PAPER_DEFAULTS["lightgbm"],
        reference.suggest_lightgbm,
        "LightGBM with native categorical splits, at its defaults (optional: tabmoe[gbdt])",
        requires=("lightgbm",),
        extra="gbdt",
    ),
    ModelSpec(
        "tabm",
        tabm.TabMClassifier,
        tabm.PAPER_DEFAULTS,
        tabm.suggest,
        "TabM (Gorishniy et al. 2025): parameter-efficient ensemble of 32 MLPs, tabm",
        requires=("tabm",),
        extra="baselines",
        paper_overrides=PAPER_PROTOCOL_TRAINING,
    ),
]

#: name -> ModelSpec, in the order the benchmark reports them.
MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in _SPECS}


def get_model(name: str) -> ModelSpec:
    """The spec of ``name`` (ValueError listing the known names otherwise; TypeError when
    ``name`` is not a string)."""
    if not isinstance(name, str):
        raise TypeError(
            f"get_model's name must be a model name (str), one of {list(MODELS)}; "
            f"got {type(name).__name__} {name!r}"
        )
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name!r}; known models: {list(MODELS)}.") from None


def available_models() -> list[str]:
    """Names of the models whose optional dependencies are installed."""
    return [name for name, spec in MODELS.items() if spec.available()]
