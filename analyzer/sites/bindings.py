"""Which modules and names are FlashAttention entry points, by ORIGIN module (never by spelling).

In TE the bare ``_flash_attn_fwd`` is FA2's, ``flash_attn_func`` is FA2, ``flash_attn_func_v3``
FA3 and ``flash_attn_func_v4`` FA4: only the module a name was imported from tells them apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from fa4_patch.names import FA4_MODULES as _FA4_MODULES
from fa4_patch.names import WINDOW_KEYS, WINDOW_POSITIONS  # noqa: F401  (re-exported)

FA4_MODULES = _FA4_MODULES
FA3_MODULES = ("flash_attn_interface",)
FA2_MODULES = ("flash_attn", "flash_attn.flash_attn_interface", "flash_attn_2_cuda")

# FA4 entry points that take a window, and the positional index of each window parameter
# across releases (the shared vocabulary, ``fa4_patch.names``).
FA4_ENTRIES: dict[str, dict[str, tuple[int, ...]]] = WINDOW_POSITIONS
# the package flash_attn (FA2) re-exports these from flash_attn.flash_attn_interface
FA2_PACKAGE_ENTRIES = frozenset({
    "flash_attn_func", "flash_attn_varlen_func", "flash_attn_qkvpacked_func",
    "flash_attn_kvpacked_func", "flash_attn_varlen_qkvpacked_func",
    "flash_attn_varlen_kvpacked_func", "flash_attn_with_kvcache",
})
# sub-modules reachable as attributes of an FA module object
FA_SUBMODULES = {
    "flash_attn": ("cute", "flash_attn_interface"),
    "flash_attn.cute": ("interface",),
}


@dataclass(frozen=True)
class Entry:
    version: str    # fa2 | fa3 | fa4
    module: str     # the origin module as imported
    name: str

    @property
    def qual(self) -> str:
        return f"{self.module}.{self.name}"

    def window_positions(self) -> dict[str, tuple[int, ...]]:
        if self.version == "fa4":
            return FA4_ENTRIES.get(self.name, {})
        return {}


# FA4 origins found for the tree being audited (vendored copies recognised by content, modules
# the user declares): set by ``analyzer.sites.audit_tree`` for the length of one pass.
EXTRA_FA4: set[str] = set()


def _extra_fa4(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in EXTRA_FA4)


def by_short_name(module: str, origins) -> str | None:
    """The origin (a vendored or declared FA4 copy) that ``module`` names by a shorter path --
    a folder above the copy put on ``sys.path`` (``third_party/fa`` for
    ``third_party.fa.interface``, then ``import interface`` or ``interface.sub``) -- with the
    rest of ``module`` appended; None when it names none. The longest leading part that
    matches wins; among several origins, the first in sorted order."""
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        head = ".".join(parts[:i])
        for full in sorted(origins):
            if full.endswith("." + head):
                return full + module[len(head):]
    return None


def fa_version_of_module(module: str) -> str | None:
    """fa2/fa3/fa4 when ``module`` is (a sub-module of) a FlashAttention package."""
    if module in FA4_MODULES or module.startswith("flash_attn.cute.") or _extra_fa4(module):
        return "fa4"
    if module in FA3_MODULES:
        return "fa3"
    if module == "flash_attn" or module.startswith("flash_attn.") or module == "flash_attn_2_cuda":
        return "fa2"
    return None


def is_fa_module(module: str) -> bool:
    return (module in FA4_MODULES or module in FA3_MODULES or module in FA2_MODULES
            or _extra_fa4(module))


def entry_for(module: str, name: str) -> Entry | None:
    """The entry point ``from module import name`` binds, or None if it is not one."""
    if module in FA4_MODULES or _extra_fa4(module):
        return Entry("fa4", module, name) if name in FA4_ENTRIES else None
    if module in FA3_MODULES:
        return Entry("fa3", module, name) if not name.startswith("__") else None
    if module == "flash_attn":
        return Entry("fa2", module, name) if name in FA2_PACKAGE_ENTRIES else None
    if module in ("flash_attn.flash_attn_interface", "flash_attn_2_cuda"):
        return Entry("fa2", module, name) if not name.startswith("__") else None
    return None


def submodule(module: str, name: str) -> str | None:
    """``module.name`` when that is an FA module (``from flash_attn import cute``)."""
    full = f"{module}.{name}"
    if is_fa_module(full):
        return full
    return None


def all_entries(module: str) -> list[Entry]:
    """What ``from module import *`` binds (FA4 and the FA2 package only; others unknown)."""
    if module == "flash_attn.cute":
        return [Entry("fa4", module, n) for n in ("flash_attn_func", "flash_attn_varlen_func")]
    if module == "flash_attn.cute.interface" or _extra_fa4(module):
        return [Entry("fa4", module, n) for n in FA4_ENTRIES]
    if module == "flash_attn":
        return [Entry("fa2", module, n) for n in sorted(FA2_PACKAGE_ENTRIES)]
    return []


FA4_PATCH_WRAPPERS = ("fa4_patch.wrap", "fa4_patch.wrapper.wrap")
TREE_WRAPPER = "_fa4_audit_wrap"
TREE_NORMALISER = "_fa4_audit_normalize_pair"
