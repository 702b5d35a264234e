"""glibc malloc settings of LSREP's own processes: the driver while it shards, its pool workers and
the adapter hosts' fork server (hosts inherit them). Not glibc (no `mallopt`): nothing changes.

- **Arenas** (`fewer_arenas`): glibc gives a thread that allocates while another holds the lock an
  arena of its own (up to eight per core), and memory freed in one arena serves only that arena:
  the unit, shard, pool and index threads of the driver kept ~15 MB more resident at S scale
  (largest process 116 against 102 MB with two arenas, 100 questions,
  `benchmarks/longmemeval_diagnostic.py`'s measure).
- **Freed heap kept** (`keep_freed_heap`): glibc's defaults map a block above 128 KiB (its
  threshold then follows the largest block freed) afresh and give a free heap top above twice that
  back to the kernel, so a process that allocates and frees blocks of a few MiB in a loop has every
  page of them zero-filled by a page fault each time. The hashing embedder's numpy temporaries
  (1-2 MiB per chunk of texts) did exactly that in every adapter host: an S-scale LongMemEval run
  took 0.94-1.40 million minor faults, 85% of them in those temporaries (`perf record -e
  page-faults`), and 3.7-4.6 s of system CPU. Blocks below `MMAP_THRESHOLD` now come from the heap
  and a free top below `TRIM_THRESHOLD` stays: 66 thousand faults and 2.1-2.2 s of system CPU,
  peak PSS of the run 223 -> 227-229 MB.
"""

from __future__ import annotations

ARENAS = 2
"""glibc malloc arenas a sharding driver keeps (`fewer_arenas`)."""
MMAP_THRESHOLD = 8 << 20
"""Blocks below this many bytes come from the heap, not from a mapping of their own."""
TRIM_THRESHOLD = 32 << 20
"""A free heap top below this many bytes is kept for the next blocks, not given back."""

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8


def _mallopt(*settings: tuple[int, int]) -> bool:
    """Each (parameter, value) set in this process's glibc malloc; False where there is none."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        return all([libc.mallopt(param, value) == 1 for param, value in settings])  # each one tried
    except (OSError, AttributeError):
        return False


def fewer_arenas() -> bool:
    """At most `ARENAS` glibc malloc arenas in this process from now on."""
    return _mallopt((_M_ARENA_MAX, ARENAS))


def keep_freed_heap() -> bool:
    """Blocks below `MMAP_THRESHOLD` from the heap, and a free heap top below `TRIM_THRESHOLD` kept."""
    return _mallopt((_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
