"""One module per sub-command. Each defines

    NAME: str                      -- the sub-command's name
    HELP: str                      -- one line for the command list
    DESCRIPTION: str               -- the --help text (examples welcome)
    add_arguments(parser) -> None
    run(args, stdout, stderr) -> int   -- 0 clean, 1 findings, 2 could not analyse

Handlers never print to sys.stdout directly: results go to ``stdout``, talk to ``stderr``,
so tests run them in-process.
"""

# Order is the order shown in --help.
COMMAND_MODULES = ["table", "history", "sites", "audit", "make_audit", "verify_gpu"]
