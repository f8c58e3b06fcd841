"""How the audit asks CPython's cyclic garbage collector to behave.

An audit allocates a few million objects in one burst that all stay alive until the end
(syntax trees, the call-site IR, the flow solver's memo). CPython's collector re-walks every
live object on each full (oldest-generation) collection: on TE 2.20.2 that was 0.26-0.29 s of a
1.5 s call-site pass, 530 collections. ``fewer_collections()`` raises the thresholds while a
pass runs: young cycles are still collected (generation 0 every 50 000 allocations), full
collections are put off until the pass ends. The previous thresholds come back afterwards, so
a host process (the pytest plugin) keeps its own policy.
"""

from __future__ import annotations

import contextlib
import gc

THRESHOLDS = (50_000, 20, 1_000)


@contextlib.contextmanager
def fewer_collections():
    old = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(old, THRESHOLDS)))
    try:
        yield
    finally:
        gc.set_threshold(*old)
