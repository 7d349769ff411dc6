"""``python -m tabmoe.demo``: bad arguments are argparse errors (exit 2, one line naming the
argument), not tracebacks from inside the run."""

import pytest

from tabmoe.demo import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--epochs", "0"], "argument --epochs: must be at least 1, got 0"),
        (["--seed", "x"], "argument --seed: not an integer: 'x'"),
        # numpy's RandomState refused these with a traceback after the argument parsing
        (["--seed", "-1"], "argument --seed: must be in [0, 4294967295], got -1"),
        (["--seed", "4294967296"], "argument --seed: must be in [0, 4294967295], got 4294967296"),
    ],
)
def test_bad_arguments_exit_2_naming_the_argument(capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_help_states_the_defaults(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help lines
    assert "default: 4951, the authors' first seed" in text
    assert "default: 60; the paper: 200" in text
