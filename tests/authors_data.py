"""When the authors' simulated data can be regenerated bit for bit on this machine.

The simulation draws with numpy's legacy ``RandomState.multivariate_normal``, which takes
the SVD of the covariance. The paper's covariances (``corr`` off the diagonal) have one
eigenvalue repeated d - 1 times, so the basis of that eigenspace, and with it every sample,
depends on the LAPACK/BLAS kernels numpy's OpenBLAS picks. The authors' per-seed accuracies
were reproduced (within 0.0015) where OpenBLAS ran its AVX-512 kernels (numpy 1.24-2.4 on an
AMD EPYC). Elsewhere they are not: without AVX-512 (Haswell / Zen kernels) seed 4951 gives
LR test accuracy 0.1255 against the authors' 0.1435; on an Intel machine with AVX-512 but
numpy 2.5.2's OpenBLAS, LR accuracies were off by up to 0.021. AVX-512 alone is therefore no
test: the checks against the authors' numbers run where numpy draws the same basis, i.e. a
first draw from each of config 5/0.9/0's two covariances equals the one recorded where they
were reproduced. The generator's own properties (shapes, bins, determinism) are tested
everywhere.
"""

from __future__ import annotations

import numpy as np
import pytest

# RandomState(0).multivariate_normal(zeros(5), cov) with cov = corr off the diagonal, 1 on
# it: the train covariance of config 5/0.9/0 (corr 0.9) and its shifted test one (0.1).
_AUTHORS_FIRST_DRAW = {
    0.9: [-1.57883802, -1.10662108, -1.44267818, -2.38483275, -1.94712782],
    0.1: [0.96801217, -0.63547108, -2.19556538, -2.61209264, -0.19212689],
}


def draws_the_authors_basis() -> bool:
    for corr, expected in _AUTHORS_FIRST_DRAW.items():
        cov = np.full((5, 5), corr) + np.eye(5) * (1 - corr)
        drawn = np.random.RandomState(0).multivariate_normal(np.zeros(5), cov)
        if not np.allclose(drawn, expected, rtol=0, atol=1e-7):
            return False
    return True


requires_authors_svd_basis = pytest.mark.skipif(
    not draws_the_authors_basis(),
    reason="numpy's SVD basis here is not the one the authors' data were drawn with (tests/authors_data.py)",
)
