"""The run flags are generated from ``RunConfig``: one flag per setting, in its group."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from workbench.cli.flags import config_from_args
from workbench.cli.main import build_parser
from workbench.core.config.build import build_config, setting_type
from workbench.core.config.presets import DEFAULT_PRESET, PRESETS
from workbench.core.config.run_config import RunConfig
from workbench.core.config.settings import SETTING_GROUPS, setting_flag
from workbench.errors import WorkbenchError

#: The settings with no flag of their own: the preset is ``--preset``, the base the
#: flags override.
EXCLUDED = {"preset"}
SETTINGS = [f for f in fields(RunConfig) if f.name not in EXCLUDED]


def kebab(name: str) -> str:
    return "--" + name.replace("_", "-")


def help_of(command: str, monkeypatch: pytest.MonkeyPatch, capsys) -> str:
    """``workbench COMMAND --help`` unwrapped (a wide terminal), as printed."""
    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    return capsys.readouterr().out


def has_flag(text: str, flag: str) -> bool:
    """``flag`` as an option of its own (``--data`` is not found in ``--data-config``)."""
    return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text) is not None


def sections(text: str) -> dict[str, str]:
    """The help's argument groups, by title (``data settings``), each with its lines."""
    parts = re.split(r"^(\S[^\n]*):\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def config_of(*argv: str) -> RunConfig:
    return config_from_args(build_parser().parse_args(["train", *argv]))


def test_the_preset_is_chosen_once_by_preset_from_the_presets(monkeypatch, capsys):
    """The preset is the base the settings override, so it is no setting of a group:
    ``--preset`` stands once in the help, with every preset as its choices."""
    groups = sections(help_of("train", monkeypatch, capsys))
    assert f"--preset {{{','.join(sorted(PRESETS))}}}" in groups["options"]
    settings = [text for title, text in groups.items() if title.endswith(" settings")]
    assert len(settings) == len(SETTING_GROUPS)
    assert not any(has_flag(text, "--preset") for text in settings)
    assert config_of("--preset", "nllb-en-zh").preset == "nllb-en-zh"
    with pytest.raises(SystemExit):
        config_of("--preset", "nllb")
    assert "argument --preset: invalid choice: 'nllb'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["train", "tui", "sweep"])
def test_every_setting_is_its_kebab_case_flag_with_its_help(command, monkeypatch, capsys):
    text = help_of(command, monkeypatch, capsys)
    for f in SETTINGS:
        assert has_flag(text, setting_flag(f)), f.name
        assert f.metadata["help"] in text, f.name
    assert has_flag(text, "--preset")
    assert has_flag(text, "--config")
    assert has_flag(text, "--set")


def test_each_setting_is_shown_in_its_group(monkeypatch, capsys):
    groups = sections(help_of("train", monkeypatch, capsys))
    for name, description in SETTING_GROUPS.items():
        assert description in groups[f"{name} settings"]
    for f in SETTINGS:
        assert has_flag(groups[f"{f.metadata['group']} settings"], setting_flag(f)), f.name


def test_help_shows_the_type_and_the_presets_defaults(monkeypatch, capsys):
    text = help_of("train", monkeypatch, capsys)
    assert "--learning-rate FLOAT, --lr FLOAT" in text
    assert "--target-label TEXT, --label TEXT" in text
    assert "--batch-size INT" in text


@pytest.mark.parametrize(
    ("flag", "name"), [("--learning-rate", "learning_rate"), ("--batch-size", "batch_size")]
)
def test_the_help_gives_the_value_a_run_of_each_preset_uses(flag, name, monkeypatch, capsys):
    """``[default: …; preset: …]``: what a run of the default preset uses, then, in the
    presets' order, each preset whose runs use another value, written as a user writes it
    (``2e-05``, ``0.0007``, ``16``)."""
    flat = " ".join(help_of("train", monkeypatch, capsys).split())  # unwrapped
    runs = {preset: getattr(build_config(preset), name) for preset in PRESETS}
    default = runs[DEFAULT_PRESET]
    others = "".join(f"; {preset}: {value:g}" for preset, value in runs.items() if value != default)
    help_text = flat.split(f" {flag} ", 1)[1]  # the flag's line and what follows it
    shown = help_text[help_text.index("[default: ") : help_text.index("]") + 1]
    assert shown == f"[default: {default:g}{others}]"
    assert len({value for value in runs.values()}) > 2  # the presets differ: a real test


@pytest.mark.parametrize("preset", ["demo", "nllb-en-zh"])
def test_the_presets_value_or_the_flags_reaches_the_trainer(preset: str, tmp_path: Path):
    """A preset's learning rate and batch size are the trainer's, and a flag's replaces
    them there."""
    from workbench.core.records.run_records import Precision
    from workbench.core.train.recipe import training_arguments

    def trainer_args(*flags: str):
        cpu = Precision("cpu", "fp32", False)
        return training_arguments(config_of("--preset", preset, *flags), tmp_path, cpu)

    plain, flagged = trainer_args(), trainer_args("--lr", "3e-4", "--batch-size", "3")
    preset_config = build_config(preset)
    assert plain.learning_rate == preset_config.learning_rate != 3e-4
    assert plain.per_device_train_batch_size == preset_config.batch_size != 3
    assert (flagged.learning_rate, flagged.per_device_train_batch_size) == (3e-4, 3)


@pytest.mark.parametrize("f", SETTINGS, ids=lambda f: f.name)
def test_every_flag_sets_its_own_setting(f):
    value = None if setting_type(f.name)[0] == "bool" else "7"
    args = build_parser().parse_args(["train", setting_flag(f), *([value] if value else [])])
    # A switch on by default (clean) is set off by its --no- flag.
    assert getattr(args, f.name) == (value or f.default is not True)


def test_a_switch_on_by_default_is_turned_off_by_its_no_flag():
    assert config_of("--no-clean").clean is False
    assert config_of().clean is True


@pytest.mark.parametrize(
    ("short", "long", "value", "name", "expected"),
    [
        ("--lr", "--learning-rate", "1e-3", "learning_rate", 1e-3),
        ("--label", "--target-label", ">>cmn_Hant<<", "target_label", ">>cmn_Hant<<"),
        ("--label", "--target-label", "none", "target_label", None),
    ],
)
def test_aliases_set_the_same_setting_as_the_long_flag(short, long, value, name, expected):
    assert getattr(config_of(short, value), name) == expected
    assert getattr(config_of(long, value), name) == expected


def test_a_flag_not_given_leaves_the_preset_value():
    assert config_of("--preset", "demo") == build_config("demo")
    demo = config_of("--preset", "demo", "--epochs", "2")
    assert demo.epochs == 2.0
    assert demo.learning_rate == build_config("demo").learning_rate
    assert (demo.fp16, demo.bf16) == (False, None)


def test_a_flag_not_given_leaves_the_toml_value(tmp_path: Path):
    toml = tmp_path / "run.toml"
    toml.write_text("learning_rate = 1e-4\nbf16 = false\n", encoding="utf-8")
    config = config_of("--preset", "demo", "--config", str(toml))
    assert (config.learning_rate, config.bf16) == (1e-4, False)
    assert (
        config_of("--preset", "demo", "--config", str(toml), "--lr", "5e-4").learning_rate == 5e-4
    )


def test_boolean_flags_turn_the_setting_on():
    assert config_of("--preset", "demo", "--bf16").bf16 is True


def test_a_bad_value_is_the_configs_one_sentence():
    with pytest.raises(WorkbenchError, match=r"^config 'batch_size' must be int, got 'lots'$"):
        config_of("--batch-size", "lots")
    with pytest.raises(WorkbenchError, match="learning rate must be in"):
        config_of("--learning-rate", "-5")


def test_help_says_what_a_run_does_and_which_presets_need_the_hub(monkeypatch, capsys):
    flat = " ".join(help_of("train", monkeypatch, capsys).split())
    assert (
        "Without flags, the opus-en-zh preset: Helsinki-NLP/opus-mt-en-zh on 50,000 pairs of "
        "wmt/wmt19, batch 16, lr 2e-05, 3 epochs, max length 128/128." in flat
    )
    assert "Every preset but demo downloads its model and data from the Hugging Face Hub" in flat
    assert "demo is the one that runs offline" in flat
    assert "offline: demo" not in flat
    assert "`workbench presets NAME` prints every value a run of NAME will use" in flat


def test_presets_name_prints_the_values_a_run_uses(capsys):
    from workbench.cli.main import main

    assert main(["presets", "opus-en-zh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "# the values `workbench train --preset opus-en-zh` uses; a --config file and flags "
        "override them"
    )
    for line in ("batch_size = 16", "learning_rate = 2e-05", "epochs = 3.0"):
        assert line in lines
