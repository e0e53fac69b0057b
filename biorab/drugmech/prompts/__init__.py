"""Prompts, one module per query kind (`add_link`, `edit_link`, `factual` with `factual_associations`),
the shared MoA rendering rules (`moa_text`), the exact template strings as data (`texts`), and
`render.render_prompt`, the one entry point. Imports nothing."""
