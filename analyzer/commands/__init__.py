"""One module per sub-command. Each defines

    NAME: str                      -- the sub-command's name
    HELP: str                      -- one line for the command list
    DESCRIPTION: str               -- the --help text (examples welcome)
    add_arguments(parser) -> None
    run(args, stdout, stderr) -> int   -- 0 clean, 1 findings, 2 could not analyse

Handlers never print to sys.stdout directly: results go to ``stdout``, talk to ``stderr``,
so tests run them in-process.
"""

# name -> module, in the order shown in --help. Only the chosen command's module is imported
# (some pull in libcst or torch), so the one-line help of each lives here.
COMMAND_MODULES = {"table": "table", "history": "history", "sites": "sites", "audit": "audit",
                   "make-audit": "make_audit", "verify-gpu": "verify_gpu", "upgrade": "upgrade"}
COMMAND_HELP = {
    "table": "equivalence table: TE's window pairs through each FA4 resolver, as-is and normalised",
    "history": "every flash-attn-4 release: resolver variant, fingerprint, whether TE's pairs break",
    "sites": "per-call verdicts: every FA4-reaching call proved, broken or unknown on each FA4 release",
    "audit": "equivalence table + call-site verdicts + codemod dry run, written as md/json/sarif",
    "make-audit": "audit TE as released AND the same tree patched by fa4_patch (what `make audit` runs)",
    "verify-gpu": "run TE's window pairs through the real FA4 kernels (SM90/SM100 GPU), as-is and wrapped",
    "upgrade": "upgrade hazards: version gates, CI blind spots (FA4 off, old pins, same-backend CP), API drift",
}
