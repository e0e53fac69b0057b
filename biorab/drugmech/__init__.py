"""drugmech."""
