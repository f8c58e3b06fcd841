"""The one exception type the CLI turns into a one-line message and exit status 2."""


class AuditError(Exception):
    """Something the audit needs could not be read, fetched, parsed or evaluated.

    The message is one line that says what failed and what to do; the CLI prints it as
    ``fa4-audit: error: <message>`` and exits 2 (fail closed: never "safe" on what it did not see).
    """

    def __init__(self, message: str, *, hint: str | None = None):
        self.hint = hint
        super().__init__(message if hint is None else f"{message} ({hint})")
