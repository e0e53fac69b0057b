"""Answer parsers, one module per answer kind: `moa_answer` (YES/NO + MoA graph), `option_answer`
(Delete/Invert-Link options), `yes_no_answer` (Add-Link negatives). Imports nothing."""
