"""Text, markdown and JSON views of an :class:`EquivalenceTable` and of a release history.

Renderers only read the model: no analysis here. Tables use tabulate with
``disable_numparse=True`` (values shown exactly) and an explicit missing value; rows come in
the model's order (differing rows first, then TE's mask-type order and the window grid).
"""

from __future__ import annotations

import json

from tabulate import tabulate

from analyzer.equivalence.model import Cell, EquivalenceTable, window_repr

FORMATS = ("text", "markdown", "json")
MISSING = "-"
MAX_COUNTEREXAMPLES = 8


def cell_text(c: Cell) -> str:
    """``CAUSAL``, ``FULL``, ``LOCAL -1/0 (empty)``: the mode, plus the band unless exact."""
    if c.per_resolver:
        text = " / ".join(f"{role}: {lab}" for role, lab in c.per_resolver.items())
    else:
        text = c.label()
    return text if c.band == "exact" else f"{text} ({c.band})"


def _tablefmt(fmt: str) -> str:
    return "github" if fmt == "markdown" else "simple"


def _columns(table: EquivalenceTable) -> list[tuple[str, str]]:
    return [(col.label, kind) for col in table.fa4 for kind in ("as-is", "normalized")]


def table_rows(table: EquivalenceTable) -> tuple[list[str], list[list[str]]]:
    cols = _columns(table)
    headers = ["mask type", "user window", "causal", "window"] + [f"{l} {k}" for l, k in cols]
    body = []
    for r in table.rows:
        e = r.emission
        by_key = {(c.fa4, c.input): c for c in r.cells}
        te_check = e.origin == "check_set_window_size"
        user = window_repr(e.user_window) if te_check else MISSING
        line = [e.mask_type if te_check else e.origin, user, str(e.causal), f"({r.window[0]}, {r.window[1]})"]
        line += [cell_text(by_key[k]) if k in by_key else MISSING for k in cols]
        body.append(line)
    return headers, body


def _bullet(fmt: str) -> str:
    return "- " if fmt == "markdown" else "  "


def render_table(table: EquivalenceTable, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(table.to_json(), indent=2) + "\n"
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    b = _bullet(fmt)
    out = []
    te = table.te
    te_where = ""
    if te.get("function"):
        f = te["function"]
        te_where = f", {f['name']} at {f['path']}:{f['line']}, fingerprint {f['fingerprint']}"
    out.append("Sources:")
    out.append(f"{b}TE {te.get('version') or te.get('spec')} ({te.get('variant')}{te_where})")
    for col in table.fa4:
        for r in col.resolvers:
            out.append(f"{b}FA4 {col.label}: {r.variant} ({r.form}, role {r.role}), {r.name} at "
                       f"{r.path}:{r.line}, fingerprint {r.fingerprint}")
    out.append("")
    headers, body = table_rows(table)
    out.append(tabulate(body, headers=headers, tablefmt=_tablefmt(fmt),
                        disable_numparse=True, missingval=MISSING))
    out.append("")
    out.append(table.caption() + ".")
    out.append("Cells: the mode the resolver selects (CAUSAL, FULL, LOCAL left/right), then the "
               "band against TE's intent when not exact (empty, wider, narrower, shifted).")
    out.append("")
    out.append("Claims:")
    for cl in table.claims:
        status = "holds" if cl.holds else "FAILS"
        out.append(f"{b}({cl.name}) {cl.text}: {status} ({cl.checked} checked)")
        for ex in cl.counterexamples[:MAX_COUNTEREXAMPLES]:
            out.append(f"{b}    counterexample: {_counterexample(ex)}")
        more = len(cl.counterexamples) - MAX_COUNTEREXAMPLES
        if more > 0:
            out.append(f"{b}    ... and {more} more (see --format json)")
    if table.notes:
        out.append("")
        out.append("Notes:")
        out += [f"{b}{n}" for n in table.notes]
    if table.errors:
        out.append("")
        out.append("Errors:")
        out += [f"{b}{e}" for e in table.errors]
    out.append("")
    out.append(f"verdict: {table.verdict} (exit {table.exit_code})")
    return "\n".join(out) + "\n"


def _counterexample(ex: dict) -> str:
    head = (f"{ex['fa4']}: {ex['mask_type']} {ex['user_window']} -> "
            f"causal={ex['causal']} window=({ex['window'][0]}, {ex['window'][1]})")
    if "as_is" in ex:
        return f"{head}: as-is {ex['as_is']}, normalized {ex['normalized']} ({ex['normalized_band']})"
    return f"{head}: normalized input gives {ex['mode']} ({ex['band']})"


# ----------------------------------------------------------------------------- history

def _breaks(r: dict) -> str:
    if r.get("breaks") is None:
        return "error"
    if r["breaks"]:
        return f"yes ({r.get('broken_pairs', '?')}/{r.get('pairs', '?')} pairs)"
    return "no"


def render_history(rows: list[dict], fmt: str = "text", *, te_label: str = "") -> str:
    if fmt == "json":
        return json.dumps({"te": te_label, "releases": rows}, indent=2) + "\n"
    headers = ["version", "variant", "fingerprint", "breaks TE pairs", "first broken pair"]
    body = [[r["version"], r.get("variant") or MISSING, r.get("fingerprint") or MISSING,
             _breaks(r),
             r.get("first_broken") or r.get("error") or MISSING] for r in rows]
    text = tabulate(body, headers=headers, tablefmt=_tablefmt(fmt), disable_numparse=True,
                    missingval=MISSING)
    broken = sum(1 for r in rows if r.get("breaks"))
    errs = sum(1 for r in rows if r.get("breaks") is None)
    tail = (f"{len(rows)} releases against TE {te_label}: {broken} break TE's emitted pairs"
            + (f", {errs} could not be analysed" if errs else "") + ".")
    return text + "\n\n" + tail + "\n"
