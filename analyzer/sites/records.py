"""From the flow layer's results to the report's records: bindings, window sites, FA calls
(with their per-release verdicts), wrappers, and the findings of every rule."""

from __future__ import annotations

from analyzer.model import Finding
from analyzer.sites import rules as R
from analyzer.sites.coverage import Analysis, Text, atom_safe, atom_text, site_atoms, _value_text
from analyzer.sites.flow import Const, FAFunc, Mod, Solver, expr_label
from analyzer.sites.ir import (Assign, Attr, AugAssign, Block, Call, ClassDef, ExprStmt, FuncDef,
                              If, Import, Loop, Name, Return, Starred, Subscript, Try, TupleExpr,
                              With, walk as walk_ir)
from analyzer.sites.model import Binding, FACall, SitesReport, WindowSite, WrapperTrust


def _loc(text: Text, path: str, pos) -> tuple[int, int]:
    if not pos or not isinstance(pos[0], int) or not pos[0]:
        return 0, 0
    return pos[0], text.col(path, pos[0], pos[1])


_USES: dict = {}


def _count_uses(mods: dict[str, Mod], m: Mod, name: str):
    """(loads of module-level ``name`` in its module + imports of it by other modules, how many
    of those loads are the innermost argument of a module-level wrapping assignment)."""
    if id(m) not in _USES:
        _USES[id(m)] = _module_uses(mods, m)
    loads, wraps = _USES[id(m)]
    return loads.get(name, 0), wraps.get(name, 0)


def _module_uses(mods: dict[str, Mod], m: Mod):
    from collections import Counter
    loads: Counter = Counter()
    wraps: Counter = Counter()

    def expr(e, skip=None):
        for x in walk_ir(e, keys=False):
            if type(x) is Name and x.id != skip:
                loads[x.id] += 1

    def target(t):
        if isinstance(t, (Subscript, Attr)):
            expr(t.base)
            if isinstance(t, Subscript):
                expr(t.index)
        elif isinstance(t, TupleExpr):
            for s in t.elts:
                target(s)
        elif isinstance(t, Starred):
            target(t.value)

    def stmts(body, top=False):
        for st in body:
            if isinstance(st, Assign):
                names = {t.id for t in st.targets if isinstance(t, Name)}
                v = st.value
                while top and isinstance(v, Call) and len(v.args) == 1 and v.args[0].kind == "p":
                    v = v.args[0].value
                self_rebind = None
                if top and isinstance(v, Name) and v is not st.value:
                    if v.id in names:
                        self_rebind = v.id      # name = w(name): the name lives on
                    else:
                        wraps[v.id] += 1        # x = w(name): consumed by wrapping
                expr(st.value, skip=self_rebind)
                for t in st.targets:
                    target(t)
            elif isinstance(st, (ExprStmt, Return)):
                expr(st.value)
            elif isinstance(st, AugAssign):
                expr(st.value)
                target(st.target)
                if isinstance(st.target, Name):
                    loads[st.target.id] += 1
            elif isinstance(st, If):
                stmts(st.body, top); stmts(st.orelse, top)
            elif isinstance(st, Try):
                stmts(st.body, top)
                for h in st.handlers:
                    stmts(h.body, top)
                stmts(st.orelse, top); stmts(st.final, top)
            elif isinstance(st, Loop):
                expr(st.iter); stmts(st.body); stmts(st.orelse)
            elif isinstance(st, With):
                for item in st.items:
                    expr(item.expr)
                stmts(st.body)
            elif isinstance(st, FuncDef):
                f = st.func
                for d in f.decorators:
                    expr(d)
                for p in f.params:
                    if p.default is not None:
                        expr(p.default)
                stmts(f.body)
            elif isinstance(st, ClassDef):
                c = st.cls
                for d in c.decorators + c.bases:
                    expr(d)
                stmts(c.body)
            elif isinstance(st, Block):
                for b in st.bodies:
                    stmts(b)

    stmts(m.ir.body, True)
    for other in mods.values():
        if other is m:
            continue
        for item in _imports(other.ir.body):
            local, module, attr, level, _ = item
            if attr is None:
                continue
            base = other.name.split(".") if other.is_pkg else other.name.split(".")[:-1]
            if level:
                base = base[: len(base) - (level - 1)] if level - 1 <= len(base) else []
                absmod = ".".join([*base, module] if module else base)
            else:
                absmod = module
            if absmod == m.name or m.name.endswith("." + absmod):
                loads[attr] += 1
    return loads, wraps


def _imports(body):
    """Every import item in ``body``, nested bodies included."""
    for st in walk_ir(body):
        if type(st) is Import:
            yield from st.items


def _reach_json(reach, index) -> dict:
    return {
        "origins": list(reach.origins), "vendored": [index.modules[m].path for m in reach.vendored],
        "declared": list(reach.declared),
        "reaching": sorted(index.modules[m].path for m in reach.reaching),
        "how": {index.modules[m].path: reach.path_to_fa4.get(m, "") for m in sorted(reach.reaching)},
    }


def _reach_findings(reach, index, escapes) -> list[Finding]:
    out = []
    for path, d in reach.dynamic_unknown:
        msg = (d.message or d.why if d.message or d.why.startswith("hands a window") else
               f"{d.spelled}: {d.why}; the code it runs may call FA4, and the windows that "
               "reach it cannot be judged" if d.loader else
               f"{d.spelled} loads a module named at run time, and {d.why}: it may be FA4, "
               "and the windows it gets cannot be judged")
        out.append(Finding(R.DYNAMIC_IMPORT.code, R.DYNAMIC_IMPORT.name, msg, path, d.line,
                           d.col, (), "unknown"))
    for path, d in reach.dynamic_fa4:
        if d.carries_window:
            out.append(Finding(R.DYNAMIC_IMPORT.code, R.DYNAMIC_IMPORT.name,
                               f"{d.spelled} loads FA4 ({d.constant}) dynamically and {d.why}; "
                               "calls through it are not followed", path, d.line, d.col, (),
                               "unknown"))
    activates = [(p, t) for p, t in reach.torch if t.what.startswith("activates")]
    handoffs = [(p, t) for p, t in reach.torch if not t.what.startswith("activates")]
    if activates:
        where = ", ".join(f"{p}:{t.line}" for p, t in activates[:3])
        for path, t in handoffs:
            out.append(Finding(R.FA4_THROUGH_TORCH.code, R.FA4_THROUGH_TORCH.name,
                               f"{t.what} while the tree activates torch's FA4 attention "
                               f"({where}): whether -1 reaches FA4 depends on the torch release",
                               path, t.line, t.col, (), "unknown"))
    for path, err in reach.parse_errors:
        raw = index.by_path[path].source
        if any(k in raw for k in ("flash_attn", "window_size", "import_module", "__import__",
                                  *(o.rsplit(".", 1)[-1] for o in reach.origins))):
            out.append(Finding(R.UNPARSEABLE.code, R.UNPARSEABLE.name,
                               f"{path} {err}; it may reach FlashAttention, so nothing can be "
                               "said about the tree", path, 0, 0, (), "failure"))
    for e in escapes:
        out.append(Finding(R.FA4_ESCAPE.code, R.FA4_ESCAPE.name, e.what, e.path, e.line, e.col,
                           (), "unknown"))
    return out


def _records(report: SitesReport, solver: Solver, analysis: Analysis, calls, site_info,
             text: Text, mods: dict[str, Mod], judge=None) -> None:
    # bindings ------------------------------------------------------------------------------
    brecs = sorted(solver.records.values(), key=lambda r: (r["path"], r["line"], r["col"], r["name"]))
    bind_ids = {}
    findings: list[Finding] = []
    for i, rec in enumerate(brecs, 1):
        bind_ids[rec["id"]] = f"B{i}"
    for rec in brecs:
        vals = sorted(rec["values"], key=lambda v: (v.entry.version, v.entry.qual, str(v.chain)))
        m = mods[rec["path"]]
        if rec["scope"] == "<module>":
            env = solver.env(m)
            final = solver.force(env[rec["name"]]) if rec["name"] in env else frozenset()
            finals = {v for v, _ in final}
            live = any(v in finals for v in rec["values"]) or \
                any(isinstance(v, FAFunc) and v.binding == rec["id"] for v in finals)
            fallback = any(isinstance(v, Const) and v.value is None for v in finals)
        else:
            live, fallback = True, False
        fa4 = [v for v in vals if v.entry.version == "fa4"]
        normalised = bool(fa4) and all(analysis.normalised(v) for v in fa4)
        chain = ()
        for v in vals:
            if len(v.chain) > len(chain):
                chain = v.chain
        line, col = _loc(text, rec["path"], rec["pos"])
        via = tuple(vals[0].via) if vals else tuple(rec["via"])
        b = Binding(bind_ids[rec["id"]], rec["path"], line, col, rec["scope"], rec["name"],
                    rec["kind"], tuple(sorted({v.entry.version for v in vals})),
                    tuple(sorted({v.entry.qual for v in vals})), tuple(w.label for w in chain),
                    normalised, live, fallback, via)
        report.bindings.append(b)
        if rec["scope"] == "<module>" and live and fa4 and not normalised:
            uses, wrapped_uses = _count_uses(mods, m, rec["name"])
            if uses and uses == wrapped_uses:
                b.kind = b.kind  # consumed only by wrapping: internal raw name, not reported
                b.via = b.via + ("used only as the argument of a wrapping assignment",)
                continue
            wr = ", ".join(w.label for w in chain) or "no wrapper"
            findings.append(Finding(
                R.UNWRAPPED_BINDING.code, R.UNWRAPPED_BINDING.name,
                f"{rec['name']} is bound to FA4 {', '.join(sorted({v.entry.name for v in fa4}))} "
                f"without a behaviour-checked normaliser (wrapper chain: {wr})",
                rec["path"], line, col, via, "note"))
        if rec["scope"] != "<module>" and rec["kind"] == "import" and fa4:
            findings.append(Finding(
                R.IMPORT_OUTSIDE_BINDING_SITE.code, R.IMPORT_OUTSIDE_BINDING_SITE.name,
                f"FA4 {', '.join(sorted({v.entry.name for v in fa4}))} imported inside "
                f"{rec['scope']} as {rec['name']}, away from the module-level binding site",
                rec["path"], line, col, via, "note"))

    # window sites -------------------------------------------------------------------------
    sites = sorted(site_info, key=lambda s: (s.path, s.pos, s.key))
    site_ids = {s: f"W{i}" for i, s in enumerate(sites, 1)}
    order = sorted(calls, key=lambda c: (c["fn"].mod.path, c["call"].pos[0], c["call"].pos[1]))
    call_ids = {id(c["call"]): f"C{i}" for i, c in enumerate(order, 1)}
    for s in sites:
        info = site_info[s]
        atoms = site_atoms(solver, s)
        line, col = _loc(text, s.path, s.pos)
        report.window_sites.append(WindowSite(
            site_ids[s], s.path, line, col, s.key, s.style, _value_text(text, s),
            tuple(sorted({atom_text(a) for a in atoms})),
            all(atom_safe(a, set()) for a in atoms),
            tuple(sorted(info["versions"])),
            tuple(sorted({call_ids[id(c)] for c in info["calls"]}, key=lambda x: int(x[1:]))),
            tuple(info["via"])))

    # calls ----------------------------------------------------------------------------------
    for c in order:
        fn = c["fn"]
        call = c["call"]
        line, col = _loc(text, fn.mod.path, call.pos)
        bids = sorted({bind_ids[v.binding] for v, _ in c["fa"] if v.binding in bind_ids},
                      key=lambda x: int(x[1:]))
        first = c["unwrapped"][0] if c["unwrapped"] else c["fa"][0][0]
        via = tuple(first.via) + (f"called at {fn.mod.path}:{line} in {fn.qualname}",)
        fc = FACall(call_ids[id(call)], fn.mod.path, line, col, fn.qualname, expr_label(call.func),
                    tuple(c["entries"]), tuple(c["versions"]), tuple(bids),
                    tuple(sorted({site_ids[s] for s in c["sites"]}, key=lambda x: int(x[1:]))),
                    tuple(sorted(set(c["opaque"]))), c["reaches_fa4"], c["coverage"], c["why"],
                    bool(c["tte"]), via, c.get("status", "n/a"), tuple(c.get("verdicts", ())))
        report.calls.append(fc)
        if fc.reaches_fa4 and fc.status in ("broken", "unknown"):
            fa4names = sorted({v.entry.name for v, _ in c.get("fa4", c["fa"])
                               if v.entry.version == "fa4"})
            per = [v for v in fc.verdicts if v.status == fc.status]
            rels = ", ".join(v.release for v in per)
            first = per[0].witness if per else fc.coverage_reason
            if fc.status == "broken":
                findings.append(Finding(
                    R.BROKEN_CALL.code, R.BROKEN_CALL.name,
                    f"{fc.callee}(...) reaches FA4 {', '.join(fa4names)} and breaks on {rels}: "
                    f"{first}", fn.mod.path, line, col, via, "error"))
            else:
                findings.append(Finding(
                    R.UNPROVED_CALL.code, R.UNPROVED_CALL.name,
                    f"{fc.callee}(...) reaches FA4 {', '.join(fa4names)}, not proved on {rels}: "
                    f"{first}", fn.mod.path, line, col, via, "unknown"))

    # wrappers: every chain judged by behaviour --------------------------------------------
    if judge is not None:
        from analyzer.sites.behaviour import merged_forms
        seen = set()
        for (chain, entry), r in sorted(judge._chain.items(), key=lambda x: str(x[0])):
            if not chain:
                continue
            label = " -> ".join(w.label for w in reversed(chain))
            # reported where the chain is completed: the outermost wrapping call
            at = next((w.at for w in reversed(chain) if w.at), ("", 0, 0))
            key = (label, entry, at)
            if key in seen:
                continue
            seen.add(key)
            used = merged_forms(judge.forms_used.get((chain, entry), set()))
            rr = r.for_forms(used) if used else r
            report.wrappers.append(WrapperTrust(f"{label} [{entry}]", "behaviour", at[0], at[1],
                                                label, rr.status == "proved", rr.witness))
            if r.status != "proved" and r.alters and judge.prefills(chain) is None:
                # (a chain of functools.partial calls with literal keywords changes nothing the
                # call passes: each call through it is judged with them, ``verdicts``)
                # a wrapper that changes windows: judged on the forms the tree's calls use
                level = {"broken": "error", "unknown": "unknown"}.get(rr.status, "note") \
                    if used else "note"
                why = rr.counterexample or rr.witness if level != "note" else \
                    (r.counterexample or r.witness)
                scope = (f" in the call forms the tree uses ({', '.join(sorted(used))})"
                         if level != "note" else
                         " (only in call forms no call in the tree uses)" if used else "")
                findings.append(Finding(
                    R.UNTRUSTED_WRAPPER.code, R.UNTRUSTED_WRAPPER.name,
                    f"{label} around FA4 {entry} changes the window but is not proved "
                    f"({rr.status if level != 'note' else r.status}){scope}: {why}",
                    at[0], at[1], 1 if at[1] else 0, (), level))
    findings = list({(f.path, f.line, f.col, f.code, f.message): f for f in findings}.values())
    findings.sort(key=lambda f: (f.path, f.line, f.col, f.code, f.message))
    report.findings = findings


