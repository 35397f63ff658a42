"""The model flags every translating command shares: --model, --num-beams, --max-new-tokens.

``interact``, ``translate`` and ``attention`` take the same flags and need the same checks
(ranges, and a friendly line when the default model has not been trained yet), so they
are defined once here; ``--backend`` is for the commands that only translate (the
attention heatmap needs the transformers model itself). Cheap to import: no torch.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.config.run_config import DEFAULT_OUTPUT_DIR
from workbench.core.config.settings import DEFAULT_QE, PROMPTS, read_prompt_template
from workbench.core.decoding import AUTO_LABEL, BACKENDS, check_beams, check_new_tokens
from workbench.core.run_folder.layout import OutputFolder
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    #: What ``add_subparsers`` returns: each command module registers itself on it.
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]
    from workbench.core.decoding import DecodeOptions
    from workbench.core.translate.translator import Translator

DEFAULT_MODEL_DIR = str(OutputFolder(Path(DEFAULT_OUTPUT_DIR)).best_model)

#: A flag and its ``add_argument`` keywords: commands declare their flags as tables.
Flag = tuple[str, dict[str, Any]]
#: ``--model`` of the commands that read a saved model folder (lab, export).
MODEL_FLAG: Flag = (
    "--model",
    {"default": DEFAULT_MODEL_DIR, "help": f"saved model folder (default: {DEFAULT_MODEL_DIR})"},
)
#: ``--output-dir`` of the commands that read the runs (runs, compare).
OUTPUT_DIR_FLAG: Flag = (
    "--output-dir",
    {
        "default": DEFAULT_OUTPUT_DIR,
        "metavar": "DIR",
        "help": f"where the runs live (default: {DEFAULT_OUTPUT_DIR})",
    },
)
#: ``--qe`` of interact, tui, serve and score: a reference-free score of each translation.
QE_FLAG: Flag = (
    "--qe",
    {
        "nargs": "?",
        "const": DEFAULT_QE,
        "metavar": "MODEL",
        "help": "score each translation without a reference, with a reference-free COMET "
        f"model: a Hub id or a folder (alone: {DEFAULT_QE}, gated on the Hub: accept its "
        "licence, set HF_TOKEN)",
    },
)


def without_flags(argv: Sequence[str], flags: Sequence[Flag]) -> list[str]:
    """``argv`` without ``flags`` and their values, each as its table entry takes one: a
    switch (``store_true``) none, an optional value (``nargs="?"``) the next argument
    unless it is a flag, any other the next argument; ``--flag=value`` is one argument."""
    takes = {
        name: "none" if o.get("action") == "store_true" else o.get("nargs") or "one"
        for name, o in flags
    }
    kept: list[str] = []
    skip = False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name not in takes:
            kept.append(arg)
        elif "=" not in arg and takes[name] != "none":
            following = argv[i + 1] if i + 1 < len(argv) else "-"
            skip = takes[name] == "one" or not following.startswith("-")
    return kept


def add_command(
    subparsers: Subparsers,
    name: str,
    help: str,
    description: str | None = None,
    flags: Sequence[Flag] = (),
) -> argparse.ArgumentParser:
    """Register a subcommand with the flags of its table, in order."""
    parser = subparsers.add_parser(name, help=help, description=description)
    for flag, options in flags:
        parser.add_argument(flag, **options)
    return parser


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Register the shared model flags on a subcommand."""
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL_DIR,
        help=f"saved model folder or Hub id (default: {DEFAULT_MODEL_DIR})",
    )
    parser.add_argument("--num-beams", type=int, default=None, help="beams (default: the model's)")
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        default=None,
        help="generation length bound (default: the model's)",
    )


def add_backend_option(parser: argparse.ArgumentParser) -> None:
    """Register ``--backend`` (which engine generates) on a translating subcommand."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="auto (default): a CTranslate2 export of the model if one is "
        "up to date (workbench export --ctranslate2), else transformers",
    )


def add_language_options(parser: argparse.ArgumentParser, label: bool = True) -> None:
    """Register the direction flags on a translating subcommand: the languages, the
    T5-style prefix and (where the command has it) Marian's ``--label``. Each defaults
    to what the saved model recorded in its workbench.json."""
    parser.add_argument(
        "--source-lang",
        default=None,
        help="source language (en) or the model's code (eng_Latn); default: the model's "
        "recorded one, else en",
    )
    parser.add_argument(
        "--target-lang",
        default=None,
        help="target language (zh) or the model's code (zho_Hant, zh_CN); default: the "
        "model's recorded one, else zh",
    )
    parser.add_argument(
        "--source-prefix",
        default=None,
        help="text put before every source, for T5-style models (default: the model's)",
    )
    parser.add_argument(
        "--prompt",
        default=None,
        choices=PROMPTS,
        help="how a decoder-only model is asked: chat (its chat template), alma or "
        "seed-x; default: the model's recorded prompt, else chat",
    )
    parser.add_argument(
        "--prompt-template",
        default=None,
        metavar="FILE",
        help="a decoder-only model's own prompt: a file with {source} (and {source_lang}, "
        "{target_lang}); default: the model's recorded one",
    )
    if label:
        parser.add_argument(
            "--label",
            default=AUTO_LABEL,
            help="Marian's target-language token such as '>>cmn_Hant<<', or none; default "
            "auto: the saved model's own, or the label of the target language",
        )


def language_choice(args: argparse.Namespace) -> DirectionRequest:
    """The direction flags as ``Translator.from_pretrained`` and ``load_attention_model``
    take them."""
    template = args.prompt_template
    label = str(args.label).strip() if hasattr(args, "label") else AUTO_LABEL
    return DirectionRequest(
        source_lang=args.source_lang,
        target_lang=args.target_lang,
        target_label=(
            None
            if label.lower() in ("none", "")
            else AUTO_LABEL
            if label.lower() == AUTO_LABEL
            else label
        ),
        source_prefix=args.source_prefix,
        prompt=args.prompt,
        prompt_template=read_prompt_template(template) if template is not None else None,
    )


def check_model_options(args: argparse.Namespace) -> None:
    """One clear line for a bad value or a default model that does not exist yet."""
    if args.num_beams is not None:
        check_beams(args.num_beams, "--num-beams")
    if args.max_new_tokens is not None:
        check_new_tokens(args.max_new_tokens, "--max-new-tokens")
    check_default_model(args.model)


def check_default_model(model: str) -> None:
    """The friendly line for the default model folder before any run has written it."""
    if model == DEFAULT_MODEL_DIR and not Path(DEFAULT_MODEL_DIR).exists():
        raise WorkbenchError(
            f"no saved model at {DEFAULT_MODEL_DIR} yet; train one first "
            "(workbench train --headless --preset demo) or pass --model"
        )


def load_translator(args: argparse.Namespace) -> tuple[Translator, DecodeOptions]:
    """The model the flags name, and its own decoding with the user's beams/length."""
    from workbench.core.translate.translator import Translator

    check_model_options(args)
    translator = Translator.from_pretrained(
        args.model, backend=args.backend, request=language_choice(args)
    )
    return translator, translator.default_options().overridden(args.num_beams, args.max_new_tokens)
