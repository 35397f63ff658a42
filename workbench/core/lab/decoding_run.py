"""The decoding study run: the test set translated with every strategy, then by the
quality-aware arms (:mod:`.picked_arms`), all scored in one paired bootstrap against
greedy. What it measures and writes is :mod:`.decoding_strategies`' records."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.core.lab.decoding_strategies import (
    STRATEGIES,
    DecodingStudy,
    Strategy,
    StrategyResult,
    repeats_itself,
)
from workbench.core.lab.picked_arms import BEAM_BASELINE, PickArm, pick_result
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from workbench.core.decoding import DecodeOptions
    from workbench.core.evaluate.significance import SystemScore
    from workbench.core.translate.translator import Translator


def held_out_pairs(run_dir: Path, limit: int) -> list[tuple[str, str]]:
    """The first ``limit`` (source, reference) pairs of a run's test set, in its order."""
    from workbench.core.run_folder.layout import RunFolder
    from workbench.core.run_folder.samples import read_translations

    path = RunFolder(run_dir).translations("test")
    pairs = [(r.source, r.reference) for r in read_translations(run_dir, "test")[0]]
    if not pairs:  # missing, unreadable or empty
        raise WorkbenchError(
            f"no test sentences in {path}; pass --run with a finished run "
            "folder (workbench train writes them)"
        )
    return pairs[:limit]


def decoding_study(
    model_dir: str,
    run_dir: Path | None = None,
    limit: int = 200,
    strategies: Sequence[Strategy] = STRATEGIES,
    on_progress: Callable[[str, int, int], None] | None = None,
    stop: threading.Event | None = None,
    picks: Sequence[PickArm] = (),
) -> DecodingStudy:
    """Translate the test set with every strategy and score each; see the module doc.
    ``picks``: the quality-aware arms (:mod:`.picked_arms`), run after the strategies.

    ``on_progress(name, done, total)`` is called before each decode; setting ``stop``
    ends the study between two decodes (WorkbenchError).
    """
    if limit < 1:  # checked here, for the command and the Lab pane alike
        raise WorkbenchError(
            f"the sentence limit must be at least 1, got {limit}; 200 is the default"
        )
    from workbench.core.evaluate.significance import score_systems
    from workbench.core.lab.picked_arms import run_pick_arms
    from workbench.core.translate.loading import settings_for
    from workbench.core.translate.translator import Translator

    settings = settings_for(model_dir)
    if run_dir is None:
        from workbench.core.run_folder.output_folder import run_dir_of

        run_dir = run_dir_of(model_dir, settings.run_dir)
        if run_dir is None:
            raise WorkbenchError(
                f"the run that trained {model_dir} is not known or not there "
                "any more; pass --run RUN_DIR to choose the test set"
            )
    pairs = held_out_pairs(Path(run_dir), limit)
    sources = [s for s, _ in pairs]
    references = [r for _, r in pairs]
    tokenize = settings.bleu_tokenize or "13a"
    translator = Translator.from_pretrained(model_dir, backend="transformers")
    base = translator.default_options()
    # The first decode pays for lazy set-up (kernels, thread pools): not greedy's time.
    translator.translate_many(sources[:8], base)
    outputs, seconds = _decode(translator, sources, strategies, base, on_progress, stop)
    arms = run_pick_arms(translator, sources, picks, base, on_progress, stop)
    total = len(outputs)
    if on_progress:
        on_progress("scoring", total, total)
    systems = [(f"{name} #{seed}", hyps) for (name, seed), hyps in outputs.items()]
    systems += [(arm.arm.name, arm.translations) for arm in arms]
    scores = score_systems(systems, references, tokenize)
    study = DecodingStudy(
        model=model_dir,
        run_dir=str(run_dir),
        size=len(pairs),
        bleu_tokenize=tokenize,
        example_source=sources[0],
        example_reference=references[0],
    )
    for strategy in strategies:
        runs = [outputs[(strategy.name, seed)] for seed in strategy.seeds]
        every = [scores[f"{strategy.name} #{seed}"] for seed in strategy.seeds]
        study.results.append(_result(strategy, runs, every, seconds[strategy.name]))
    beam = next((r.ms_per_sentence for r in study.results if r.name == BEAM_BASELINE), None)
    study.picks = [pick_result(arm, scores[arm.arm.name], beam) for arm in arms]
    return study


def _decode(
    translator: Translator,
    sources: list[str],
    strategies: Sequence[Strategy],
    base: DecodeOptions,
    on_progress: Callable[[str, int, int], None] | None,
    stop: threading.Event | None,
) -> tuple[dict[tuple[str, int], list[str]], dict[str, float]]:
    """Each strategy's outputs by (name, seed), and its seconds per run over the set."""
    import torch

    outputs: dict[tuple[str, int], list[str]] = {}
    seconds: dict[str, float] = {}
    total = sum(len(s.seeds) for s in strategies)
    for strategy in strategies:
        options = strategy.options(base)
        spent = 0.0
        for seed in strategy.seeds:
            if stop is not None and stop.is_set():
                raise WorkbenchError("the decoding study was stopped before it finished")
            if on_progress:
                on_progress(strategy.name, len(outputs), total)
            torch.manual_seed(seed)
            started = time.perf_counter()
            outputs[(strategy.name, seed)] = translator.translate_many(sources, options)
            spent += time.perf_counter() - started
        seconds[strategy.name] = spent / len(strategy.seeds)
    return outputs, seconds


def _result(
    strategy: Strategy, runs: list[list[str]], every: list[SystemScore], seconds: float
) -> StrategyResult:
    """One strategy's row: the first seed's interval and p, the mean over the seeds."""
    first, hyps = every[0], runs[0]
    return StrategyResult(
        name=strategy.name,
        sampled=strategy.do_sample,
        bleu=round(sum(s.bleu for s in every) / len(every), 2),
        bleu_ci=first.bleu_ci,
        chrf=round(sum(s.chrf for s in every) / len(every), 2),
        chrf_ci=first.chrf_ci,
        bleu_p=first.bleu_p,
        bleu_seeds=[s.bleu for s in every],
        distinct=round(len(set(hyps)) / len(hyps), 3),
        varies=round(sum(len(set(outs)) > 1 for outs in zip(*runs, strict=True)) / len(hyps), 3),
        repeated=round(sum(map(repeats_itself, hyps)) / len(hyps), 3),
        length_ratio=first.length_ratio,
        ms_per_sentence=round(1000 * seconds / len(hyps), 2),
        example=[run[0] for run in runs],
    )
