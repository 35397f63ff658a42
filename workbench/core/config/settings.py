"""What a setting is, before any run exists: its group, its help, the named choices it
takes, how its value is written, and the TOML file that sets it.

:class:`workbench.core.config.run_config.RunConfig` declares its fields with :func:`setting`;
``workbench train --help``, ``workbench presets`` and the sweep's tables write values
with :func:`setting_value`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import field
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib

#: ``bleu_tokenize`` value meaning "the one for the target language" (resolved on build).
AUTO_TOKENIZER = "auto"
BLEU_TOKENIZERS = (
    AUTO_TOKENIZER,
    "13a",
    "zh",
    "intl",
    "char",
    "none",
    "ja-mecab",
    "ko-mecab",
    "flores200",
)
#: Where metrics can go besides metrics.jsonl (always written).
REPORT_TARGETS = ("none", "tensorboard")
#: The transformers learning-rate schedules a run may use.
LR_SCHEDULERS = ("linear", "cosine", "constant", "constant_with_warmup", "inverse_sqrt")

#: The cleaning rules, in the order they are applied and counted
#: (:mod:`workbench.core.data.cleaning` says what each drops).
CLEANING_RULES = (
    "empty",
    "placeholder",
    "copy",
    "script",
    "ratio",
    "long",
    "duplicate",
    "repeated source",
    "in test set",
)
#: The reference-based metric WMT has ranked systems with since 2022 (COMET-22): what
#: ``--comet`` scores with when given alone.
DEFAULT_COMET = "Unbabel/wmt22-comet-da"
#: The reference-free one (CometKiwi-22, gated on the Hub): what ``--qe`` scores a
#: translation of the user's own sentence with.
DEFAULT_QE = "Unbabel/wmt22-cometkiwi-da"
#: What ``--metricx`` scores with when no model is named: the smallest published
#: MetricX-24 in fp32 (1.2B parameters); the README recommends XXL for the best agreement.
DEFAULT_METRICX = "google/metricx-24-hybrid-large-v2p6"
#: The tokenizer MetricX's README runs every checkpoint with (its checkpoints hold none).
DEFAULT_METRICX_TOKENIZER = "google/mt5-xl"

#: The prompts built in for decoder-only models (:mod:`workbench.core.model.prompts`).
PROMPTS = ("chat", "alma", "seed-x")
#: The fields a user's prompt template may name.
TEMPLATE_FIELDS = ("source", "source_lang", "target_lang")


def check_template(text: str, where: str) -> None:
    """Fail in one line unless ``text`` is a prompt template naming ``{source}`` and only
    the fields a template may name (``where`` says which template, for the message)."""
    import string

    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
    except ValueError as err:
        raise WorkbenchError(
            f"prompt template {where} is not a valid template ({err}); write {{source}} "
            "where the sentence goes and {{ }} for a literal brace"
        ) from None
    if "source" not in fields:
        raise WorkbenchError(
            f"prompt template {where} has no {{source}}: write {{source}} where the "
            "sentence goes (and {source_lang}, {target_lang} where you like)"
        )
    unknown = sorted(fields - set(TEMPLATE_FIELDS))
    if unknown:
        raise WorkbenchError(
            f"prompt template {where} names {{{unknown[0]}}}, which is not a field; use "
            f"{', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}"
        )


def read_prompt_template(value: str) -> str:
    """A ``prompt_template`` setting as text: the template itself when it names
    ``{source}`` (a TOML value, or config.json's record), else the file it names."""
    if "{source}" in value:
        return value
    path = Path(value).expanduser()
    if not path.is_file():
        raise WorkbenchError(
            f"prompt template file '{value}' not found; pass a text file with {{source}} "
            "where the sentence goes"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise WorkbenchError(f"cannot read prompt template '{value}': {err}") from None
    check_template(text, f"'{value}'")
    return text


#: What chooses the best epoch on the validation set.
SELECT_ON = ("bleu", "comet")

#: Which epoch checkpoints ``average_checkpoints`` averages.
AVERAGE_CHOICES = ("best", "last")

#: The groups a setting belongs to (``workbench train --help`` shows one section each).
SETTING_GROUPS = {
    "data": "what the model is trained and tested on: sampling, split and lengths",
    "model": "the model fine-tuned, or the shape of one built with --model scratch",
    "training": "how the model is optimised: batch, schedule, precision and seed",
    "memory": "big models on small devices: LoRA adapters, gradient checkpointing and the "
    "memory plan checked before any weight is loaded",
    "decoding": "how the per-epoch and the before/after translations are made and scored",
    "picking": 'the test set\'s "after" decoded a second way, beside beam search: '
    "candidates, one picked by QE or MBR (train --pick; the flags are translate's)",
    "objective": "what the model is trained towards: the references (sft), or its own "
    "candidates ranked by a metric (best, cpo, dpo); the candidates are drawn as picking's",
    "output": "where the run is written and what it reports",
}


def setting(
    default: Any,
    *,
    group: str,
    help: str,
    aliases: tuple[str, ...] = (),
    bare: str | None = None,
) -> Any:
    """A RunConfig field with its group, its help and the short flags that also set it;
    ``bare``: the value its flag takes when given without one (``--comet`` alone)."""
    if group not in SETTING_GROUPS:
        raise ValueError(f"unknown setting group {group!r}; one of {', '.join(SETTING_GROUPS)}")
    metadata = {"group": group, "help": help, "aliases": aliases, "bare": bare}
    return field(default=default, metadata=metadata)


def flag_name(name: str) -> str:
    """A setting's flag: ``learning_rate`` -> ``--learning-rate``."""
    return "--" + name.replace("_", "-")


def setting_flag(f: Any) -> str:
    """A setting's own flag (``f`` a RunConfig field): its name in kebab case, or
    ``--no-clean`` for a switch that is on by default (the flag a user gives is the one
    that changes something)."""
    return ("--no-" + f.name.replace("_", "-")) if f.default is True else flag_name(f.name)


def setting_value(value: Any) -> str:
    """A config value as the user would write it (``none`` for null)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        short = f"{value:g}"  # 2 epochs, not 2.0; 0.0007 stays 0.0007
        return short if float(short) == value else repr(value)  # never a digit lost
    return str(value)


def load_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML config file; keys are RunConfig field names (a [run] table also works)."""
    p = Path(path)
    if not p.is_file():
        raise WorkbenchError(f"config file '{p}' not found; pass an existing TOML file")
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise WorkbenchError(f"config file '{p}' is not valid TOML: {err}") from None
    if isinstance(data.get("run"), dict):
        data = {**{k: v for k, v in data.items() if k != "run"}, **data["run"]}
    return data
