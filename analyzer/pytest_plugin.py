"""pytest gate for a framework's CI (filled in by the product issue)."""


def pytest_addoption(parser):
    group = parser.getgroup("fa4-audit", "FlashAttention 4 window-sentinel audit")
    group.addoption("--fa4-audit-te", action="store", default=None, metavar="PATH",
                    help="TE SPEC (path, version, installed) to audit; enables the gate")
    group.addoption("--fa4-audit-fa4", action="append", default=None, metavar="SPEC",
                    help="FA4 SPEC to audit against (repeatable; default: newest)")
