"""Two worker processes tune ONE study in a real PostgreSQL server: every trial is stored
once, none is lost, none is run twice, and the budget is the study's total.

Needs a server: .ci/run installs Debian's postgresql, starts it on loopback and exports
TABMOE_TEST_POSTGRES_URL; without it the test skips.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid

import pytest

pytest.importorskip("optuna")  # extra "tuning"

import optuna

from tabmoe.tuning import open_storage

from .bench_helpers import postgres_url

N_TRIALS = 12

WORKER = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path

    import optuna
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    from tabmoe.tuning import tune

    url, study, worker, barrier = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])  # n_trials: argv[5]


    class SlowLogisticRegression(LogisticRegression):
        def fit(self, X, y):  # long enough for the two workers to interleave
            time.sleep(0.3)
            return super().fit(X, y)


    X, y = make_classification(n_samples=300, n_features=8, random_state=0)
    (barrier / f"ready-{worker}").touch()
    while len(list(barrier.glob("ready-*"))) < 2:  # start together
        time.sleep(0.05)
    ran = []
    result = tune(
        SlowLogisticRegression(max_iter=200), X[:200], y[:200],
        {"C": optuna.distributions.FloatDistribution(1e-3, 1e3, log=True)},
        validation=(X[200:], y[200:]), n_trials=int(sys.argv[5]), storage=url, study_name=study,
        random_state=0, sampler=optuna.samplers.TPESampler(seed=worker),
        trial_attrs=lambda est: ran.append(est.C) or {"C_fitted": est.C},
    )
    print(json.dumps({"pid": os.getpid(), "ran": ran, "best": result.best_score}))
    """
)


def test_two_workers_share_one_study(tmp_path):
    url = postgres_url()
    if url is None:
        pytest.skip("no PostgreSQL server (TABMOE_TEST_POSTGRES_URL, set by .ci/run)")
    study_name = f"shared-{uuid.uuid4().hex[:10]}"
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    workers = [
        subprocess.Popen([sys.executable, str(script), url, study_name, str(i), str(tmp_path), str(N_TRIALS)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    outputs = []
    for proc in workers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        outputs.append(json.loads(out.strip().splitlines()[-1]))

    study = optuna.load_study(study_name=study_name, storage=open_storage(url))
    trials = study.get_trials(deepcopy=False)
    numbers = [t.number for t in trials]
    # Nothing lost: every trial finished; nothing duplicated: one row per trial number.
    assert sorted(numbers) == list(range(len(trials)))
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in trials)
    # The budget is the study's total; two workers may each start one trial at the last moment.
    assert N_TRIALS <= len(trials) <= N_TRIALS + 1
    # Each worker's own trials are exactly the study's trials that name it.
    pids = {o["pid"] for o in outputs}
    by_worker = {pid: sorted(t.user_attrs["C_fitted"] for t in trials if t.user_attrs["worker"].endswith(f":{pid}"))
                 for pid in pids}
    for o in outputs:
        assert sorted(o["ran"]) == by_worker[o["pid"]]
        assert o["ran"], "each worker ran trials"
    assert sum(len(o["ran"]) for o in outputs) == len(trials)
    # Each trial's stored parameter is the one its worker fitted (no cross-talk).
    assert all(t.params["C"] == t.user_attrs["C_fitted"] for t in trials)
    assert max(o["best"] for o in outputs) == study.best_value
    optuna.delete_study(study_name=study_name, storage=open_storage(url))
