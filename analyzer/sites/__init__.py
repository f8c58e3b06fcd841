"""The call-site coverage pass (``fa4-audit sites``): every window a tree hands to
FlashAttention, every call that can reach FA4, and whether a normaliser covers it.

Public API (others call it; keep it exact)::

    audit_tree(root, *, package_dir=None, jobs=None, use_cache=True, progress=None,
               fa4_modules=(), resolvers=None, fa4_params=None) -> SitesReport
    render(report, fmt) -> str          # fmt: text | markdown | json | sarif

``root`` is the folder holding ``package_dir`` (``transformer_engine``), or any Python tree when
``package_dir`` is None: nothing here depends on TE's layout.

Modules, in the order a run uses them: ``reach`` (whole-tree import graph: what may be
skipped), ``parse`` (libcst -> IR, parallel, cached), ``flow`` (values and FA functions across
files), ``coverage`` (calls and their window inputs), ``behaviour`` + ``_behaviour_child``
(wrappers and call-site expressions run against a recording stand-in FA4), ``pairs`` and
``verdicts`` (proved / broken / unknown per call and release), ``escape`` (FA4 values going
where the flow does not follow), ``records`` (the report), ``rules`` (codes with their
examples), ``render``. ``pipeline`` strings them together.
"""

from __future__ import annotations

from analyzer.sites.model import SitesReport

__all__ = ["audit_tree", "render", "SitesReport"]


def __getattr__(name: str):
    # loaded on first use: the parse lanes' zygote (``lanes``) is forked from a process that
    # has imported this package but not yet the pass itself, which it does not need
    if name == "audit_tree":
        from analyzer.sites.pipeline import audit_tree
        return audit_tree
    if name == "_chunks":           # tests split big files with it
        from analyzer.sites.parse import _chunks
        return _chunks
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# ``analyzer.sites.render`` is both a module (``from analyzer.sites.render import render``) and,
# as an attribute of this package, the function itself: import the module once, then bind the
# name to its function (a later import of the already-loaded module does not rebind it).
from analyzer.sites import render as _render_module  # noqa: E402

render = _render_module.render
