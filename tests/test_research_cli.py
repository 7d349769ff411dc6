"""benchmarks/research.py's command line: bad arguments are named, not tracebacks, and
nothing is fitted or written before they are checked."""

from __future__ import annotations

import json
import re

import pytest

from .test_research_rules import import_benchmark


@pytest.fixture(scope="module")
def research():
    return import_benchmark("research")


@pytest.fixture
def study(research, tmp_path, monkeypatch):
    line = {"variant": "base", "split": "a", "seed": 0, "validation": 0.8, "id_test": 0.8,
            "ood_test": 0.7, "fit_seconds": 1.0, "ood_single_class": False}
    (tmp_path / "s.jsonl").write_text(json.dumps(line) + "\n")
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["summary", "--study", "nosuch", "--baseline", "base"],
    ["summary", "--study", "s,nosuch", "--baseline", "base"],
    ["held-out", "--study", "nosuch", "--baseline", "base"],
    ["unseen", "--study", "nosuch"],
])
def test_a_study_that_does_not_exist_is_named(research, study, argv):
    with pytest.raises(SystemExit, match=r"--study: no study 'nosuch' \(.*nosuch\.jsonl does not exist\)"):
        research.main(argv)


@pytest.mark.parametrize(("extra", "message"), [
    (["--suite", "nosuch"], r"--suite: no suite 'nosuch'; available: \["),
    (["--seeds", "0,x"], r"--seeds: 'x' is not an integer"),
    (["--splits", "car-cluster,nosuch"], r"--splits: suite 'smoke' has no split \['nosuch'\]; splits are \["),
    (["--model", "nosuch"], r"--model: Unknown model 'nosuch'; known models: \["),
    (["--variant", "b:d_model=8,nosuch=1"], r"--variant b: unknown parameter\(s\) \['nosuch'\] of tabmoe"),
    (["--base", "nosuch=1"], r"--base: unknown parameter\(s\) \['nosuch'\] of tabmoe"),
    (["--model", "logistic_regression", "--variant", "b:d_model=8"],
     r"--variant b: unknown parameter\(s\) \['d_model'\] of logistic_regression"),
    (["--threads", "0"], r"--threads must be at least 1, got 0"),
])
def test_run_names_a_bad_argument_before_fitting_or_writing(research, tmp_path, extra, message):
    out = tmp_path / "t.jsonl"
    argv = ["run", "--study", "t", "--suite", "smoke", "--variant", "a:", "--out", str(out), *extra]
    with pytest.raises(SystemExit, match=message):
        research.main(argv)
    assert not out.exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--variant", "b:d_model"], r"--variant b: 'd_model' is not key=value"),
    (["--variant", "b:categorical_features=[0,1]"], r"--variant b: '1\]' is not key=value"),
    (["--variant", "b:d_model=8,d_model=16"], r"--variant b: \['d_model'\] given more than once"),
    (["--variant", "d_model=8"], r"--variant needs NAME:params, got 'd_model=8'"),
    (["--base", "max_epochs"], r"--base: 'max_epochs' is not key=value"),
])
def test_run_names_a_variant_item_that_is_not_key_value(research, tmp_path, extra, message):
    """``b:d_model`` ran ``d_model=""`` (failing at its first fit, after the other variants'),
    ``[0,1]`` was cut at its comma, a key given twice kept the last, and ``d_model=8`` (the
    name left out) ran the defaults under the name "d_model=8"."""
    out = tmp_path / "t.jsonl"
    argv = ["run", "--study", "t", "--suite", "smoke", "--splits", "car-cluster", "--variant", "a:max_epochs=1",
            "--out", str(out), *extra]
    with pytest.raises(SystemExit, match=message):
        research.main(argv)
    assert not out.exists()


@pytest.mark.parametrize(("variant", "message"), [
    ("b:d_model=0", r"--variant b: The 'd_model' parameter .* must be an int in the range \[1, inf\)"),
    ("b:stop_on=bogus", r"--variant b: stop_on must be one of log_loss, error, objective, got 'bogus'"),
    ("b:batch_size=rows/8", r"--variant b: not enough values to unpack"),
    ("b:linear_term=True,vocabulary=shared", r"--variant b: linear_term=True needs a token per"),
])
def test_run_checks_every_variants_values_before_fitting_or_writing(research, tmp_path, variant, message):
    """A bad value (the estimator's constraints or cross-parameter checks, a research-only
    setting, a table rule) stopped the run at that variant's first fit, after the variants
    before it had been fitted and written (a ValueError or InvalidParameterError traceback)."""
    out = tmp_path / "t.jsonl"
    argv = ["run", "--study", "t", "--suite", "smoke", "--splits", "car-cluster", "--variant", "a:max_epochs=1",
            "--variant", variant, "--out", str(out)]
    with pytest.raises(SystemExit, match=message):
        research.main(argv)
    assert not out.exists()


def test_run_does_not_resume_a_variant_name_under_other_parameters(research, tmp_path):
    """A finished (variant, split, seed) was skipped by its name alone: run again with other
    parameters under the same name, nothing was fitted (exit 0), and the study kept the old
    lines as if they were the new variant's; the same name given twice fitted both and wrote
    two lines for one (variant, split, seed)."""
    out = tmp_path / "t.jsonl"
    line = {"variant": "a", "split": "car-cluster", "seed": 0, "params": {"max_epochs": 3}, "validation": 0.7}
    out.write_text(json.dumps(line) + "\n")
    argv = ["run", "--study", "t", "--suite", "smoke", "--splits", "car-cluster", "--out", str(out)]
    with pytest.raises(SystemExit, match=r"--variant a: .*t\.jsonl has lines of 'a' with other parameters "
                                         r"\(\{'max_epochs': 3\}, not \{'max_epochs': 5\}\)"):
        research.main([*argv, "--variant", "a:max_epochs=5"])
    assert research.main([*argv, "--variant", "a:max_epochs=3"]) == 0  # the same parameters: resumed
    assert out.read_text() == json.dumps(line) + "\n"
    with pytest.raises(SystemExit, match=r"--variant: \['b'\] named more than once"):
        research.main([*argv, "--variant", "b:max_epochs=1", "--variant", "b:max_epochs=2"])
    assert out.read_text() == json.dumps(line) + "\n"


def test_a_line_cut_short_by_an_interrupted_run_is_left_out_and_repaired(research, study, capsys):
    """A run killed mid-write leaves its last line cut short, without a newline: every command
    on the study stopped with a JSONDecodeError traceback, and a rerun could not resume (had it
    appended, its first line would have joined the broken one)."""
    path = study / "s.jsonl"
    whole = path.read_text()
    cut = json.dumps({"variant": "b", "split": "car-cluster", "seed": 0, "params": {"max_epochs": 1}})[:40]
    path.write_text(whole + cut)
    assert research.main(["summary", "--study", "s", "--baseline", "base"]) == 0
    out = capsys.readouterr()
    assert "| base | 1 |" in out.out and "s.jsonl: its last line is cut short (an interrupted write), left out" in out.err
    assert path.read_text() == whole + cut  # summary reads, never writes
    argv = ["run", "--study", "s", "--suite", "smoke", "--splits", "car-cluster", "--variant", "b:max_epochs=1"]
    assert research.main(argv) == 0
    lines = path.read_text().splitlines()
    assert lines[0] == whole.strip() and [json.loads(x)["variant"] for x in lines] == ["base", "b"]
    path.write_text(whole + cut + "\n" + whole)  # not the last line: not a cut write, named
    with pytest.raises(SystemExit, match=r"s\.jsonl: line 2 is not JSON"):
        research.main(["summary", "--study", "s", "--baseline", "base"])


@pytest.mark.parametrize("tie", ["-0.01", "nan", "inf"])
def test_summary_refuses_a_tie_width_below_zero_or_not_a_number(research, study, tie, capsys):
    """``--tie -0.01`` counted a pair within 0.01 as a win and a loss at once (56/0/58 of
    study 57's 70 pairs), ``nan`` counted no pair at all (0/0/0)."""
    with pytest.raises(SystemExit):
        research.main(["summary", "--study", "s", "--baseline", "base", "--tie", tie])
    assert f"argument --tie: must be a number >= 0, got '{tie}'" in capsys.readouterr().err


def test_unseen_gives_each_variant_its_own_row(research, tmp_path, monkeypatch, capsys):
    """`unseen` pooled the check's lines of every variant of a study into one row: two variants
    of 1 (split, seed) each read as n = 2, their exclude - token differences averaged."""
    def line(variant, token, exclude):
        return {"variant": variant, "split": "a", "seed": 0, "validation": 0.8,
                "validation_unseen_token": token, "validation_unseen_exclude": exclude}
    (tmp_path / "s.jsonl").write_text(json.dumps(line("x", 0.5, 0.6)) + "\n" + json.dumps(line("y", 0.7, 0.6)) + "\n")
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    assert research.main(["unseen", "--study", "s"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert rows == ["| x | 1 | 0.800 | 0.500 | 0.600 | +0.1000 (0.000) | 1/0/0 |",
                    "| y | 1 | 0.800 | 0.700 | 0.600 | -0.1000 (0.000) | 0/0/1 |"], rows


def test_every_command_and_option_has_a_help_text(research, capsys):
    """`--help` listed `run` and `summary` without a word, and a dozen options (run's
    --study, --suite, --seeds, --out; summary's --baseline, ...) bare; --model said "at its
    defaults" where each variant's parameters are passed to it."""
    with pytest.raises(SystemExit):
        research.main(["--help"])
    listing = capsys.readouterr().out
    for command in ("run", "summary", "unseen", "held-out", "import-records"):
        assert re.search(rf"^    {command} +\S", listing, re.M), command
        with pytest.raises(SystemExit):
            research.main([command, "--help"])
        lines = capsys.readouterr().out.split("options:")[1].splitlines()[1:] + [""]
        # an option's help is on its line after 2+ spaces, or on the next, indented
        bare = [line.split()[0] for line, after in zip(lines, lines[1:], strict=False)
                if line.startswith("  --") and not re.search(r"\S  +\S", line) and not after.startswith(" " * 20)]
        assert not bare, (command, bare)
    with pytest.raises(SystemExit):
        research.main(["run", "--help"])
    assert "its defaults plus each variant's parameters" in " ".join(capsys.readouterr().out.split())


def test_run_seeds_a_reference_models_nested_random_state(research, tmp_path, monkeypatch):
    """``--model random_forest`` set a top-level ``random_state`` only, which the one-hot
    references (``EncodedClassifier``) do not have: the forest's ``estimator__random_state``
    stayed None, and two runs of one (split, seed) gave 0.8375 and 0.825 ID validation."""
    seen = []

    def fit_and_score(estimator, X, y, parts):
        seen.append(estimator.get_params()["estimator__random_state"])
        return {"validation": 0.5}
    monkeypatch.setattr(research, "fit_and_score", fit_and_score)
    assert research.main(["run", "--study", "t", "--suite", "smoke", "--splits", "car-cluster", "--seeds", "3",
                          "--model", "random_forest", "--variant", "rf:", "--out", str(tmp_path / "t.jsonl")]) == 0
    assert seen == [3]


def test_run_checks_a_reference_models_parameters_by_the_names_its_make_takes(research, tmp_path, monkeypatch):
    """``--model logistic_regression``'s names were checked against ``get_params()``
    (``estimator__C``), which ``make`` refuses (a TypeError at the first fit), while ``C``,
    which ``make`` takes, was refused as unknown: no reference hyperparameter could be set."""
    monkeypatch.setattr(research, "fit_and_score", lambda estimator, X, y, parts: {"validation": 0.5})
    argv = ["run", "--study", "t", "--suite", "smoke", "--splits", "car-cluster", "--model", "logistic_regression",
            "--out", str(tmp_path / "t.jsonl")]
    assert research.main([*argv, "--variant", "b:C=0.1,categorical_features=all"]) == 0
    with pytest.raises(SystemExit, match=r"--variant c: unknown parameter\(s\) \['estimator__C'\] of logistic_regression"):
        research.main([*argv, "--variant", "c:estimator__C=0.1"])


def test_a_bad_suite_file_is_named_as_the_suite(research, tmp_path):
    """A suite file that does not parse (a ValueError) was named as --model."""
    suite = tmp_path / "bad.yaml"
    suite.write_text("name: bad\nseeds: [0]\nsplits: []\nbogus: 1\n")
    with pytest.raises(SystemExit, match=r"^--suite: suite .*bad\.yaml: unknown keys \['bogus'\]"):
        research.main(["run", "--study", "t", "--suite", str(suite), "--variant", "a:",
                       "--out", str(tmp_path / "t.jsonl")])


@pytest.mark.parametrize("command", [["summary", "--baseline", "base"], ["held-out", "--baseline", "base"]])
def test_summaries_name_bad_seeds(research, study, command):
    with pytest.raises(SystemExit, match=r"--seeds: 'x' is not an integer"):
        research.main([command[0], "--study", "s", "--seeds", "x", *command[1:]])


@pytest.mark.parametrize(("results", "model", "message"), [
    ("nosuch", "tabmoe", r"--results: .*nosuch is not a results folder of tabmoe-bench run \(no .*runs\)"),
    ("smoke", "nosuch", r"no records of --model 'nosuch' --protocol 'fixed-budget' in .*runs"),
])
def test_import_records_names_a_folder_or_model_without_records(research, tmp_path, results, model, message):
    folder = research.RESULTS.parent / results if results == "smoke" else tmp_path / results
    out = tmp_path / "t.jsonl"
    with pytest.raises(SystemExit, match=message):
        research.main(["import-records", "--study", "t", "--variant", "x", "--results", str(folder),
                       "--model", model, "--protocol", "fixed-budget", "--out", str(out)])
    assert not out.exists()  # was an empty study file, in benchmarks/results/research/ by default


def test_summaries_say_which_of_a_repeated_line_they_keep(research, tmp_path, monkeypatch, capsys):
    """A (variant, split, seed) in two files listed in one ``--study`` (study 14 refitted two
    of study 13's baseline lines into its own file) is read once, the last line read: that
    was silent, so a repeat with other accuracies changed a table without a word."""
    def line(variant, validation):
        return {"variant": variant, "split": "a", "seed": 0, "validation": validation, "id_test": 0.8,
                "ood_test": 0.7, "fit_seconds": 1.0, "held_out_token": 0.5, "held_out_exclude": 0.5,
                "held_out_rest": 0.9, "held_out_rows": 10}
    (tmp_path / "one.jsonl").write_text(json.dumps(line("base", 0.8)) + "\n" + json.dumps(line("var", 0.9)) + "\n")
    (tmp_path / "two.jsonl").write_text(json.dumps(line("base", 0.7)) + "\n")
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    for command in ("summary", "held-out"):
        assert research.main([command, "--study", "one,two", "--baseline", "base"]) == 0
        out = capsys.readouterr()
        assert "base: 1 (split, seed) line(s) repeated, the last read kept (1 with other accuracies)" in out.err
    assert research.main(["summary", "--study", "one,two", "--baseline", "base"]) == 0
    assert "| var | 1 | 0.900 | 0.800 | 0.700 | +0.2000 (0.000) |" in capsys.readouterr().out  # two.jsonl's line


def test_summary_log_loss_column_is_over_the_pairs_that_have_it(research, tmp_path, monkeypatch, capsys):
    """A pair without a validation log loss (a validation class absent from training: 2 of
    studies 50-58's 140 pairs) blanked the column for the whole variant ("-")."""
    def line(variant, split, loss):
        return {"variant": variant, "split": split, "seed": 0, "validation": 0.8, "id_test": 0.8,
                "ood_test": 0.7, "fit_seconds": 1.0, "validation_log_loss": loss}
    lines = [line("base", "a", 0.5), line("base", "b", 0.5), line("base", "c", None),
             line("var", "a", 0.4), line("var", "b", 0.8), line("var", "c", None)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    assert research.main(["summary", "--study", "s", "--baseline", "base"]) == 0
    cells = {r.split("|")[1].strip(): r.strip("|").split("|")[-2].strip() for r in capsys.readouterr().out.splitlines()[2:]}
    assert cells["var"] == "+0.1000 (1 lower of 2)"


def test_a_baseline_missing_from_the_seeds_asked_says_so(research, study):
    """A --seeds filter that leaves no line said "no variant 'base' in []", as if the study had
    no such variant."""
    with pytest.raises(SystemExit, match=r"no variant 'base' among the lines of seeds 5 in s: .* are none"):
        research.main(["summary", "--study", "s", "--baseline", "base", "--seeds", "5"])
    with pytest.raises(SystemExit, match=r"no variant 'other' in s: its variants are \['base'\]"):
        research.main(["summary", "--study", "s", "--baseline", "other"])


def test_held_out_counts_the_lines_without_a_held_out_value(research, tmp_path, monkeypatch, capsys):
    """A (split, seed) with no eligible value has no held-out fields; `held-out` dropped its
    lines without a word, so a table's n could shrink unexplained."""
    def line(variant, split, held):
        extra = {"held_out_token": 0.5, "held_out_exclude": 0.6, "held_out_rest": 0.9, "held_out_rows": 10} if held else {}
        return {"variant": variant, "split": split, "seed": 0, "validation": 0.8, "id_test": 0.8,
                "ood_test": 0.7, "fit_seconds": 1.0, **extra}
    lines = [line("base", "a", True), line("base", "b", False), line("var", "a", True), line("var", "b", False)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(research, "RESULTS", tmp_path)
    assert research.main(["held-out", "--study", "s", "--baseline", "base"]) == 0
    err = capsys.readouterr().err
    assert "2 line(s) without a held-out value, left out: [('base', 'b'), ('var', 'b')]" in err, err


@pytest.mark.parametrize(("model", "good", "typo"), [("xgboost", "max_depth", "max_dept"),
                                                     ("lightgbm", "num_leaves", "num_leafs")])
def test_run_refuses_a_misspelt_parameter_of_a_model_that_takes_any_keyword(research, tmp_path, monkeypatch,
                                                                           model, good, typo):
    """XGBoost's and LightGBM's constructors take any keyword: ``max_dept=3`` passed the
    check, fitted the defaults and was recorded as ``{"max_dept": 3}``; LightGBM stopped
    at the misspelt variant's first fit, after the other variants were written."""
    pytest.importorskip(model)
    monkeypatch.setattr(research, "fit_and_score", lambda estimator, X, y, parts: {"validation": 0.5})
    argv = ["run", "--study", "t", "--suite", "smoke", "--splits", "car-cluster", "--model", model,
            "--out", str(tmp_path / "t.jsonl")]
    with pytest.raises(SystemExit, match=rf"--variant b: unknown parameter\(s\) \['{typo}'\] of {model}"):
        research.main([*argv, "--variant", "a:", "--variant", f"b:{typo}=3"])
    assert not (tmp_path / "t.jsonl").exists()
    assert research.main([*argv, "--variant", f"b:{good}=3"]) == 0


def _lines(tmp_path, monkeypatch, research, *lines: dict) -> None:
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    monkeypatch.setattr(research, "RESULTS", tmp_path)


def test_summary_prints_a_dash_for_a_part_the_study_lacks(research, tmp_path, monkeypatch, capsys):
    """The paper simulation's study (guard-paper-sim) has no validation or ID-test part: its
    cells printed "nan" and "+nan (nan)" where W/T/L printed "-". A part some pairs lack is
    over those that have it, said (" of k"), as the log-loss cell is."""
    def line(variant, split, ood, validation=None):
        return {"variant": variant, "split": split, "seed": 0, "validation": validation, "id_test": None,
                "ood_test": ood, "fit_seconds": 1.0}
    _lines(tmp_path, monkeypatch, research, line("base", "a", 0.5), line("base", "b", 0.5),
           line("var", "a", 0.6), line("var", "b", 0.8), line("part", "a", 0.6, 0.9), line("part", "b", 0.6))
    assert research.main(["summary", "--study", "s", "--baseline", "base", "--by-split"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out, out
    assert "| var | 2 | - | - | 0.700 | - | - | +0.2000 (0.100) | 2/0/0 | 1.0 / 1 |" in out, out
    assert "| part | 2 | 0.900 of 1 | - | 0.600 | - | - | +0.1000 (0.000) |" in out, out  # base has none


@pytest.mark.parametrize("command", ["summary", "held-out"])
def test_a_variant_without_a_pair_is_named_not_dropped_silently(research, tmp_path, monkeypatch, capsys, command):
    """A variant with no (split, seed) in common with the baseline (run on other splits or
    seeds) was left out of the table without a word, as if it had not been run."""
    held = {"held_out_token": 0.5, "held_out_exclude": 0.6, "held_out_rest": 0.9, "held_out_rows": 10}
    def line(variant, split):
        return {"variant": variant, "split": split, "seed": 0, "validation": 0.8, "id_test": 0.8,
                "ood_test": 0.7, "fit_seconds": 1.0, **held}
    _lines(tmp_path, monkeypatch, research, line("base", "a"), line("var", "a"), line("lonely", "c"))
    assert research.main([command, "--study", "s", "--baseline", "base"]) == 0
    out = capsys.readouterr()
    assert "| var" in out.out and "lonely" not in out.out
    assert "lonely: left out, no pair with the baseline" in out.err and "splits ['c']" in out.err, out.err
