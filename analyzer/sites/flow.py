"""The cross-file flow layer: which FlashAttention entry points each call can reach, and which
windows reach it.

A small abstract interpreter over the IR of ``extract``:

* module level runs in order (strong updates, try/except/else and if/else joined), so
  ``x = w(x)`` after an import, ``None`` fallbacks and re-binding are judged by the value the
  name has when the module has finished running;
* function bodies are flow-insensitive (every assignment of a local contributes), with
  *path facts*: ``if use_flash_attn_4:`` adds the fact ``use_flash_attn_4 = True`` to what is
  assigned or stored in its body, and ``False`` to its ``else``. A fact is only used for a
  name assigned once, outside loops (or a parameter never re-assigned), so it cannot change
  between the test and the use. Facts follow values through call edges when the argument is
  that very name (``f(use_flash_attn_4, ...)``, also through ``*[...]`` lists with exact
  positions). A value whose facts contradict the facts of the call it would reach is dropped:
  that is how the FA3 call in an ``else`` of ``if use_flash_attn_4`` is not reported as FA4;
* parameters get the values of every in-tree call edge (``f(...)``, ``Cls.apply(*args)`` ->
  ``forward``, ``self.m(...)``) plus "unknown: callers outside the tree";
* dicts are allocation sites whose window entries (literal keys, ``d[k] = v`` stores in any
  branch, ``.update``, ``dict(...)``, ``**`` splats, stores made by helpers the dict is passed
  to) travel with the value; lists keep exact positions for ``*args`` mapping.

Nothing here prints; ``audit_tree`` turns the results into records.
"""

from __future__ import annotations

from typing import Callable

from analyzer.sites.flow_base import *  # noqa: F401,F403 - re-exported: callers import from here
from analyzer.sites.flow_base import __all__ as _base_all
from analyzer.sites.flow_edges import CallEdges
from analyzer.sites.flow_env import ImportsEnv
from analyzer.sites.flow_values import Values


class Solver(ImportsEnv, CallEdges, Values):
    """One run over the loaded modules. ``loader(module_name) -> bool`` may load more files;
    a run that loaded anything is repeated by the caller (results are then complete)."""

    def __init__(self, mods: dict[str, Mod], modnames: dict[str, str],
                 wrapper_names: set[str], request_load: Callable[[str], bool],
                 request_callers: Callable[[str], bool], loaded: Callable[[str], bool]):
        self.mods = mods                  # path -> Mod
        self.modnames = modnames          # dotted name -> path (every file of the tree)
        self.wrapper_names = wrapper_names
        self.request_load = request_load
        self.request_callers = request_callers
        self.loaded = loaded
        self.by_name = {m.name: m for m in mods.values()}
        self.fns: dict[tuple, Fn] = {}
        self.clss: dict[tuple, Cls] = {}
        for m in mods.values():
            for f in m.all_fns:
                self.fns[f.key] = f
            for c in m.classes.values():
                self.clss[c.key] = c
        self.exprs: dict[int, object] = {}
        self.memo: dict = {}
        self.prev: dict = {}
        self.cycle_reads: dict = {}
        self.inprog: set = set()
        self.cyc = False
        self.depth = 0
        self.truncated: list[str] = []
        self.envs: dict[str, dict] = {}
        self.env_inprog: set[str] = set()
        # (path, name) -> [(line, value)]: what a module-level binding replaced while the
        # module's environment was built (``ImportsEnv.replaced_values``); built with ``envs``
        self.replaced: dict[tuple, list] = {}
        self.elements_busy: set[int] = set()     # list elements being evaluated (``_element``)
        self.binding_records: dict[tuple, dict] = {}
        self.records: dict[str, dict] = {}
        self.wrap_arg_uses: dict[tuple, int] = {}
        self._callers: dict[tuple, list] | None = None
        self._callers_searched: set[str] = set()
        # Loading more files to find callers is only worth it while following an FA callee or
        # a window dict (Analysis sets this); other evaluation uses the files already loaded.
        self.search_ok = False
        # why this project's fa4_patch may not be what the tree runs (set by the pipeline from
        # ``reach.fa4_patch_tampering``): "" trusts ``fa4_patch.wrap`` to be it
        self.fa4_patch_tampered = ""
        # who may set an attribute a window is read from (``attrstores.StoreIndex``; set by
        # the pipeline)
        self.attr_stores = None

    # -- registry ------------------------------------------------------------------
    def ref(self, e) -> int:
        self.exprs[id(e)] = e
        return id(e)

    def next_round(self) -> bool:
        """True when a value read across a cycle is not final yet (run the analysis again)."""
        stale = any(_relevant(self.memo.get(k, EMPTY)) != _relevant(v)
                    for k, v in self.cycle_reads.items())
        if stale:
            self.prev = self.memo
            self.memo = {}
            self.cycle_reads = {}
            self.envs = {}
            self.replaced = {}
        return stale


__all__ = [*_base_all, "Solver"]
