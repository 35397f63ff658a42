"""One fine-tuning run, start to finish: the function every front end calls.

``run_training`` reads as the job does: prepare the run folder, load data, load or build
the model, score the validation set *before*, fine-tune with ``Seq2SeqTrainer``, score it
*after* with the same decoding, save the best model, write the summary. Progress goes to
an event sink; a ``threading.Event`` stops training at the next step with a checkpoint.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core import distributed
from workbench.core.atomic import write_json
from workbench.core.checkpoints import (
    find_resumable_run,
    keep_best_so_far,
    last_complete_checkpoint,
    publish_model,
    save_best_model,
)
from workbench.core.config import RunConfig
from workbench.core.data import Pair, prepare_data
from workbench.core.events import (
    EvalDone,
    EventSink,
    JsonlRecorder,
    Note,
    Phase,
    RunDone,
    Sample,
    fan_out,
)
from workbench.core.metrics import corpus_bleu, corpus_chrf, sentence_bleu
from workbench.core.preflight import preflight
from workbench.core.run_model import (
    configure_generation,
    keep_initial_model,
    load_run_model,
    model_settings,
    resolve_precision,
)
from workbench.core.runs import (
    BEST_MODEL,
    RUNS_FOLDER,
    check_writable,
    new_run_dir,
    read_json_dict,
    saved_config,
)
from workbench.core.scores import score_before_after
from workbench.core.translation import DecodeOptions, Translator
from workbench.errors import WorkbenchError


@dataclass
class RunResult:
    """What a run left behind."""

    status: str
    run_dir: Path
    summary: dict[str, Any]


def _score(hyps: list[str], refs: list[str], config: RunConfig) -> tuple[float, float]:
    return corpus_bleu(hyps, refs, config.bleu_tokenize), corpus_chrf(hyps, refs)


def _score_rows(
    val: list[Pair], before: list[str], after: list[str], config: RunConfig
) -> list[Sample]:
    """Every sentence of a set with its before/after translation and sentence BLEU.

    Scored once here and written to ``<set>_translations.jsonl``, so the TUI's Samples
    pane only reads them.
    """
    return [
        Sample(
            source=pair.source,
            reference=pair.target,
            before=b,
            after=a,
            bleu_before=round(sentence_bleu(b, pair.target, config.bleu_tokenize), 2),
            bleu_after=round(sentence_bleu(a, pair.target, config.bleu_tokenize), 2),
        )
        for pair, b, a in zip(val, before, after, strict=True)
    ]


def sources_fingerprint(pairs: list[Pair]) -> str:
    """A hash of a set's source sentences, in order (before.json is reused only for them)."""
    import hashlib

    return hashlib.sha256("\n".join(p.source for p in pairs).encode("utf-8")).hexdigest()


def _pick_samples(rows: list[Sample], k: int) -> list[Sample]:
    """k evenly spread sentences (deterministic, not cherry-picked)."""
    if not rows or k <= 0:
        return []
    return rows[:: max(1, len(rows) // k)][:k]


def run_training(
    config: RunConfig,
    on_event: EventSink | None = None,
    stop: threading.Event | None = None,
    resume: bool = False,
) -> RunResult:
    """Fine-tune as configured and return the run's status, folder and summary.

    Everything a user can get wrong (Hub access, paths, data files, output folder) is
    checked before the run folder is created, so a mistake leaves nothing behind.
    """
    stop = stop or threading.Event()
    output_root = Path(config.output_dir).expanduser()
    check_writable(output_root)
    resume_dir: Path | None = None
    if resume:
        resume_dir = find_resumable_run(output_root)
        if resume_dir is None:
            raise WorkbenchError(
                f"nothing to resume under '{output_root / RUNS_FOLDER}': no unfinished run "
                "with a complete checkpoint; start a new run without --resume"
            )
        config = saved_config(resume_dir, config.preset)
    preflight(config)
    distributed.configure(config.ddp_timeout)  # before the first collective creates the group
    main = distributed.is_main()
    if not main:  # one set of lines and files: rank 0's
        on_event = None
    early = fan_out(on_event)
    early(Phase("data", config.data))
    with distributed.main_first():  # rank 0 fills the sample cache; the others read it
        data = prepare_data(config)
    if data.revision and config.data_revision != data.revision:
        # Pinned in config.json: a resume, or a rerun with this config, reads the same rows.
        config = dataclasses.replace(config, data_revision=data.revision)

    from transformers import set_seed

    from workbench.core.modeling import fp32_decoding, pick_device, quiet_libraries
    from workbench.core.trainer import (
        EventCallback,
        build_trainer,
        evaluation_history,
        fine_tune,
        tensorboard_callback,
    )

    quiet_libraries()
    device = pick_device()
    precision = resolve_precision(config, device)
    checkpoint: Path | None = None
    if resume_dir is not None:
        run_dir = resume_dir
    else:
        run_dir = distributed.from_main(new_run_dir(output_root, config.preset) if main else None)
        if main:
            write_json(run_dir / "config.json", {**config.to_dict(), "precision": precision})
    emit = fan_out(JsonlRecorder(run_dir / "metrics.jsonl") if main else None, on_event)
    if resume_dir is not None:
        checkpoint = last_complete_checkpoint(run_dir, emit)
        emit(Note(f"resuming {run_dir.name} from {checkpoint.name if checkpoint else 'start'}"))
    emit(Note(f"run folder: {run_dir}"))
    dropped = ", ".join(f"{v} {k}" for k, v in data.dropped.items() if v) or "nothing"
    emit(Note(f"data: {len(data.train)} train / {len(data.validation)} validation "
              f"({data.validation_name}) from {data.origin} (dropped {dropped})"))
    emit(Note(f"test set: {len(data.test)} pairs ({data.test_name}), scored before and "
              "after fine-tuning only, never used to choose anything"))
    set_seed(config.seed)

    world = distributed.world_size()
    emit(Note(f"effective batch size {config.batch_size * world}"
              + (f" ({config.batch_size} per process x {world} processes)" if world > 1 else "")))
    if world > 1:
        waits = distributed.process_group_timeout()
        emit(Note(f"processes wait up to {waits:.0f} s for each other (ddp_timeout)"
                  if waits is not None else f"ddp_timeout {config.ddp_timeout} s"))
    emit(Phase("model", config.model))
    with distributed.main_first():
        model, tokenizer = load_run_model(config, data, run_dir, emit)
    configure_generation(model, config)
    model.to(device)
    n_params = sum(p.numel() for p in model.parameters())
    emit(Note(f"model: {type(model).__name__}, {n_params / 1e6:.1f}M parameters, on {device}; "
              f"training in {precision['training']}, before/after decoded in "
              f"{precision['decoding']}"))

    base_model = keep_initial_model(model, tokenizer, config, run_dir)

    sets = {"validation": data.validation, "test": data.test}
    set_names = {"validation": data.validation_name, "test": data.test_name}
    options = DecodeOptions(config.num_beams, config.max_new_tokens, config.no_repeat_ngram_size)
    translator = Translator(model, tokenizer, config.target_label, config.max_source_length)

    def score_event(stage: str, split: str, hyps: list[str], step: int,
                    epoch: float) -> dict[str, float]:
        bleu, chrf = _score(hyps, [p.target for p in sets[split]], config)
        emit(EvalDone(step=step, epoch=epoch, bleu=bleu, chrf=chrf, stage=stage, split=split,
                      set_name=set_names[split], size=len(sets[split])))
        return {"bleu": round(bleu, 2), "chrf": round(chrf, 2)}

    # Before and after are scored once, by rank 0, on both held-out sets; the plain fp32
    # model here is the one the Trainer has not wrapped yet.
    before_file = run_dir / "before.json"
    before: dict[str, list[str]] = {}
    before_scores: dict[str, dict[str, float]] = {}
    if main:
        saved_before = read_json_dict(before_file) or {}
        fingerprints = {split: sources_fingerprint(pairs) for split, pairs in sets.items()}
        for split, pairs in sets.items():
            done = saved_before.get(split)
            # Reused on resume only for the very same sentences (a data file may have changed).
            if (isinstance(done, list) and len(done) == len(pairs)
                    and (saved_before.get("sources") or {}).get(split) == fingerprints[split]):
                before[split] = done
                continue
            emit(Phase("before", f"translating {len(pairs)} {split} sentences"))
            with fp32_decoding():
                before[split] = translator.translate_many([p.source for p in pairs], options,
                                                          config.eval_batch_size)
        write_json(before_file, {**before, "sources": fingerprints})
        for split in sets:
            before_scores[split] = score_event("before", split, before[split], 0, 0.0)
    distributed.barrier()

    emit(Phase("train"))
    callback = EventCallback(emit, stop, config.batch_size)
    trainer = build_trainer(config, model, tokenizer, data.train, data.validation, run_dir,
                            device, [callback])
    if config.report_to == "tensorboard" and main:
        trainer.add_callback(tensorboard_callback(run_dir / "tensorboard"))
    train_seconds = fine_tune(trainer, checkpoint, run_dir)
    status = callback.status
    if not main:  # rank 0 writes the outputs; the others are done
        return RunResult(status, run_dir, {})

    summary: dict[str, Any] = {
        "preset": config.preset,
        "model": config.model,
        "data": data.origin,
        "data_revision": data.revision,
        "train_pairs": len(data.train),
        "validation_pairs": len(data.validation),
        "test_pairs": len(data.test),
        "bleu_tokenize": config.bleu_tokenize,
        "decoding": vars(options),
        "precision": precision,
        "before": before_scores,
        "train_seconds": round(train_seconds, 1),
        "global_step": trainer.state.global_step,
        "run_dir": str(run_dir),
        "base_model": base_model,
    }
    if status != "finished":
        if callback.nan_step is not None:
            summary["error"] = f"non-finite loss at step {callback.nan_step}"
            kept = keep_best_so_far(trainer, run_dir, model_settings(config, run_dir))
            summary["run_best_model"] = str(kept) if kept else None
            emit(Note(f"best model so far kept in {kept}" if kept else
                      "no evaluation had finished yet, so there is no best model to keep; "
                      f"{output_root / BEST_MODEL} was left as it was", "warning"))
        summary["status"] = status
        write_json(run_dir / "summary.json", summary)
        if callback.stopped_by_user:
            emit(Note(f"stopped at step {trainer.state.global_step} with a checkpoint; "
                      "continue with: workbench train --resume"))
        emit(RunDone(status, str(run_dir), summary))
        return RunResult(status, run_dir, summary)

    best_dir = run_dir / BEST_MODEL
    save_best_model(trainer, best_dir, model_settings(config, run_dir))

    # "After" translates the model as saved, loaded as `workbench translate --model
    # <run>/best_model` loads it, not trainer.model: accelerate leaves that one wrapped in
    # bf16/fp16 autocast, so on a GPU it would decode at another precision than "before".
    after_translator = Translator.from_pretrained(str(best_dir), device=device,
                                                  backend="transformers")
    after: dict[str, list[str]] = {}
    for split, pairs in sets.items():
        emit(Phase("after", f"translating {len(pairs)} {split} sentences with {best_dir}"))
        with fp32_decoding():
            after[split] = after_translator.translate_many([p.source for p in pairs], options,
                                                           config.eval_batch_size)
    scores = {}
    for split, pairs in sets.items():
        # The paired test scores both sides itself: the after-event takes its numbers.
        scores[split] = score_before_after(before[split], after[split],
                                           [p.target for p in pairs], config.bleu_tokenize,
                                           split, set_names[split])
        emit(EvalDone(step=trainer.state.global_step, epoch=float(trainer.state.epoch or 0),
                      bleu=scores[split].bleu_after, chrf=scores[split].chrf_after,
                      stage="after", split=split, set_name=set_names[split], size=len(pairs)))

    rows = {split: _score_rows(pairs, before[split], after[split], config)
            for split, pairs in sets.items()}
    samples = _pick_samples(rows["test"], config.num_samples_shown)
    for sample in samples:
        emit(sample)

    published = output_root / BEST_MODEL
    publish_model(best_dir, published)

    for split in sets:
        with (run_dir / f"{split}_translations.jsonl").open("w", encoding="utf-8") as fh:
            for row in rows[split]:
                fh.write(json.dumps(vars(row), ensure_ascii=False) + "\n")
    summary.update({
        "status": "finished",
        # The headline is the test set: never used to choose the epoch or the recipe.
        "test": scores["test"].to_dict(),
        "validation": scores["validation"].to_dict(),
        "distinct_after": round(len(set(after["test"])) / max(1, len(after["test"])), 4),
        "best_checkpoint": trainer.state.best_model_checkpoint,
        "best_model": str(published),
        "run_best_model": str(best_dir),
        "samples": [vars(s) for s in samples],
        "epochs": evaluation_history(trainer),
    })
    write_json(run_dir / "summary.json", summary)
    emit(RunDone("finished", str(run_dir), summary))
    return RunResult("finished", run_dir, summary)
