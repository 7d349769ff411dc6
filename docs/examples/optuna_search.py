"""Tuning TabularMoEClassifier with Optuna, selecting on a validation split.

    python docs/examples/optuna_search.py

Six trials of a small search space (learning rate, width, feature-loss weight) on the
shipped car data, scored on a stratified validation split of the training rows; the best
setting is refitted and scored once on the test rows. The model registry's full space is
``tabmoe.models.get_model("tabmoe").suggest``. Offline; about 20 s on one CPU core.
"""

from pathlib import Path

import optuna
import pandas as pd
import torch
from sklearn.model_selection import train_test_split

from tabmoe import TabularMoEClassifier

torch.set_num_threads(1)
optuna.logging.set_verbosity(optuna.logging.WARNING)
ROOT = Path(__file__).resolve().parents[2]

data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv", dtype="category")
X, y = data.drop(columns="class"), data["class"]
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(
    X_fit, y_fit, test_size=0.25, stratify=y_fit, random_state=0
)


def make(params: dict) -> TabularMoEClassifier:
    return TabularMoEClassifier(**params, max_epochs=20, batch_size=32, random_state=0)


def objective(trial: optuna.Trial) -> float:
    params = {
        "learning_rate": trial.suggest_float("learning_rate", 1e-3, 1e-2, log=True),
        "d_model": trial.suggest_categorical("d_model", [10, 20, 40]),  # divisible by 5 heads
        "feature_loss_weight": trial.suggest_float("feature_loss_weight", 0.0, 1.0),
    }
    return make(params).fit(X_train, y_train).score(X_val, y_val)


study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
study.optimize(objective, n_trials=6)

print(study.trials_dataframe(attrs=("number", "value", "params")).round(4).to_string(index=False))
print("best:", {k: round(v, 4) if isinstance(v, float) else v for k, v in study.best_params.items()},
      f"validation accuracy {study.best_value:.3f}")
best = make(study.best_params).fit(X_fit, y_fit)  # refit on train + validation
print(f"test accuracy of the refitted best setting: {best.score(X_test, y_test):.3f}")
