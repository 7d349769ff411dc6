"""Figures the docs quote from a script that reads committed records (no fitting): each must
be what the script prints now, so a table left behind when the records were redone fails."""

from __future__ import annotations

import json
from pathlib import Path

from .test_research_rules import import_benchmark

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: tuned_or_defaults.py's model names as docs/results-openml-ood.md's table names them
NAMES = {
    "tabmoe": "tabmoe", "ft_transformer": "FT-Transformer", "tabm": "TabM",
    "logistic_regression": "logistic regression", "xgboost": "XGBoost", "catboost": "CatBoost",
    "gradient_boosting": "gradient boosting", "hist_gradient_boosting": "HistGradientBoosting",
    "lightgbm": "LightGBM", "random_forest": "random forest", "mlp": "MLP", "tabnet": "TabNet",
}


def test_tuned_or_defaults_table_is_what_the_script_prints(capsys):
    script = import_benchmark("tuned_or_defaults")
    assert script.main([]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {line["model"] for line in lines} == set(NAMES)
    text = (DOCS / "results-openml-ood.md").read_text(encoding="utf8")
    table = text[text.index("| model | search kept | ID test | OOD test |"):]
    rows = {row.split("|")[1].strip(): row for row in table.split("\n\n")[0].splitlines()[2:]}
    for line in lines:
        cells = [c.strip() for c in rows[NAMES[line["model"]]].strip("|").split("|")]
        kept = str(line["search_kept"]) + (f" of {line['pairs']}" if line["model"] == "tabmoe" else "")
        quoted = [f"{line[part]['diff']:+.4f} ({'/'.join(map(str, line[part]['wtl']))})"
                  for part in ("id_test", "ood_test")]
        assert cells[1:] == [kept, *quoted], (line["model"], cells, kept, quoted)
