"""The one training loop shared by every torch model in tabmoe.

A model plugs in through a ``loss_fn(module, batch) -> (weighted_loss_sum, weight_sum)``
callable; the trainer owns batching (index tensors sliced directly, no DataLoader),
shuffling from a seeded ``torch.Generator``, the optimizer (AdamW), early stopping on a
validation loss with best weights restored, devices, mixed precision, ``torch.compile``
and progress.
"""

from __future__ import annotations

import contextlib
import copy
import math
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

from .._stack import catch_warnings, free_in_forked_children, user_stacklevel
from ._config_checks import check_config
from ._lr_schedules import cosine_scheduler, plateau_scheduler, warmup_scheduler
from ._progress import fit_summary, tqdm
from ._soup import kept_top, soup
from ._threads import caller_default_device_off

Batch = Mapping[str, Tensor]
LossFn = Callable[[nn.Module, Batch], tuple[Tensor, Tensor]]


#: What ``device`` takes, for the errors of :func:`resolve_device`.
_DEVICES = "Use 'auto' (CUDA when available), 'cpu', 'cuda', 'cuda:N' or 'mps', or a torch.device."


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; anything else is passed to torch, and a
    device that this machine lacks (CUDA, MPS, or another backend whose ``is_available()``
    says no) or ``"meta"`` is refused here rather than at the first ``.to(device)``."""
    if isinstance(device, str) and device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device={device!r} is not a valid torch device: {exc}. {_DEVICES}") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        why = ("this torch is a CPU-only build (docs/installation.md installs a CUDA one)"
               if torch.version.cuda is None and torch.version.hip is None
               else "this torch sees no GPU (check the driver and CUDA_VISIBLE_DEVICES)")
        raise ValueError(
            f"device={device!r} was requested but CUDA is not available: {why}. Set "
            "device='cpu', or 'auto' (CUDA where there is one)."
        )
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise ValueError(
            f"device={device!r} was requested but only {count} CUDA device(s) are available: "
            f"use 'cuda:0' to 'cuda:{count - 1}'."
        )
    if resolved.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device={device!r} was requested but MPS is not available. Set device='cpu' or 'auto'.")
    if resolved.type == "meta":  # torch's shapes-only device: training on it failed in AdamW
        raise ValueError(f"device={device!r} holds no data: a model cannot be trained or run on it.")
    if resolved.type not in ("cpu", "cuda", "mps"):
        # xpu, hpu, xla, ...: torch's AssertionError or ModuleNotFoundError at the first
        # .to(device), after the tokenizer was fitted. An empty tensor there is the test (a
        # backend without a torch.<type> module, as torch_xla's "xla", passes when loaded).
        try:
            torch.empty(0, device=resolved)
        except Exception:
            raise ValueError(f"device={device!r} was requested but this torch has no {resolved.type!r} device available.") from None
    return resolved


#: Held by :func:`seeded` and :func:`float32_default`: torch's generators and default dtype
#: are process-wide, so two fits in threads (a search under joblib's threading backend) would
#: reseed and draw from each other's streams and restore each other's states; they take
#: turns instead (and a child forked while one ran does not wait for it: free_in_forked_children).
_TORCH_STATE_LOCK = threading.RLock()
free_in_forked_children(_TORCH_STATE_LOCK)


@contextlib.contextmanager
def seeded(seed: int, device: torch.device) -> Iterator[None]:
    """Seed the RNGs a fit draws from (the CPU's: init; ``device``'s: dropout) inside the
    block without leaking state out: every RNG the block may change is restored after it.
    One thread at a time runs such a block (``_TORCH_STATE_LOCK``), with float32 as torch's
    default dtype (:func:`float32_default`): networks are built and trained in float32; and
    with autograd on, whatever the caller's mode (a fit under ``torch.no_grad()`` failed
    with torch's "element 0 of tensors does not require grad"), and the CPU as the default
    device (``caller_default_device_off`` in ``tabmoe.nn._threads``): networks are built on the
    CPU, from the CPU's seeded RNG, then moved to ``device``."""
    with (_TORCH_STATE_LOCK, float32_default(), caller_default_device_off(), torch.inference_mode(False),
          torch.enable_grad(), contextlib.ExitStack() as forks):
        forks.enter_context(_lazy_cuda_seed_kept())
        forks.enter_context(forked_rngs(device))
        torch.default_generator.manual_seed(seed)  # not torch.manual_seed: it seeds every GPU
        if device.type == "cuda":
            with torch.cuda.device(device):
                torch.cuda.manual_seed(seed)
        elif device.type == "mps":
            torch.mps.manual_seed(seed)
        yield


@contextlib.contextmanager
def float32_default() -> Iterator[None]:
    """torch's default dtype float32 inside the block, the caller's after it: a caller's
    ``torch.set_default_dtype(torch.float64)`` built float64 networks, whose initial weights
    (drawn in float64) and training differed from the same ``random_state``'s float32 fit.
    One thread at a time (``_TORCH_STATE_LOCK``)."""
    with _TORCH_STATE_LOCK:
        before = torch.get_default_dtype()
        torch.set_default_dtype(torch.float32)
        try:
            yield
        finally:
            torch.set_default_dtype(before)


@contextlib.contextmanager
def _lazy_cuda_seed_kept() -> Iterator[None]:
    """The CUDA seed queued before CUDA starts, as it was before the block. While CUDA is
    not initialised, ``torch.manual_seed`` (pytorch-tabnet calls it) does not seed the GPUs
    but queues a seed for them, replacing the caller's: a CPU fit on a GPU machine made
    every GPU start from TabNet's seed instead of the caller's ``torch.manual_seed``. Those
    GPUs are not forked by :func:`seeded` (forking would start CUDA), so the queue is put
    back; if the block started CUDA, the queue has run and there is nothing to put back."""
    tracker = getattr(torch.cuda, "_lazy_seed_tracker", None)  # private to torch: optional
    if tracker is None or torch.cuda.is_initialized():
        yield
        return
    before = dict(vars(tracker))
    try:
        yield
    finally:
        if not torch.cuda.is_initialized():
            vars(tracker).update(before)


@contextlib.contextmanager
def forked_rngs(device: torch.device) -> Iterator[None]:
    """Every RNG a block on ``device`` may draw from (``_rng_devices``, the CPU's) restored after it."""
    with contextlib.ExitStack() as forks:
        for device_type, devices in _rng_devices(device).items():
            forks.enter_context(torch.random.fork_rng(devices, device_type=device_type))
        yield


def _rng_devices(device: torch.device) -> dict[str, list]:
    """Per device type, the devices whose RNG :func:`seeded` restores: ``device`` and, as
    code in the block may call ``torch.manual_seed`` (pytorch-tabnet does), which seeds
    every device, every initialised CUDA device and the MPS device."""
    cuda = device.type == "cuda" or torch.cuda.is_initialized()
    devices = {"cuda": list(range(torch.cuda.device_count())) if cuda else []}
    if torch.backends.mps.is_available():
        devices["mps"] = ["mps"]
    return devices


def param_groups(module: nn.Module, weight_decay: float, embedding_weight_decay: float = 0.0) -> list[dict]:
    """AdamW groups: no weight decay on biases, normalisation layers and embeddings.

    This is the rule of rtdl-revisiting-models (Gorishniy et al. 2021), used for every model.
    Embeddings are the ``nn.Embedding`` modules and every parameter whose name holds
    ``embed`` (rtdl's ``cls_embedding`` and ``cont_embeddings``, TabTransformer's per-column
    ``shared_category_embed``, tabmoe's ``column_embedding``).
    ``embedding_weight_decay`` > 0 gives the weights of the ``nn.Embedding`` modules a group
    of their own with that decay: the L2 shrinkage a one-hot logistic regression puts on its
    coefficients. In ``TabularMoE`` that is the token table and, with ``linear_term``, the
    linear term's table; positional parameters such as the column embedding stay undecayed.
    """
    no_decay_types = (nn.LayerNorm, nn.BatchNorm1d, nn.Embedding)
    no_decay: set[int] = set()
    for submodule in module.modules():
        if isinstance(submodule, no_decay_types):
            no_decay.update(id(p) for p in submodule.parameters(recurse=False))
    for name, p in module.named_parameters():
        if name.endswith("bias") or "embed" in name:
            no_decay.add(id(p))
    tables: set[int] = set()
    if embedding_weight_decay > 0:
        tables = {id(m.weight) for m in module.modules() if isinstance(m, nn.Embedding)}
    params = [p for p in module.parameters() if p.requires_grad]
    decay = [p for p in params if id(p) not in no_decay]
    other = [p for p in params if id(p) in no_decay and id(p) not in tables]
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": other, "weight_decay": 0.0},
    ]
    if tables:
        groups.append({"params": [p for p in params if id(p) in tables], "weight_decay": embedding_weight_decay})
    return groups


@dataclass
class TrainerConfig:
    """Hyperparameters of the training loop. ``batch_size`` counts rows."""

    max_epochs: int = 200
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.0
    # AdamW's decay on the nn.Embedding tables (0: none, rtdl's rule); see param_groups
    embedding_weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-7  # Keras' Adam epsilon, as in the paper
    early_stopping: bool = False
    n_iter_no_change: int = 10
    tol: float = 1e-4
    # Keras's EarlyStopping(start_from_epoch=k): early stopping does not watch the hold-out in the
    # first k epochs (its loss is still recorded and read by lr_decay_patience), so the weights
    # kept come from epoch k + 1 on; a divergence within those k epochs raises, as without it
    start_from_epoch: int = 0
    # AutoGluon's AdaptiveES: patience n_iter_no_change + round(rate x (best epoch - 1)); the
    # estimator's n_iter_no_change="auto" sets 10 and 0.3 (studies 59, 75)
    patience_rate: float = 0.0
    # Patience counts only once the best validation loss is below this (a network on a plateau
    # at the class prior is not stopped there; study 71); None: from the first watched epoch
    watch_below: float | None = None
    # Keras's restore_best_weights: False keeps the last epoch's weights when early stopping
    # ends the fit, as HistGradientBoosting does (the best are still restored after a
    # divergence); best_epoch is then the last epoch
    restore_best_weights: bool = True
    # Research-only (study 74, _soup.py): the weights kept average the best epoch's with the
    # next soup_top - 1 best by validation loss, all (soup_greedy=False) or greedily; 1: none
    soup_top: int = 1
    soup_greedy: bool = True
    # ReduceLROnPlateau: after this many epochs without a loss improvement of ``tol`` the
    # learning rate is multiplied by ``lr_decay_factor``; None: a constant learning rate
    lr_decay_patience: int | None = None
    lr_decay_factor: float = 0.2
    # An exponential moving average of the weights, updated after every step with this
    # decay, is what is validated, kept and returned; None: the weights themselves
    ema_decay: float | None = None
    # Rescale each step's gradients to at most this total L2 norm (torch's clip_grad_norm_);
    # None: no clipping
    max_grad_norm: float | None = None
    # The learning rate rises linearly over the steps of the first this many epochs, from
    # lr / steps to lr (torch's LinearLR, stepped after every step); 0: no warm-up
    lr_warmup_epochs: int = 0
    # Cosine annealing from lr to 0 over the steps of max_epochs epochs (torch's
    # CosineAnnealingLR, stepped after every step); research-only (study 65)
    lr_cosine: bool = False
    # The loss_fn's sum is over this many ensemble members' losses (MemberLoss): the epoch's
    # train_loss, recorded and shown on the progress bar, is their mean
    n_members: int = 1
    # Validation batches hold max(batch_size, 1024) rows, at most this many (None: no cap)
    max_eval_rows: int | None = None
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    seed: int = 0
    verbose: int = 0
    mixed_precision: bool = False  # bf16 autocast on CUDA or the CPU (see autocast)
    compile: bool = False  # torch.compile the training step's loss (see compile_loss)
    description: str = "training"


def autocast(enabled: bool, device: torch.device | str) -> contextlib.AbstractContextManager:
    """bf16 autocast on CUDA or the CPU when ``enabled``; a no-op otherwise. ``device`` may
    be given as text (``TrainerConfig(device="cuda")``), as everywhere else in the trainer.

    Matmuls and linear layers run in bf16, reductions (softmax, layer norm, losses) in
    float32. On a CPU with native bf16 (AVX512-BF16) it made tabmoe's epochs ~12% faster
    (docs/guide/training.md); without it, bf16 is emulated and slower.
    """
    device = torch.device(device)  # a str has no .type: "'str' object has no attribute 'type'"
    if enabled and device.type in ("cuda", "cpu"):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


#: torch's exceptions of a failing device (AcceleratorError: not in every torch >= 2.6) and
#: the messages of CUDA runtime errors, which torch also raises as plain RuntimeErrors.
DEVICE_ERRORS = tuple(
    kind
    for kind in (torch.cuda.OutOfMemoryError, getattr(torch, "AcceleratorError", None))
    if kind is not None
)
DEVICE_ERROR_MESSAGES = ("CUDA error", "device-side assert")


def _device_failure(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from or while handling, is the
    device's rather than the compiler's: out of memory (an uncompiled retry needs more),
    or a CUDA / accelerator runtime error (after a device-side assert the context is
    unusable, so a retry would fail again with a more confusing error)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DEVICE_ERRORS) or any(m in str(exc) for m in DEVICE_ERROR_MESSAGES):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def compile_loss(loss_fn: LossFn) -> LossFn:
    """``loss_fn`` through ``torch.compile`` with dynamic shapes (one graph serves every
    batch size, the last short batch of an epoch included), so that the forward pass and,
    through AOTAutograd, its backward run as generated kernels. The module stays a plain
    ``nn.Module``: only this call of it is compiled. Compilation is lazy: it happens (and
    may fail) at the first call."""

    def loss(module: nn.Module, batch: Batch) -> tuple[Tensor, Tensor]:
        return loss_fn(module, batch)

    return torch.compile(loss, dynamic=True)


def make_adamw(module: nn.Module, cfg: TrainerConfig) -> torch.optim.Optimizer:
    """AdamW over :func:`param_groups`; the fused kernel where torch has one (CPU and CUDA),
    which for small models removes most of the per-step optimizer overhead."""
    groups = param_groups(module, cfg.weight_decay, cfg.embedding_weight_decay)
    try:
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps, fused=True)
    except (RuntimeError, ValueError):
        return torch.optim.AdamW(groups, lr=cfg.lr, betas=cfg.betas, eps=cfg.eps)


@dataclass
class TrainResult:
    """What one call of :meth:`Trainer.fit` did."""

    history: list[dict] = field(default_factory=list)
    best_epoch: int | None = None
    n_steps: int = 0
    stopped_early: bool = False
    # the weights stopped being finite and an earlier epoch's, the best, were kept (warned)
    diverged: bool = False
    # the epochs whose weights were averaged into the ones kept (TrainerConfig.soup_top > 1)
    soup_epochs: list[int] = field(default_factory=list)


def _n_rows(data: Batch) -> int:
    sizes = {t.shape[0] for t in data.values()}
    if len(sizes) != 1:
        raise ValueError(f"All training tensors must have the same number of rows, got {sizes}.")
    return sizes.pop()


def _to_device(data: Batch, device: torch.device) -> dict[str, Tensor]:
    # Only a copy from the host may overlap: one to the host must end before the CPU reads it.
    return {k: v.to(device, non_blocking=v.device.type == "cpu") for k, v in data.items()}


def iterate_batches(data: Batch, batch_size: int, generator: torch.Generator | None = None) -> Iterator[dict[str, Tensor]]:
    """Slices of ``data`` of ``batch_size`` rows; shuffled when a generator is given."""
    n = _n_rows(data)
    device = next(iter(data.values())).device
    if generator is None:
        for start in range(0, n, batch_size):
            yield {k: v[start : start + batch_size] for k, v in data.items()}
        return
    # On the generator's device, not torch's default (a caller's CUDA default: a device mismatch)
    order = torch.randperm(n, generator=generator, device=generator.device).to(device)
    for start in range(0, n, batch_size):
        idx = order[start : start + batch_size]
        yield {k: v[idx] for k, v in data.items()}


def _divergence(cfg: TrainerConfig, epoch: int, what: str) -> str:
    """The message of a fit whose weights stopped being finite in ``epoch`` (``what`` showed it)."""
    # AdamW's decay shrinks by lr x weight_decay a step: above ~1 it overshoots
    decay = f" or the weight decay (weight_decay={cfg.weight_decay:g})" if cfg.weight_decay > 0 else ""
    return f"Training diverged in epoch {epoch}: {what}. Lower the learning rate (learning_rate={cfg.lr:g}){decay}."


class Trainer:
    """Fit a module by minimising ``loss_fn`` over minibatches.

    ``loss_fn(module, batch)`` returns ``(weighted_sum, weight)``: the trainer divides them
    for the gradient step and accumulates both to report epoch means. With
    ``config.compile`` the training steps call :func:`compile_loss` of it (uncompiled again,
    with a warning, if compilation fails); evaluation always runs the plain ``val_loss_fn``.
    ``config.mixed_precision`` runs both under :func:`autocast`. A ``loss_fn`` with a
    ``set_epoch(epoch)`` method (1-based) is told each epoch before its first step, as
    PyTorch's samplers are (a loss schedule, e.g. the objective's feature warm-up).
    """

    def __init__(self, config: TrainerConfig):
        self.config = config
        self._compiled: LossFn | None = None

    def _autocast(self) -> contextlib.AbstractContextManager:
        return autocast(self.config.mixed_precision, self.config.device)

    def _step(
        self, module: nn.Module, batch: Batch, loss_fn: LossFn, optimizer: torch.optim.Optimizer
    ) -> tuple[Tensor, Tensor]:
        """One optimisation step; the (detached) weighted loss sum and weight of the batch."""
        with self._autocast():
            s, w = loss_fn(module, batch)
        optimizer.zero_grad(set_to_none=True)
        (s / w.clamp_min(1e-12)).backward()
        if self.config.max_grad_norm is not None:
            # an ensemble clips each member's gradient on its own (StackedModel)
            clip = getattr(module, "clip_grad_norm_", None)
            if clip is None:
                nn.utils.clip_grad_norm_(module.parameters(), self.config.max_grad_norm)
            else:
                clip(self.config.max_grad_norm)
        optimizer.step()
        return s.detach(), w.detach()

    def _compiled_step(
        self, module: nn.Module, batch: Batch, loss_fn: LossFn, optimizer: torch.optim.Optimizer
    ) -> tuple[tuple[Tensor, Tensor], bool]:
        """:meth:`_step` with the compiled loss; if torch.compile (or the compiled code) fails,
        warn, and redo the step without it. Returns the step's result and whether it ran
        compiled. A genuine error of the loss is raised again by the uncompiled step; the
        device's own failures (see :func:`_device_failure`) are raised as they are."""
        try:
            with catch_warnings():  # one thread at a time: see tabmoe._stack
                # torch's own deprecation notices from inside its compiler, not the user's
                for category in (FutureWarning, DeprecationWarning):
                    warnings.filterwarnings("ignore", category=category, module=r"torch\.")
                if self._compiled is None:
                    self._compiled = compile_loss(loss_fn)
                return self._step(module, batch, self._compiled, optimizer), True
        except Exception as exc:  # torch.compile's errors have no common base class
            if _device_failure(exc):
                raise
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            reason = " ".join(lines[:2])[:300]  # torch's first line often only names the stage
            warnings.warn(
                f"compile=True: torch.compile failed on this platform "
                f"({type(exc).__name__}: {reason}); training continues without it.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
            return self._step(module, batch, loss_fn, optimizer), False

    def _averaged(self, module: nn.Module) -> AveragedModel | None:
        """torch's EMA of ``module``'s parameters (Polyak averaging), or None. Buffers are
        not averaged: the networks' buffers are index tables, not statistics."""
        decay = self.config.ema_decay
        if decay is None:
            return None
        if not 0 < decay < 1:
            raise ValueError(f"ema_decay must be in (0, 1) or None, got {decay!r}.")
        return AveragedModel(module, multi_avg_fn=get_ema_multi_avg_fn(decay), use_buffers=False)

    @torch.no_grad()
    def _usable(self, module: nn.Module, data: Batch, loss_fn: LossFn, last: dict) -> bool:
        """Whether the weights a fit ends with are finite and give a finite loss: the last epoch's
        validation loss, else on the first batch of ``data`` (eval mode; every RNG restored)."""
        if not all(bool(torch.isfinite(p).all()) for p in module.parameters()):
            return False
        if math.isfinite(last.get("val_loss", math.nan)):
            return True
        module.eval()
        batch = next(iterate_batches(data, self.config.batch_size), None)  # None: no row to read
        with forked_rngs(torch.device(self.config.device)), self._autocast():  # "cpu" as text too
            s, w = loss_fn(module, batch) if batch is not None else (0.0, 0.0)
        return not float(w) > 0 or math.isfinite(float(s))

    @torch.no_grad()
    def evaluate(self, module: nn.Module, data: Batch, loss_fn: LossFn) -> float:
        """Weighted mean loss over ``data`` in eval mode."""
        module.eval()
        total, weight, rows = 0.0, 0.0, max(self.config.batch_size, 1024)
        for batch in iterate_batches(data, min(rows, self.config.max_eval_rows or rows)):
            with self._autocast():
                s, w = loss_fn(module, batch)
            total, weight = total + float(s), weight + float(w)
        return total / weight if weight > 0 else math.nan

    def fit(
        self,
        module: nn.Module,
        train: Batch,
        loss_fn: LossFn,
        validation: Batch | None = None,
        val_loss_fn: LossFn | None = None,
        optimizer: torch.optim.Optimizer | None = None,
    ) -> TrainResult:
        cfg = self.config
        if cfg.early_stopping and validation is None:
            raise ValueError("early_stopping needs validation data.")
        check_config(cfg)
        module.to(cfg.device)
        train = _to_device(train, cfg.device)
        validation = _to_device(validation, cfg.device) if validation is not None else None
        val_loss_fn = val_loss_fn or loss_fn
        if optimizer is None:
            optimizer = make_adamw(module, cfg)
        generator = torch.Generator().manual_seed(cfg.seed)
        result = TrainResult()
        best_loss, best_state, bad_epochs, diverged, best_at = math.inf, None, 0, None, 1  # best_at: patience_rate's
        top = [] if cfg.soup_top > 1 else None  # (val_loss, epoch, weights) of the best epochs
        epochs = range(1, cfg.max_epochs + 1)
        bar = tqdm(epochs, desc=cfg.description, disable=not cfg.verbose, leave=False)
        try:  # the bar is closed however the loop ends (an error, Ctrl-C)
            compiled, self._compiled = cfg.compile, None
            set_epoch = getattr(loss_fn, "set_epoch", None)
            scheduler = plateau_scheduler(optimizer, cfg)
            warmup = warmup_scheduler(optimizer, cfg, _n_rows(train))
            cosine = cosine_scheduler(optimizer, cfg, _n_rows(train))
            averaged = self._averaged(module)
            scored = module if averaged is None else averaged.module  # the weights validated and kept
            for epoch in bar:
                start = time.perf_counter()
                if set_epoch is not None:
                    set_epoch(epoch)
                module.train()
                lr_at_start = optimizer.param_groups[0]["lr"]
                total = torch.zeros((), device=cfg.device)
                weight = torch.zeros((), device=cfg.device)
                for batch in iterate_batches(train, cfg.batch_size, generator):
                    if compiled:
                        (s, w), compiled = self._compiled_step(module, batch, loss_fn, optimizer)
                    else:
                        s, w = self._step(module, batch, loss_fn, optimizer)
                    result.n_steps += 1
                    if warmup is not None and result.n_steps <= warmup.total_iters:
                        warmup.step()
                    if cosine is not None:
                        cosine.step()
                    if averaged is not None:
                        averaged.update_parameters(module)
                    total += s
                    weight += w
                seen = float(weight)
                record = {
                    "epoch": epoch,
                    "train_loss": float(total / weight) / cfg.n_members if seen > 0 else math.nan,
                    "seconds": time.perf_counter() - start,
                }
                if seen > 0 and not math.isfinite(record["train_loss"]):
                    # the weights are no longer finite: every later prediction would be NaN
                    diverged = _divergence(cfg, epoch, f"the training loss is {record['train_loss']}")
                    result.history.append(record)
                    result.stopped_early = True
                    break
                if validation is not None:
                    record["val_loss"] = self.evaluate(scored, validation, val_loss_fn)
                if scheduler is not None or cfg.lr_warmup_epochs > 0 or cosine is not None:  # a one-step warm-up too
                    record["lr"] = float(lr_at_start)  # the rate this epoch's first step trained at (a numpy
                    # float32 learning_rate stayed one: save could not write it as JSON)
                if scheduler is not None:
                    scheduler.step(record.get("val_loss", record["train_loss"]))
                result.history.append(record)
                bar.set_postfix({k: f"{v:.4f}" for k, v in record.items() if k.endswith("loss")})
                if validation is None or epoch <= cfg.start_from_epoch:
                    continue
                if top is not None:
                    top = kept_top(top, record["val_loss"], epoch, scored, cfg.soup_top)
                if record["val_loss"] < best_loss - cfg.tol:
                    best_loss, bad_epochs, best_at = record["val_loss"], 0, epoch
                    if cfg.early_stopping:  # best_epoch: the epoch whose weights are kept
                        result.best_epoch, best_state = epoch, copy.deepcopy(scored.state_dict())
                elif cfg.watch_below is None or best_loss < cfg.watch_below:
                    bad_epochs += 1
                    patience = cfg.n_iter_no_change + round(cfg.patience_rate * (best_at - 1))
                    if cfg.early_stopping and bad_epochs >= patience:
                        result.stopped_early = True
                        break
        finally:  # eval mode however the loop ends (an error, Ctrl-C), as after a fit
            bar.close()
            module.eval()
        kept_best = cfg.early_stopping and best_state is not None
        if (diverged is None and result.history and not (kept_best and cfg.restore_best_weights)
                and not self._usable(scored, train if validation is None else validation, val_loss_fn, result.history[-1])):
            # the loss is read before each step: an overflowing last step returned a NaN network
            diverged = _divergence(cfg, result.history[-1]["epoch"], "after its last step the loss is not finite")
        if diverged is not None and not kept_best:  # no better weights to fall back to
            raise FloatingPointError(diverged)
        if diverged is not None:
            result.diverged = True
            warnings.warn(f"{diverged} The weights of epoch {result.best_epoch}, the best on "
                          "validation, are kept.", RuntimeWarning, stacklevel=user_stacklevel())
        if kept_best and (cfg.restore_best_weights or diverged):
            module.load_state_dict(best_state)
            if top is not None and not diverged:
                result.soup_epochs = soup(module, result.best_epoch, top,
                                          lambda m: self.evaluate(m, validation, val_loss_fn), cfg.soup_greedy)
        else:
            if cfg.early_stopping and not cfg.restore_best_weights and result.history:
                last = result.history[-1]  # the weights kept
                result.best_epoch, best_loss = last["epoch"], last.get("val_loss", math.nan)
            if averaged is not None:
                module.load_state_dict(averaged.module.state_dict())
        if cfg.verbose:  # the bar does not stay: say what the fit did
            tqdm.write(fit_summary(cfg.description, result, best_loss))
        if result.n_steps == 0:
            raise RuntimeError(
                "Training made no optimisation step (no rows with non-zero weight were seen)."
            )
        return result
