"""fa4-audit: prove a FlashAttention 4 window-sentinel fix is right and complete.

Layers (see README "Architecture"): sources -> extraction -> evaluation -> model -> reports.
Analysis never prints; renderers never compute.
"""

__version__ = "0.1.0"

# Exit statuses shared by every command, the pytest gate and `make audit`.
EXIT_CLEAN = 0      # analysed everything, nothing unsafe
EXIT_FINDINGS = 1   # analysed everything, found something unsafe
EXIT_ERROR = 2      # could not analyse (bad input, missing source, usage): fail closed
