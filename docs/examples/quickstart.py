"""Quick start: fit TabularMoEClassifier on a categorical table, score it, plot training.

    python docs/examples/quickstart.py

Data: benchmarks/data/car-smoke.csv (600 rows of UCI Car Evaluation, shipped with the
repository). Writes docs/img/quickstart.png. Offline; about 10 s on one CPU core.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # write files, never open a window
import matplotlib.pyplot as plt
import pandas as pd
from sklearn.metrics import ConfusionMatrixDisplay, balanced_accuracy_score
from sklearn.model_selection import train_test_split

from tabmoe import TabularMoEClassifier

ROOT = Path(__file__).resolve().parents[2]

# Every column is categorical text; the label is "class" (unacc / acc / good / vgood).
data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv", dtype="category")
X, y = data.drop(columns="class"), data["class"]
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, stratify=y, random_state=0
)

clf = TabularMoEClassifier(max_epochs=40, random_state=0)
clf.fit(X_train, y_train)

print(f"classes: {list(clf.classes_)}")
print(f"test accuracy:          {clf.score(X_test, y_test):.3f}")
print(f"test balanced accuracy: {balanced_accuracy_score(y_test, clf.predict(X_test)):.3f}")
print("majority-class accuracy:", f"{(y_test == y_train.mode()[0]).mean():.3f}")
print(clf.predict_proba(X_test.head(3)).round(3))  # (3, n_classes), columns in classes_ order

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot([h["epoch"] for h in clf.history_], [h["train_loss"] for h in clf.history_])
left.set(xlabel="epoch", ylabel="training loss (label + masked features)", title="history_")
ConfusionMatrixDisplay.from_estimator(clf, X_test, y_test, ax=right, colorbar=False)
right.set_title("test confusion matrix")
fig.tight_layout()
fig.savefig(ROOT / "docs" / "img" / "quickstart.png", dpi=80)
