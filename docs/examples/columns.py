"""Categorical and numeric columns, missing values and values unseen during fit.

    python docs/examples/columns.py

Turns two columns of the shipped car data into numbers (doors, persons), knocks out some
cells, and shows what the tokenizer makes of each column; then predicts rows with a missing
value and with a category never seen in training. Offline; about 10 s on one CPU core.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from tabmoe import ColumnTokenizer, TabularMoEClassifier

ROOT = Path(__file__).resolve().parents[2]

data = pd.read_csv(ROOT / "benchmarks" / "data" / "car-smoke.csv")
# Numeric columns: "5more" doors -> 5, "more" persons -> 6. Text columns stay categorical.
data["doors"] = data["doors"].replace({"5more": "5"}).astype(float)
data["persons"] = data["persons"].replace({"more": "6"}).astype(float)
rng = np.random.default_rng(0)
data.loc[rng.random(len(data)) < 0.05, "safety"] = np.nan  # 5% missing, categorical
data.loc[rng.random(len(data)) < 0.05, "doors"] = np.nan   # 5% missing, numeric
X, y = data.drop(columns="class"), data["class"]
print(X.dtypes.to_string(), "\n")

# What categorical_features="auto" decides, column by column.
tok = ColumnTokenizer(n_bins=10).fit(X)
for name, categorical, cats, edges in zip(
    X.columns, tok.is_categorical_, tok.categories_, tok.bin_edges_, strict=True
):
    kind = f"categorical {list(cats)}" if categorical else f"numeric, bin edges {edges.tolist()}"
    print(f"{name:>9}: {kind}")
print("token ids of the first 3 rows (0 MASK, 1 MISSING, 2 UNKNOWN):")
print(tok.transform(X.head(3)))

clf = TabularMoEClassifier(max_epochs=30, random_state=0).fit(X, y)

# Rows the model has to cope with at prediction time.
new = X.head(3).copy()
new.loc[new.index[0], "safety"] = np.nan       # missing       -> MISSING token
new.loc[new.index[1], "buying"] = "extreme"    # unseen at fit -> UNKNOWN token, with a warning
new.loc[new.index[2], "persons"] = 9.0         # numeric beyond the training range -> last bin
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    proba = clf.predict_proba(new)
for w in caught:
    print("warning:", w.message)
print(pd.DataFrame(proba, columns=clf.classes_, index=["missing safety", "unseen buying",
                                                       "persons = 9"]).round(3))
