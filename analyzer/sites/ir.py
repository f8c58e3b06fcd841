"""The per-file IR records (no libcst here: a warm run unpickles these without importing it).
See ``extract`` for the expression / statement encoding."""

from __future__ import annotations

from dataclasses import dataclass, field

IR_VERSION = 6


@dataclass
class FuncIR:
    name: str
    qualname: str
    params: list            # [(name, kind, default_expr|None)] kind: pos|kwonly|var|kw
    decorators: list        # [expr]
    body: list
    pos: list
    is_lambda: bool = False


@dataclass
class ClassIR:
    name: str
    qualname: str
    bases: list             # [expr]
    decorators: list
    body: list
    pos: list


@dataclass
class ModuleIR:
    path: str               # relative, '/' separated
    body: list = field(default_factory=list)
    error: str | None = None
    positions: str = "ast-ordinals"


