"""Baselines as equals: the models users would pick instead of tabmoe, on the same front end.

* :class:`FTTransformerClassifier` (rtdl-revisiting-models), :class:`TabTransformerClassifier`
  (tab-transformer-pytorch), both trained by tabmoe's :class:`~tabmoe.nn.trainer.Trainer`;
* :class:`TabMClassifier` (tabm: parameter-efficient ensembling of MLPs), also trained by
  the trainer;
* :class:`TabNetClassifier` (pytorch-tabnet, its own training loop behind an adapter);
* :mod:`~tabmoe.baselines.reference`: scikit-learn's LogisticRegression, RandomForest,
  GradientBoosting, HistGradientBoosting and MLP (and XGBoost, CatBoost and LightGBM when
  installed), with the
  paper's grid searches (:class:`StagedGridSearchCV` scores GradientBoosting's
  ``n_estimators`` axis from one fit).

Every one reads DataFrames through :class:`~tabmoe.baselines.encoding.TableEncoder`.
:mod:`tabmoe.registry` registers them with their paper defaults and search spaces.
"""

from . import reference
from .encoding import TableEncoder
from .ft_transformer import FTTransformerClassifier
from .reference import EncodedClassifier
from .staged_search import StagedGridSearchCV
from .tab_transformer import TabTransformerClassifier
from .tabm import TabMClassifier
from .tabnet import TabNetClassifier

__all__ = [
    "EncodedClassifier",
    "FTTransformerClassifier",
    "StagedGridSearchCV",
    "TabMClassifier",
    "TabNetClassifier",
    "TabTransformerClassifier",
    "TableEncoder",
    "reference",
]
