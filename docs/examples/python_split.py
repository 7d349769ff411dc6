"""An OOD split of a table built in Python (no file, no suite).

    python docs/examples/python_split.py

Wraps a generated DataFrame in a Table and holds out its largest orders with a threshold
split; prints the parts and the shift report. Only the label's link to the sales channel
and item count was generated, nothing depends on the order value, so the report flags the
split as testing nothing (NEGLIGIBLE SHIFT). Offline; a few seconds.
"""

import numpy as np
import pandas as pd

from tabmoe.data import Table
from tabmoe.data.shift import markdown_table, shift_report
from tabmoe.data.splits import SplitDefinition, ThresholdSplit

rng = np.random.default_rng(0)
n = 1000
frame = pd.DataFrame({
    "region": pd.Categorical(rng.choice(["north", "south", "east", "west"], n)),
    "channel": pd.Categorical(rng.choice(["web", "shop", "phone"], n, p=[0.5, 0.3, 0.2])),
    "order_value": rng.lognormal(4, 1, n).round(2),
    "items": rng.integers(1, 20, n),
})
frame["returned"] = np.where(
    rng.random(n) < 0.1 + 0.2 * (frame["channel"] == "web") + 0.002 * frame["items"], "yes", "no"
)

table = Table(data=frame, target="returned", name="orders", source="generated")
definition = SplitDefinition(
    name="orders-large",
    data=None,  # no source: the table is passed to make()
    rule=ThresholdSplit(column="order_value", quantile=0.8),
    rationale="price range - the largest 20% of orders are never seen in training",
)
split = definition.make(seed=0, table=table)  # checked for leakage as it is made
for name, part in split.parts.items():
    values = split.domain.loc[part.index]  # the domain column itself is dropped from the parts
    print(f"{name:>10}: {len(part):4d} rows, order_value {values.min():7.2f} .. {values.max():7.2f}")
print("training features:", list(split.features("train").columns))
print(markdown_table([shift_report(split)]))
