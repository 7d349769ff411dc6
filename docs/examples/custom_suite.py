"""Your own dataset and OOD splits: a suite YAML file, loaded, split, checked and reported.

    python docs/examples/custom_suite.py
    tabmoe-bench shift-report docs/examples/my-suite.yaml      # its seed-0 rows, from the CLI
    tabmoe-bench shift-report docs/examples/my-suite.yaml --seed 1                # the others

Loads docs/examples/my-suite.yaml, makes every split at every seed (each one is checked for
leakage as it is made), and prints the part sizes and the shift report. No model is
trained. Offline; a few seconds.
"""

from pathlib import Path

from tabmoe.bench.suites import load_suite
from tabmoe.data.shift import markdown_table, shift_report

HERE = Path(__file__).resolve().parent

suite = load_suite(HERE / "my-suite.yaml")
print(f"{suite.name}: {suite.description}\n")
reports = []
for definition in suite.splits:
    print(f"{definition.name}: {definition.rationale}")
    for seed in suite.seeds_for(definition):
        split = definition.make(seed)  # raises LeakageError if ID and OOD overlap
        sizes = {name: len(part) for name, part in split.parts.items()}
        print(f"  seed {seed}: {sizes}, domain {split.domain_label!r}")
        reports.append(shift_report(split, random_state=seed))
print()
print(markdown_table(reports))

# The parts are DataFrames of features + label, ready for any estimator:
features, labels = split.features("train"), split.train[split.target]
print(f"\nlast split's training part: {features.shape[0]} rows, columns {list(features.columns)}")
