"""Configuration before any run exists: :class:`~.run_config.RunConfig`'s fields
(``run_config``), what each setting is and how it is written (``settings``), the named
presets (``presets``), building and checking one config from a preset, a TOML file
and flags (``build``), a config written back as the flags that make it (``command``),
and what a user asks of a model's direction (``direction_request``). Part of the core's
base: it imports only the other base parts.
"""
