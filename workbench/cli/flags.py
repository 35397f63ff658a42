"""The run flags: ``--preset``, ``--config``, ``--set`` and one flag per run setting, and
how they become one ``RunConfig``. ``train``, ``tui``, ``serve`` and ``sweep`` take them.

The flags are made from ``RunConfig``'s fields, as ``HfArgumentParser`` makes them from a
dataclass: each setting's flag is its name in kebab case, with its group, help and aliases
from the field's metadata; its value is parsed and checked by the config, not here.
Only argparse and the config load at import.
"""

from __future__ import annotations

import argparse
from dataclasses import Field, fields
from typing import Any

from workbench.core.config.build import build_config, preset_values, setting_type
from workbench.core.config.presets import DEFAULT_PRESET, PRESETS
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import (
    SETTING_GROUPS,
    load_toml,
    setting_flag,
    setting_value,
)
from workbench.errors import WorkbenchError

#: The run settings that are no flag of their own. The preset is the base that the TOML
#: file and the flags override, so it is chosen by --preset (with its choices), once.
NOT_FLAGS = ("preset",)
#: What a setting's value looks like in --help, by its type.
METAVARS = {"int": "INT", "float": "FLOAT", "str": "TEXT"}


def flag_settings() -> list[Field[Any]]:
    """The RunConfig fields that are flags, in field order."""
    return [f for f in fields(RunConfig) if f.name not in NOT_FLAGS]


def default_text(name: str) -> str:
    """``default: 2e-05; demo: 0.0007``: the default preset's value, then each other
    preset's where it differs."""
    values = preset_values(name)
    default = values[DEFAULT_PRESET]
    others = [f"{preset}: {setting_value(v)}" for preset, v in values.items() if v != default]
    return "; ".join([f"default: {setting_value(default)}", *others])


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Register --preset, --config, --set and one flag per run setting, in its group."""
    parser.add_argument(
        "--preset",
        default=DEFAULT_PRESET,
        choices=sorted(PRESETS),
        help=f"starting settings (default: {DEFAULT_PRESET}). Every preset but demo "
        "downloads its model and data from the Hugging Face Hub, or a mirror set by "
        "HF_ENDPOINT, and fails without one; demo is the one that runs offline. "
        "`workbench presets NAME` prints every value a run of NAME will use; the "
        f"defaults below are {DEFAULT_PRESET}'s, then other presets' where they differ",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML file of settings")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a setting by its TOML key, e.g. --set label_smoothing=0.1",
    )
    groups = {
        name: parser.add_argument_group(f"{name} settings", text)
        for name, text in SETTING_GROUPS.items()
    }
    for f in flag_settings():
        group = groups[f.metadata["group"]]
        names = (setting_flag(f), *f.metadata["aliases"])
        kind, _ = setting_type(f.name)
        text = f.metadata["help"]
        options: dict[str, Any]
        if kind == "bool":
            # store_const, not store_true: a flag not given stays None and leaves the
            # preset's or the TOML file's value alone. A setting on by default is
            # switched off by its --no- flag (--no-clean).
            options = {"action": "store_const", "const": f.default is not True}
            if f.default is True:  # the flag is --no-…: say what giving it does
                text = f"turn off (on by default): {text}"
        else:
            # Kept as typed: build_config coerces and checks it, so a bad value is the
            # config's one sentence, not argparse's usage message.
            options = {"metavar": METAVARS[kind]}
            if f.metadata["bare"] is not None:  # --comet alone: its default model
                options.update(nargs="?", const=f.metadata["bare"])
            text = f"{text} [{default_text(f.name)}]"
        help_text = text.replace("%", "%%")  # argparse %-formats help texts
        group.add_argument(*names, dest=f.name, default=None, help=help_text, **options)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """Preset, then --config TOML, then flags."""
    overrides: dict[str, Any] = {}
    for f in flag_settings():
        value = getattr(args, f.name, None)
        if value is not None:
            overrides[f.name] = value
    for item in getattr(args, "set", []) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise WorkbenchError(f"--set takes KEY=VALUE, got '{item}'")
        overrides[key.strip()] = value.strip()
    toml_values = load_toml(args.config) if getattr(args, "config", None) else None
    return build_config(args.preset, toml_values, overrides)
