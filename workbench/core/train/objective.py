"""What a run trains towards (``--objective``), checked in one line before anything slow.

``best``, ``cpo`` and ``dpo`` rank each training source's candidates by ``--rank-by``.
Each ranker is the metric of a decoding-time pick, and that pick is the run's *ceiling*:
what the starting model gains on the test set when it picks among its candidates at
decoding time, which the tuned model tries to keep with beam search alone (Finkelstein,
Freitag et al., ICLR 2024). A reference-free ranker (``qe``, ``metricx-qe``) is QE
reranking's metric; a reference-based one (``chrf``, ``bleu``, ``comet``, ``metricx``)
scores a training candidate against the pair's reference, and at test time, where no
reference may be used, it is MBR's utility. So :class:`Objective` holds that pick's
:class:`~workbench.core.translate.picked.PickSettings`: its metric ranks, its model
check is the ranker's, and its candidates are the ones drawn for training.

The candidates are drawn as ``--pick`` draws them (``--candidates``, ``--candidates-from``,
``--epsilon``, ``--top-p``, ``--temperature``) with the run's seed; the neural rankers'
models are the run's own flags: ``--qe-model`` (CometKiwi), ``--comet`` and ``--metricx``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from workbench.core.config.run_config import RunConfig
from workbench.core.data.sources import looks_like_local_path
from workbench.core.picking.choices import check_choice
from workbench.core.picking.metrics import DEFAULT_COMET_UTILITY
from workbench.core.records.model_settings import read_model_settings
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.translate.candidates import CandidateSettings
from workbench.core.translate.picked import PickSettings
from workbench.errors import WorkbenchError

#: ``--objective``'s choices; ``sft`` trains on the references, as every run did before.
OBJECTIVES = ("sft", "best", "cpo", "dpo")
#: The objectives trained on preference pairs (a chosen and a rejected translation).
PREFERENCE_OBJECTIVES = ("cpo", "dpo")
#: ``--rank-by``'s choices.
RANKERS = ("qe", "metricx-qe", "comet", "metricx", "chrf", "bleu")
#: The rankers that score a candidate against the pair's reference.
REFERENCE_RANKERS = ("comet", "metricx", "chrf", "bleu")


@dataclass(frozen=True)
class Objective:
    """A run's objective past the references: its name, its ranker and the pick that is
    its ceiling (whose metric ranks and whose candidates are drawn for training)."""

    name: str  # "best", "cpo" or "dpo"
    rank_by: str
    ceiling: PickSettings
    beta: float
    nll_weight: float

    @classmethod
    def of(cls, config: RunConfig) -> Objective | None:
        """The objective ``config`` asks for, checked (None: ``sft``); one line when wrong."""
        check_choice("--objective", config.objective, OBJECTIVES)
        if config.objective == "sft":
            if config.rank_by is not None:
                raise WorkbenchError(
                    f"--rank-by {config.rank_by} ranks candidates for --objective best, cpo "
                    "or dpo; add one (or leave --rank-by out)"
                )
            return None
        if config.is_scratch:
            raise WorkbenchError(
                f"--objective {config.objective} starts from a trained model, not --model "
                "scratch: train one first (workbench train --preset demo), then give its "
                "best_model/ folder as --model (--preset demo-cpo does both)"
            )
        if config.rank_by is None:
            raise WorkbenchError(
                f"--objective {config.objective} needs --rank-by ({', '.join(RANKERS)}): the "
                "metric that ranks each source's candidates"
            )
        check_choice("--rank-by", config.rank_by, RANKERS)
        if config.beta <= 0:
            raise WorkbenchError(f"--beta must be above 0, got {config.beta:g}")
        if config.nll_weight < 0:
            raise WorkbenchError(f"--nll-weight must be 0 or more, got {config.nll_weight:g}")
        return cls(
            config.objective,
            config.rank_by,
            ceiling_pick(config),
            config.beta,
            config.nll_weight,
        )

    @property
    def preference(self) -> bool:
        """Whether the run trains on preference pairs (CPO, DPO) rather than one target."""
        return self.name in PREFERENCE_OBJECTIVES

    @property
    def needs_reference(self) -> bool:
        """Whether the ranker scores a candidate against the pair's reference."""
        return self.rank_by in REFERENCE_RANKERS

    @property
    def candidates(self) -> CandidateSettings:
        """How each training source's candidates are drawn."""
        return self.ceiling.candidates

    def check_model(self) -> None:
        """The ranker's model checked from its files alone (one line when missing)."""
        self.ceiling.check_model()


def ceiling_pick(config: RunConfig) -> PickSettings:
    """The decoding-time pick whose metric is ``config.rank_by``: QE reranking for a
    reference-free ranker, MBR with the ranker as utility for a reference-based one."""
    candidates = CandidateSettings.asked(config)
    rank_by = str(config.rank_by)
    if rank_by in ("qe", "metricx-qe"):
        metric, model = (
            ("metricx", config.metricx)
            if rank_by == "metricx-qe"
            else ("cometkiwi", config.qe_model)
        )
        pick = PickSettings("qe", qe_metric=metric, qe_model=model, candidates=candidates)
    else:
        utility_model = {"comet": config.comet or DEFAULT_COMET_UTILITY, "metricx": config.metricx}
        pick = PickSettings(
            "mbr", utility=rank_by, utility_model=utility_model.get(rank_by), candidates=candidates
        )
    return replace(
        pick,
        metricx_tokenizer=config.metricx_tokenizer,
        metricx_max_length=config.metricx_max_length,
    )


def starting_model(config: RunConfig) -> tuple[RunConfig, str | None]:
    """``config`` starting from a model this run will not replace, and the line that says
    so (None: nothing changed).

    A run past the references usually starts from ``translation_output/best_model``, the
    folder this run publishes its own best model to when it finishes (and so may a
    sharded LoRA run, whose merge reads its base from disk). The run that
    trained that model kept its own copy (``runs/<run>/best_model``, named by its
    ``workbench.json``), so the run starts from that copy: the report's "before" and the
    console's ``/before`` load it long after the published folder has been replaced.
    """
    # A sharded LoRA run's merge reads its base model from disk at the end, and later
    # (export --merge): a base this run may publish over would not be its base then.
    kept_base = config.objective != "sft" or (config.shard and config.lora)
    if not kept_base or not looks_like_local_path(config.model):
        return config, None
    given = Path(config.model).expanduser()
    published = OutputFolder(Path(config.output_dir).expanduser()).best_model
    if not given.exists() or given.resolve() != published.resolve():
        return config, None
    settings = read_model_settings(given)
    own = RunFolder(Path(settings.run_dir)).best_model if settings and settings.run_dir else None
    if own is None or not own.is_dir():
        raise WorkbenchError(
            f"--model {config.model} is the best model this run publishes to when it "
            "finishes, and the run that trained it kept no copy of its own; copy the folder "
            "elsewhere and give the copy as --model"
        )
    line = (
        f"starting from {own}, the trained run's own copy of {config.model} (which this "
        "run replaces with its own best model when it finishes)"
    )
    return replace(config, model=str(own)), line
