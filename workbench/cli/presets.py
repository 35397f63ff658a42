"""``workbench presets``: the presets, and with a name every value a run of it uses."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.cli.options import add_command
from workbench.core.config.build import build_config
from workbench.core.config.presets import PRESET_NOTES, PRESETS

if TYPE_CHECKING:
    from workbench.cli.options import Subparsers


def add_parser(sub: Subparsers) -> None:
    """Register ``presets`` on the CLI's subparsers."""
    add_command(
        sub,
        "presets",
        help="list the presets and their settings",
        flags=[("name", {"nargs": "?", "help": "show one preset in full"})],
    )


def run(args: argparse.Namespace) -> int:
    """Print presets; with a name, every setting of that preset."""
    if args.name:
        config = build_config(args.name)
        print(f"# {args.name}: {PRESET_NOTES.get(args.name, '')}")
        print(
            f"# the values `workbench train --preset {args.name}` uses; a --config file "
            "and flags override them"
        )
        for key, value in config.to_dict().items():
            print(f"{key} = {value!r}")
        return 0
    for name in PRESETS:
        config = build_config(name)
        print(
            f"{name:12} model={config.model}  data={config.data}"
            + (f" ({config.data_config})" if config.data_config else "")
        )
    return 0
