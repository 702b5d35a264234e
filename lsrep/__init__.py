"""LSREP: longitudinal state-replay evaluation of conversational memory systems."""

import os

# A replay makes many small vector products (one query against one memory at a time) and
# runs units side by side in worker processes. Multi-threaded BLAS only adds contention
# there (measured: a 4,000 x 512 product took 7 ms with OpenBLAS threads on a busy 2-core
# machine, 0.3 ms with one), so LSREP asks for one BLAS thread unless the user set a count.
# This must run before numpy is first imported; worker and host processes inherit it.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

__version__ = "0.1.0"
