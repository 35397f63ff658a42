"""What a COMET model's ``hparams.yaml`` says, read into the settings that change a score.

Unbabel's models are folders with ``hparams.yaml`` beside ``checkpoints/model.ckpt``.
unbabel-comet 2.2.7 takes the model class from the YAML's ``class_identifier`` and every
other setting from the checkpoint's own ``hyper_parameters`` (Lightning's
``load_from_checkpoint``), except that a YAML ``layer_transformation: sparsemax_patch``
makes the layer mix a softmax (its fix for issue #244, which the Hub's CometKiwi files
carry). :func:`merged_settings` does the same, so the YAML alone serves the memory plan
before the checkpoint is read, and the checkpoint decides once it is.

Only what changes a score is read. A class or setting the workbench does not implement is
refused in one line rather than scored wrongly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from workbench.core.config.settings import DEFAULT_COMET, DEFAULT_QE
from workbench.core.records.typed import decode
from workbench.errors import WorkbenchError

HPARAMS_FILE = "hparams.yaml"
CHECKPOINT_FILE = "checkpoints/model.ckpt"

#: The classes scored here, and what each reads of a segment.
IMPLEMENTED = ("regression_metric", "referenceless_regression_metric", "unified_metric")
#: Unbabel's other classes, said by name when refused.
NOT_IMPLEMENTED = {
    "ranking_metric": "a ranking model (it was trained to rank translations, not score them)",
    "xcomet_metric": "xCOMET (its word-level error spans and their score mix)",
}
#: The encoder family every implemented Unbabel model of these classes uses.
ENCODER = "XLM-RoBERTa"

Mix = Literal["softmax", "sparsemax"]
Pool = Literal["avg", "max", "cls", "default"]
Segment = Literal["src", "mt", "ref"]


@dataclass(frozen=True)
class CometSettings:
    """The settings of one COMET model that change its scores."""

    class_identifier: str
    pretrained_model: str  # the encoder's config and tokenizer: a Hub id or a folder
    layer: str | int  # "mix": every layer mixed; an int: that hidden state alone
    mix: Mix  # how the layer weights are normalised (sparsemax zeroes some)
    layer_norm: bool  # each layer normalised over the segment's tokens before the mix
    pool: Pool  # how a segment's token vectors become one vector
    hidden_sizes: tuple[int, ...]  # the estimator's hidden layers
    activations: str  # a torch.nn module name, as ``str.title()`` spells it
    final_activation: str | None
    #: What a unified model reads, in its order (mt first); regression models read src,
    #: mt and (unless reference-free) ref, each encoded alone.
    input_segments: tuple[Segment, ...]

    @property
    def unified(self) -> bool:
        """One joint sequence (mt, then src and/or ref) scored from its first token."""
        return self.class_identifier == "unified_metric"

    @property
    def needs_reference(self) -> bool:
        """True when no score can be given without a reference translation."""
        if self.unified:
            return "src" not in self.input_segments
        return self.class_identifier == "regression_metric"

    @property
    def reads_reference(self) -> bool:
        """True when a given reference changes the score (else it is ignored)."""
        if self.unified:
            return "ref" in self.input_segments
        return self.class_identifier == "regression_metric"


@dataclass(frozen=True)
class HParams:
    """What ``hparams.yaml`` or a checkpoint's ``hyper_parameters`` sets that changes a
    score (the data paths, the optimizer and the rest are left), each value as found:
    :func:`merged_settings` checks each and names one it does not implement, so a value of
    the wrong type is refused with the value, not read as missing."""

    class_identifier: Any = None
    encoder_model: Any = None
    pretrained_model: Any = None
    layer: Any = None  # a regression model's
    sent_layer: Any = None  # a unified model's
    layer_transformation: Any = None
    layer_norm: Any = None
    pool: Any = None
    hidden_sizes: Any = None
    activations: Any = None
    final_activation: Any = None
    input_segments: Any = None


def hparams_of(hparams: dict[str, Any]) -> HParams:
    """The settings of a YAML's or a checkpoint's mapping (what it lacks, None)."""
    return decode(HParams, hparams) or HParams()


#: unbabel-comet 2.2.7's constructor defaults, per class: what a checkpoint that omits a
#: setting gets there.
_DEFAULTS: dict[str, dict[str, Any]] = {
    "regression_metric": {
        "pretrained_model": "xlm-roberta-large",
        "layer": "mix",
        "layer_transformation": "softmax",
        "layer_norm": True,
        "pool": "avg",
        "hidden_sizes": [3072, 1024],
        "activations": "Tanh",
        "final_activation": None,
        "encoder_model": ENCODER,
    },
    "unified_metric": {
        "pretrained_model": "microsoft/infoxlm-large",
        "sent_layer": "mix",
        "layer_transformation": "sparsemax",
        "layer_norm": True,
        "hidden_sizes": [3072, 1024],
        "activations": "Tanh",
        "final_activation": None,
        "input_segments": ["mt", "src", "ref"],
        "encoder_model": ENCODER,
    },
}
_DEFAULTS["referenceless_regression_metric"] = {
    **_DEFAULTS["regression_metric"],
    "hidden_sizes": [2048, 1024],
}


def _settings_loader() -> Any:
    """A safe YAML loader that reads a Python object's tag (``!!python/object/apply:
    pathlib.PosixPath``, which a COMET trained with ``train_data`` paths writes) as its
    value's text instead of building the object: no code runs, and no setting that changes
    a score is written so."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def as_text(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> str:
        return str(node.value if isinstance(node, yaml.ScalarNode) else suffix)

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", as_text)
    return Loader


def read_hparams(path: Path) -> dict[str, Any]:
    """``hparams.yaml`` as a dict; one line when it is missing or is not a YAML mapping."""
    import yaml

    folder = path.parent
    if not path.is_file():
        raise WorkbenchError(
            f"'{folder}' holds no {HPARAMS_FILE}, so it is not a COMET model folder; pass "
            f"a folder laid out as Unbabel's ({HPARAMS_FILE} beside {CHECKPOINT_FILE}) or a "
            f"Hub id such as {DEFAULT_COMET}"
        )
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_settings_loader())
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        reason = " ".join(str(err).split())[:120]
        raise WorkbenchError(
            f"'{path}' is not readable YAML ({reason}); download the model again"
        ) from None
    if not isinstance(data, dict):
        raise WorkbenchError(
            f"'{path}' is not a COMET {HPARAMS_FILE} (no mapping of settings); download "
            "the model again"
        )
    return data


def merged_settings(
    yaml_hparams: dict[str, Any], checkpoint_hparams: dict[str, Any] | None, where: str
) -> CometSettings:
    """The settings unbabel-comet 2.2.7 would score with: the class from the YAML, every
    other setting from the checkpoint's ``hyper_parameters`` where it has them (the YAML
    alone before the checkpoint is read), and ``sparsemax_patch`` read as softmax."""
    yaml_settings = hparams_of(yaml_hparams)
    identifier = yaml_settings.class_identifier
    if identifier in NOT_IMPLEMENTED:
        raise WorkbenchError(
            f"{where} is {NOT_IMPLEMENTED[identifier]} (class_identifier: {identifier}), "
            "which the workbench does not score; use a regression or unified COMET model "
            f"such as {DEFAULT_COMET} or {DEFAULT_QE}"
        )
    if identifier not in IMPLEMENTED:
        raise WorkbenchError(
            f"{where} has class_identifier {identifier!r}, a COMET model class the "
            f"workbench does not implement (it scores {', '.join(IMPLEMENTED)}); use "
            f"{DEFAULT_COMET} or {DEFAULT_QE}"
        )
    # A checkpoint without settings of its own (none of Unbabel's) gets the YAML's, where
    # Lightning would take the class's defaults: the YAML is what the model was saved with.
    found = checkpoint_hparams if checkpoint_hparams else yaml_hparams
    hparams = hparams_of({**_DEFAULTS[identifier], **found})
    if yaml_settings.layer_transformation == "sparsemax_patch":
        hparams = replace(hparams, layer_transformation="softmax")
    return _settings(identifier, hparams, where)


def _settings(identifier: str, h: HParams, where: str) -> CometSettings:
    """The settings of class ``identifier`` in ``h``, each checked."""

    def refuse(key: str, value: Any, supported: str) -> WorkbenchError:
        return WorkbenchError(
            f"{where} sets {key}: {value!r}, which the workbench does not implement "
            f"(it implements {supported}); use {DEFAULT_COMET} or {DEFAULT_QE}"
        )

    if h.encoder_model != ENCODER:
        raise refuse("encoder_model", h.encoder_model, ENCODER)
    unified = identifier == "unified_metric"
    layer = h.sent_layer if unified else h.layer
    if isinstance(layer, str) and layer.isdigit():
        layer = int(layer)
    if layer != "mix" and (not isinstance(layer, int) or isinstance(layer, bool) or layer < 0):
        raise refuse("layer", layer, "'mix' or a layer number")
    mix = h.layer_transformation
    if mix not in ("softmax", "sparsemax"):
        raise refuse("layer_transformation", mix, "softmax, sparsemax and sparsemax_patch")
    pool: Pool = "cls"  # a unified model always reads its first token
    if not unified:
        found = h.pool
        if found not in ("avg", "max", "cls", "default"):
            raise refuse("pool", found, "avg, max, cls and default")
        pool = found
    sizes = h.hidden_sizes
    if (
        not isinstance(sizes, list)
        or not sizes
        or not all(isinstance(s, int) and s > 0 for s in sizes)
    ):
        raise refuse("hidden_sizes", sizes, "a list of positive layer widths")
    segments: tuple[Segment, ...] = ("src", "mt", "ref")
    if identifier == "referenceless_regression_metric":
        segments = ("src", "mt")
    if unified:
        listed = h.input_segments
        if (
            not isinstance(listed, list)
            or not listed
            or listed[0] != "mt"
            or not set(listed) <= {"mt", "src", "ref"}
            or len(set(listed)) != len(listed)
            or len(listed) < 2
        ):
            raise refuse("input_segments", listed, "mt first, then src and/or ref")
        segments = tuple(listed)
    if not isinstance(h.activations, str):
        raise refuse("activations", h.activations, "a torch.nn activation's name")
    final = h.final_activation
    if final is not None and not isinstance(final, str):
        raise refuse("final_activation", final, "a torch.nn activation's name, or none")
    pretrained = h.pretrained_model
    if not isinstance(pretrained, str) or not pretrained:
        raise refuse("pretrained_model", pretrained, "a Hub id or a folder of the encoder")
    return CometSettings(
        class_identifier=identifier,
        pretrained_model=pretrained,
        layer=layer,
        mix=mix,
        layer_norm=bool(h.layer_norm),
        pool=pool,
        hidden_sizes=tuple(sizes),
        activations=h.activations,
        final_activation=final,
        input_segments=segments,
    )


#: Unbabel's published models by a name their Hub id or folder holds, and the name the
#: MT papers (and Kocmi et al.'s agreement curves) give them.
KNOWN_MODELS = (
    ("wmt22-cometkiwi-da", "CometKiwi-22"),
    ("wmt22-comet-da", "COMET-22"),
    ("wmt21-comet-qe-da", "COMET-21-QE"),
    ("wmt21-comet-da", "COMET-21"),
    ("wmt20-comet-qe-da", "COMET-20-QE"),
    ("wmt20-comet-da", "COMET-20"),
)


def metric_name(model: str, reference_free: bool) -> str:
    """``COMET-22`` for Unbabel/wmt22-comet-da (or a folder of it), ``CometKiwi-22`` for
    Unbabel/wmt22-cometkiwi-da; any other model ``COMET``, or ``COMET-QE`` when it reads
    no reference."""
    lowered = model.lower()
    for part, name in KNOWN_MODELS:
        if part in lowered:
            return name
    return "COMET-QE" if reference_free else "COMET"
