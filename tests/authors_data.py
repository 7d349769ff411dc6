"""When the authors' simulated data can be regenerated bit for bit on this machine.

The simulation draws with numpy's legacy ``RandomState.multivariate_normal``, which takes
the SVD of the covariance. The paper's covariances (``corr`` off the diagonal) have one
eigenvalue repeated d - 1 times, so the basis of that eigenspace, and with it every sample,
depends on the BLAS kernels OpenBLAS picks for the CPU. The authors' per-seed accuracies
were reproduced (within 0.0015) on machines whose OpenBLAS ran its AVX-512 kernels; on an AMD
EPYC without AVX-512 (Haswell / Zen kernels) seed 4951 gives LR test accuracy 0.1255 against
the authors' 0.1435, with every other kernel OpenBLAS offers there also off (0.130). The
checks against the authors' numbers run where AVX-512 is present; the generator's own
properties (shapes, bins, determinism) are tested everywhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def _has_avx512() -> bool:
    cpuinfo = Path("/proc/cpuinfo")
    return cpuinfo.is_file() and " avx512f" in cpuinfo.read_text()


requires_authors_svd_basis = pytest.mark.skipif(
    not _has_avx512(),
    reason="the authors' simulated data need OpenBLAS's AVX-512 SVD basis (tests/authors_data.py)",
)
