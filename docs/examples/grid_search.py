"""TabularMoEClassifier in a scikit-learn Pipeline, tuned with GridSearchCV.

    python docs/examples/grid_search.py

The estimator is an ordinary scikit-learn classifier, so Pipeline, ColumnTransformer,
clone and GridSearchCV work unchanged. Searches 4 settings x 3 folds on the shipped car
data and writes docs/img/grid_search.png. Offline; about 30 s on one CPU core.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.pipeline import Pipeline

from tabmoe import TabularMoEClassifier

ROOT = Path(__file__).resolve().parents[2]

data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv", dtype="category")
X, y = data.drop(columns="class"), data["class"]
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, stratify=y, random_state=0
)

pipeline = Pipeline([
    # Preprocessing is optional (tabmoe reads raw category / text / numeric columns); a
    # ColumnTransformer with pandas output keeps column names and dtypes for the model.
    ("select", ColumnTransformer(
        [("drop_doors", "drop", ["doors"])],
        remainder="passthrough",
        verbose_feature_names_out=False,
    ).set_output(transform="pandas")),
    ("model", TabularMoEClassifier(max_epochs=25, batch_size=32, random_state=0)),
])
grid = {
    "model__learning_rate": [1e-3, 3e-3],
    "model__d_model": [16, 32],  # must stay divisible by n_heads (default 4)
}
search = GridSearchCV(
    pipeline, grid, cv=StratifiedKFold(3, shuffle=True, random_state=0), scoring="accuracy"
)
search.fit(X_train, y_train)

results = pd.DataFrame(search.cv_results_)
table = results[["param_model__learning_rate", "param_model__d_model",
                 "mean_test_score", "std_test_score"]]
print(table.round(3).to_string(index=False))
print("best:", search.best_params_, f"CV accuracy {search.best_score_:.3f}")
print(f"test accuracy of the refitted best pipeline: {search.score(X_test, y_test):.3f}")

labels = [f"lr={lr:g}, d={d}" for lr, d in zip(results["param_model__learning_rate"],
                                               results["param_model__d_model"], strict=True)]
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.bar(labels, results["mean_test_score"], yerr=results["std_test_score"], capsize=4)
ax.set(ylabel="3-fold CV accuracy", ylim=(0.5, 1.0),
       title="GridSearchCV: learning_rate x d_model")
fig.tight_layout()
fig.savefig(ROOT / "docs" / "img" / "grid_search.png", dpi=80)
