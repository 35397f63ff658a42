"""Configuration before any run exists: :class:`~.run_config.RunConfig`'s fields
(``run_config``), what each setting is and how it is written (``settings``), the named
presets (``presets``), and building and checking one config from a preset, a TOML file
and flags (``build``). Part of the core's base: it imports only the other base parts.
"""
