"""A run's configuration written back as the ``workbench train`` flags that make it again:
``--preset`` (unless it is the default), then each setting whose value differs from the
preset's. A message that sends the user to the same run launched another way (sharded
under ``torchrun``) quotes them, so the command it prints is the run that was asked for,
whatever mix of preset, TOML file and flags made it.
"""

from __future__ import annotations

from dataclasses import fields

from workbench.core.config.build import build_config
from workbench.core.config.presets import DEFAULT_PRESET
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import flag_name, setting_flag, setting_value


def command_flags(config: RunConfig, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The flags that rebuild ``config`` from its preset, in the settings' order, each
    value a token of its own (unquoted); the settings in ``leave_out`` are not given.

    A switch is its own flag where it has one (``--lora``; ``--no-clean`` for one that is
    on by default), else ``--set name=value`` (a switch the preset turns on, turned off).
    """
    preset = build_config(config.preset)
    flags = [] if config.preset == DEFAULT_PRESET else ["--preset", config.preset]
    for setting in fields(RunConfig):
        value = getattr(config, setting.name)
        if setting.name in ("preset", *leave_out) or value == getattr(preset, setting.name):
            continue
        if not isinstance(value, bool):
            flags += [flag_name(setting.name), setting_value(value)]
        elif value is not (setting.default is True):  # its flag sets it to this value
            flags.append(setting_flag(setting))
        else:
            flags += ["--set", f"{setting.name}={setting_value(value)}"]
    return flags
