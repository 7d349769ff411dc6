"""n_jobs: torch threads scoped to fit / predict, the caller's setting restored."""

import os
import threading
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from joblib import Parallel, delayed, parallel_config

from tabmoe import TabularMoEClassifier
from tabmoe.nn import _threads


@pytest.fixture
def restore_threads():
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _run_in_threads(*targets, timeout: float) -> None:
    """Start a thread for each target, join them all; one still running after ``timeout``
    (a deadlock) fails the test instead of hanging the suite."""
    threads = [threading.Thread(target=target) for target in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads)


def test_resolve_n_jobs_follows_scikit_learn():
    assert _threads.resolve_n_jobs(None) == 1
    assert _threads.resolve_n_jobs(2) == 2
    assert _threads.resolve_n_jobs(-1) >= 1
    with parallel_config(n_jobs=3):
        assert _threads.resolve_n_jobs(None) == 3
    # torch.set_num_threads raised "Overflow when unpacking long", naming no parameter
    with pytest.raises(ValueError, match=r"n_jobs must be below 2\*\*31"):
        _threads.resolve_n_jobs(10**12)


def test_fit_and_predict_use_n_jobs_and_restore_the_callers_setting(monkeypatch, restore_threads):
    torch.set_num_threads(2)
    seen = []
    original = _threads.torch_threads

    def spy(n):
        seen.append((n, torch.get_num_threads()))
        return original(n)

    monkeypatch.setattr(_threads, "torch_threads", spy)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 60), "b": rng.normal(size=60)})
    y = np.where(X["a"] == "x", "p", "q")
    clf = TabularMoEClassifier(max_epochs=2, device="cpu", random_state=0).fit(X, y)
    clf.predict_proba(X)
    TabularMoEClassifier(max_epochs=2, device="cpu", random_state=0, n_jobs=2).fit(X, y)
    assert seen[0] == (1, 2) and (2, 2) in seen
    assert torch.get_num_threads() == 2


def test_torch_threads_inside_the_block():
    before = torch.get_num_threads()
    with _threads.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_bad_n_jobs_is_named():
    X = pd.DataFrame({"a": list("xyxy" * 5)})
    with pytest.raises(ValueError, match="n_jobs"):
        TabularMoEClassifier(n_jobs="many").fit(X, list("pqpq" * 5))
    with pytest.raises(ValueError, match="n_jobs"):  # joblib's "n_jobs == 0 has no meaning", at fit
        TabularMoEClassifier(n_jobs=0).fit(X, list("pqpq" * 5))


@pytest.mark.parametrize("bad", ["many", 0, 1.5])
def test_a_bad_n_jobs_set_after_fit_is_named_by_predict_and_adapt(restore_threads, bad):
    """fit validates n_jobs, but set_params after it does not: predict, explain and adapt
    failed in joblib with "'<' not supported between instances of 'str' and 'int'"."""
    X = pd.DataFrame({"a": list("xyxy" * 5)})
    clf = TabularMoEClassifier(max_epochs=1, device="cpu", random_state=0).fit(X, list("pqpq" * 5))
    expected = clf.predict_proba(X)
    clf.set_params(n_jobs=bad)
    threads = torch.get_num_threads()
    for call in (clf.predict_proba, clf.explain, lambda Z: clf.adapt(Z, max_epochs=1)):
        with pytest.raises(ValueError, match=rf"^n_jobs must be an integer other than 0 .* got {bad!r}"):
            call(X)
        assert torch.get_num_threads() == threads
    np.testing.assert_array_equal(clf.set_params(n_jobs=None).predict_proba(X), expected)


def test_seeded_blocks_in_threads_take_turns():
    # A second thread's seeded block used to reseed torch's process-wide generator in the
    # middle of the first's: the first drew from the second's stream.
    from tabmoe.nn.trainer import seeded

    cpu = torch.device("cpu")
    with seeded(0, cpu):
        expected = torch.rand(4)
    first_in, second_in, first_done = threading.Event(), threading.Event(), threading.Event()
    drawn = {}

    def first():
        with seeded(0, cpu):
            first_in.set()
            second_in.wait(timeout=0.5)  # set at once without the lock; with it, never in here
            drawn["first"] = torch.rand(4)
            first_done.set()

    def second():
        assert first_in.wait(timeout=30)
        with seeded(1, cpu):
            second_in.set()
            first_done.wait(timeout=0.5)

    _run_in_threads(first, second, timeout=30)
    assert torch.equal(drawn["first"], expected)


def test_fits_in_threads_give_the_sequential_fits_probabilities():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.choice(list("xyz"), 150), "b": rng.normal(size=150)})
    y = np.where((X["a"] == "x") | (X["b"] > 0.5), "p", "q")
    params = {"max_epochs": 3, "dropout": 0.1, "device": "cpu", "random_state": 0}
    expected = TabularMoEClassifier(**params).fit(X, y).predict_proba(X)
    torch.manual_seed(123)
    caller_state = torch.random.get_rng_state()
    with parallel_config(backend="threading"):
        fitted = Parallel(n_jobs=2)(
            delayed(TabularMoEClassifier(**params).fit)(X, y) for _ in range(2)
        )
    for clf in fitted:
        np.testing.assert_array_equal(clf.predict_proba(X), expected)
    assert torch.equal(torch.random.get_rng_state(), caller_state)


def _overlapping_blocks(first_block, second_block) -> tuple[int, int]:
    """Run ``first_block()`` in a thread and ``second_block()`` in another, entered while the
    first runs and left after it ends: (the threads inside the second after the first ended,
    those a new thread reads after both)."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    inside = {}

    def first():
        with first_block():
            first_in.set()
            assert second_in.wait(timeout=30)
        first_out.set()

    def second():
        assert first_in.wait(timeout=30)
        with second_block():
            second_in.set()
            assert first_out.wait(timeout=30)
            inside["second"] = torch.get_num_threads()

    _run_in_threads(first, second, timeout=60)
    # OpenMP: a thread that has run a parallel region (pytest's) keeps its own setting; the
    # one that a new thread (or a main thread that has run none) reads is the last one set
    fresh = []
    reader = threading.Thread(target=lambda: fresh.append(torch.get_num_threads()))
    reader.start()
    reader.join(timeout=30)
    return inside["second"], fresh[0]


def test_overlapping_blocks_in_threads_restore_the_callers_setting(restore_threads):
    """A block entered in a thread while another ran read that block's n as its "before"
    (torch's setting is process-wide) and, ending last, left it: two fits in threads with
    n_jobs=1 and n_jobs=2 left a caller's 2 threads at 1."""
    torch.set_num_threads(2)
    inside, fresh = _overlapping_blocks(lambda: _threads.torch_threads(1), lambda: _threads.torch_threads(3))
    assert inside == 3  # the first block's end did not take the second's threads
    assert fresh == 2 and torch.get_num_threads() == 2  # (a new thread read 1)
    with _threads.torch_threads(1):  # nested in one thread: the outer block's setting after the inner
        with _threads.torch_threads(3):
            assert torch.get_num_threads() == 3
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2


def test_the_harness_thread_limit_overlapping_a_fit_in_a_thread_restores_the_callers_setting(restore_threads):
    """tabmoe.bench.limited_threads scoped torch's threads by a second routine, without
    torch_threads' count of running blocks: entered in a thread while a fit's block ran, it
    read that block's n as its "before" and, ending last, left it (a caller's 2 threads at 1),
    as torch_threads did before it counted them. It is one routine now."""
    from tabmoe.bench import limited_threads

    torch.set_num_threads(2)  # a fit with n_jobs=1, then the harness' run with --threads 3
    inside, fresh = _overlapping_blocks(lambda: _threads.torch_threads(1), lambda: limited_threads(3))
    assert fresh == 2 and torch.get_num_threads() == 2


def test_a_cluster_backend_does_not_set_this_machines_threads():
    """dask's joblib backend counts every core of its cluster whatever n_jobs says: under
    parallel_config(backend="dask") on a 16-core cluster, n_jobs=2 (and None) ran 16 torch
    threads in the caller's process (a search's refit included)."""
    from joblib import cpu_count, register_parallel_backend
    from joblib.parallel import ThreadingBackend

    class ClusterBackend(ThreadingBackend):  # dask's rule, without a cluster
        def effective_n_jobs(self, n_jobs):
            return 64

    register_parallel_backend("tabmoe-test-cluster", ClusterBackend)
    with parallel_config(backend="tabmoe-test-cluster"):
        assert [_threads.resolve_n_jobs(n) for n in (None, 1, 2, -1)] == [1, 1, 2, cpu_count()]
    with parallel_config(backend="tabmoe-test-cluster", n_jobs=3):
        assert _threads.resolve_n_jobs(None) == 3
    with parallel_config(backend="threading", n_jobs=3):  # joblib's own backends: its count, as before
        assert _threads.resolve_n_jobs(None) == 3 and _threads.resolve_n_jobs(-1) == cpu_count()


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="no fork on this platform")
def test_a_child_forked_while_a_thread_fits_does_not_wait_for_it():
    """A child forked (multiprocessing's "fork") while another thread of the parent held
    torch's state lock or a thread block waited forever on locks no thread of it would
    release: its first fit hung."""
    import multiprocessing

    from tabmoe._stack import _WARNINGS_LOCK, catch_warnings
    from tabmoe.nn.trainer import _TORCH_STATE_LOCK, seeded

    holding, done = threading.Event(), threading.Event()

    def fitting():  # a fit's locks, held for the whole of the fork
        with _TORCH_STATE_LOCK, _threads.torch_threads(1), _threads._BLOCKS_LOCK, _WARNINGS_LOCK:
            holding.set()
            done.wait(timeout=120)

    def child():
        with _threads.torch_threads(1), seeded(0, torch.device("cpu")), catch_warnings():
            torch.rand(1)
        os._exit(0 if _threads._BLOCKS["running"] == 0 else 3)

    thread = threading.Thread(target=fitting)
    thread.start()
    try:
        assert holding.wait(timeout=30)
        process = multiprocessing.get_context("fork").Process(target=child)
        process.start()
        process.join(timeout=60)
        hung = process.is_alive()
        if hung:
            process.kill()
            process.join(timeout=30)
    finally:
        done.set()
        thread.join(timeout=30)
    assert not hung and process.exitcode == 0


def _beside_a_warning_block(second, recwarn) -> None:
    """Run ``second(second_in, first_out)`` in a thread once another thread is inside a
    ``warnings_about`` block (an eval_set read), which waits up to 1 s for ``second_in``
    (set at once where the two blocks overlap; never, where they take turns) and then sets
    ``first_out``; then check that the process's warnings work as before."""
    from tabmoe._stack import warnings_about

    filters = list(warnings.filters)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with warnings_about("first"):
            first_in.set()
            second_in.wait(timeout=1)
        first_out.set()

    def after_first_in():
        assert first_in.wait(timeout=30)
        second(second_in, first_out)

    _run_in_threads(first, after_first_in, timeout=60)
    assert warnings.filters == filters
    warnings.warn("after the blocks", UserWarning, stacklevel=1)
    assert any("after the blocks" in str(w.message) for w in recwarn)


def test_warning_blocks_in_threads_leave_the_process_warnings_working(recwarn):
    """warnings.catch_warnings restores at its end what the filters were at its start; two
    warnings_about blocks (fits with eval_set) in threads, overlapping without nesting, left
    the second's recording in place: every later warning of the process was lost."""
    from tabmoe._stack import warnings_about

    def second(second_in, first_out):
        with warnings_about("second"):
            second_in.set()
            assert first_out.wait(timeout=30)

    _beside_a_warning_block(second, recwarn)


def test_the_unlabeled_rows_error_check_takes_turns_with_other_warning_blocks(recwarn):
    """fit's check of which of X and X_unlabeled an error is about refits the tokenizer on X
    alone under warnings.catch_warnings (to hide X's column warnings a second time): without
    tabmoe's lock, a fit's eval_set block in another thread ending inside it left that
    block's recording in place, and every later warning of the process was lost."""
    errors = []

    def second(second_in, first_out):
        class Tokenizer:  # X and X_unlabeled together raise; X alone fits, while `first` is about
            def fit(self, rows):
                if len(rows) > 4:
                    raise ValueError("Input X contains infinity in column 'b'.")
                second_in.set()
                assert first_out.wait(timeout=30)
                return self

        clf = TabularMoEClassifier()
        clf._new_tokenizer = Tokenizer
        frame = pd.DataFrame({"b": [1.0, 2.0, 3.0, 4.0]})
        try:
            clf._fitted_tokenizer(frame, frame.assign(b=np.inf))
        except ValueError as exc:
            errors.append(str(exc))

    _beside_a_warning_block(second, recwarn)
    assert errors == ["X_unlabeled contains infinity in column 'b'."]


def test_tunes_in_threads_restore_the_callers_optuna_verbosity():
    """tune sets Optuna's verbosity, which is process-wide, to WARNING while it runs: a tune
    started in a thread while another ran read that WARNING as the caller's and, ending last,
    restored it (a caller's INFO was left at WARNING). The last of overlapping tunes restores
    the verbosity from before the first."""
    import optuna

    from tabmoe.baselines.reference import logistic_regression
    from tabmoe.tuning import tune

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"b": rng.normal(size=60)})
    y = (X["b"] > 0).astype(int)
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def factory(entered, wait_for):
        def make(**params):  # the first fit of each tune waits inside it for the other tune
            entered.set()
            wait_for.wait(timeout=30)
            return logistic_regression(**params)
        return make

    def first():
        tune(factory(first_in, second_in), X, y, {"C": [1.0]}, n_trials=1, cv=2, random_state=0)
        first_out.set()

    def second():
        assert first_in.wait(timeout=30)
        tune(factory(second_in, first_out), X, y, {"C": [1.0]}, n_trials=1, cv=2, random_state=0)

    before = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.INFO)
    try:
        _run_in_threads(first, second, timeout=120)
        assert first_out.is_set() and second_in.is_set()  # both ran, the first ending first
        assert optuna.logging.get_verbosity() == optuna.logging.INFO
    finally:
        optuna.logging.set_verbosity(before)


def test_tune_takes_turns_with_other_warning_blocks(recwarn):
    """tune reads a suggest function's parameters on a throwaway trial under
    warnings.catch_warnings (to hide Optuna's warnings there) without tabmoe's lock: ending
    inside a fit's eval_set block in another thread, it left that block's recording in place,
    and every later warning of the process was lost."""
    from tabmoe.baselines.reference import logistic_regression
    from tabmoe.tuning import tune

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"b": rng.normal(size=60)})
    y = (X["b"] > 0).astype(int)

    def second(second_in, first_out):
        def suggest(trial):  # its first call is the probe
            second_in.set()
            assert first_out.wait(timeout=30)
            return {"C": trial.suggest_float("C", 0.1, 1.0)}

        tune(logistic_regression, X, y, suggest, n_trials=1, cv=2, random_state=0)

    _beside_a_warning_block(second, recwarn)
