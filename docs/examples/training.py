"""Early stopping on a validation set, and class weights for rare classes.

    python docs/examples/training.py

Fits the shipped car data twice: unweighted with early stopping on an eval_set, and with
class_weight="balanced". Prints per-class recall and writes docs/img/training.png.
Offline; about 20 s on one CPU core. Uses the GPU when one is available (device="auto").
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.metrics import recall_score
from sklearn.model_selection import train_test_split

from tabmoe import TabularMoEClassifier

ROOT = Path(__file__).resolve().parents[2]

data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv", dtype="category")
X, y = data.drop(columns="class"), data["class"]
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
X_train, X_val, y_train, y_val = train_test_split(
    X_fit, y_fit, test_size=0.2, stratify=y_fit, random_state=0
)
print("training class counts:", y_train.value_counts().to_dict())

# Early stopping (on by default) validates on eval_set instead of a held-out share of the
# training rows: stop after n_iter_no_change epochs without a better validation label
# log-loss, and keep the best epoch's weights.
plain = TabularMoEClassifier(
    max_epochs=100, n_iter_no_change=5, learning_rate=3e-3, random_state=0
)
plain.fit(X_train, y_train, eval_set=(X_val, y_val))
print(f"early stopping: ran {plain.n_iter_} epochs, kept epoch {plain.best_epoch_}")

# The same, with rows weighted inversely to their class frequency.
balanced = TabularMoEClassifier(
    max_epochs=100, n_iter_no_change=5, learning_rate=3e-3, class_weight="balanced",
    random_state=0,
)
balanced.fit(X_train, y_train, eval_set=(X_val, y_val))
print(f"balanced:       ran {balanced.n_iter_} epochs, kept epoch {balanced.best_epoch_}")

classes = plain.classes_
recall = pd.DataFrame(
    {
        name: recall_score(y_test, model.predict(X_test), labels=classes, average=None)
        for name, model in [("unweighted", plain), ("balanced", balanced)]
    },
    index=classes,
)
print("test recall per class:\n", recall.round(3).to_string())

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for name, model in [("unweighted", plain), ("balanced", balanced)]:
    epochs = [h["epoch"] for h in model.history_]
    val = left.plot(epochs, [h["val_loss"] for h in model.history_],
                    label=f"{name}: validation label log-loss")
    left.plot(epochs, [h["train_loss"] for h in model.history_], ls=":",
              color=val[0].get_color(), label=f"{name}: training loss (label + features)")
    left.axvline(model.best_epoch_, color=val[0].get_color(), lw=0.8)
left.set(xlabel="epoch", ylabel="loss", title="history_ (vertical line: best_epoch_)")
left.legend(fontsize=8)
positions = np.arange(len(classes))
right.bar(positions - 0.2, recall["unweighted"], 0.4, label="unweighted")
right.bar(positions + 0.2, recall["balanced"], 0.4, label='class_weight="balanced"')
right.set_xticks(positions, classes)
right.set(ylabel="test recall", ylim=(0, 1.05), title="recall per class")
right.legend(fontsize=8)
fig.tight_layout()
fig.savefig(ROOT / "docs" / "img" / "training.png", dpi=80)
