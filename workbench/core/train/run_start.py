"""How a run starts, the first of its stages: every check a user's mistake can fail (Hub
access, paths, data files, the output folder, the memory plan) before the run folder is
made, then the data, the folder with its config.json, and the run's first lines (where it
writes, what it trains and tests on, the batch, the plan, the model it loaded). What the
later stages share is one :class:`RunContext`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.config.run_config import RunConfig
from workbench.core.data.dropped_pairs import write_dropped_pairs
from workbench.core.data.hub_retries import reporting_retries
from workbench.core.data.prepared import prepare_data
from workbench.core.data.splits import SplitData
from workbench.core.events import EventSink, JsonlRecorder, Note, Phase, fan_out
from workbench.core.languages import bleu_tokenizer_for
from workbench.core.live.lease import RunLease, while_held
from workbench.core.live.run_log import RunLog
from workbench.core.live.writer import RunWriter
from workbench.core.records.run_records import Precision
from workbench.core.run_folder.layout import OutputFolder, RunFolder
from workbench.core.run_folder.output_folder import new_run_dir
from workbench.core.run_folder.saved_config import SavedConfig, saved_config, write_saved_config
from workbench.core.train import distributed
from workbench.core.train.checkpoints import (
    check_world_size,
    last_complete_checkpoint,
    run_to_resume,
)
from workbench.core.train.memory.candidates import check_candidates_fit
from workbench.core.train.memory.plan import check_fits
from workbench.core.train.objective import starting_model
from workbench.core.train.preflight import check_writable, preflight
from workbench.core.train.run_model import check_run_model
from workbench.core.train.run_plan import plan_run
from workbench.core.train.sharded_checkpoint import check_shards, is_sharded
from workbench.core.train.sharding import with_launcher
from workbench.core.views.memory_text import plan_lines


@dataclass(frozen=True)
class RunContext:
    """What every stage of a run reads once it has started: fixed by :func:`prepare`."""

    #: As the run trains: a resumed run's own, with the data's revision pinned.
    config: RunConfig
    data: SplitData
    precision: Precision
    run_dir: Path
    #: The run's events: to metrics.jsonl (rank 0's, while the lease is held) and the caller.
    emit: EventSink
    #: The right to write into ``run_dir`` (a sweep's trial), checked before each write.
    lease: RunLease | None
    #: Whether this process is rank 0, the one that writes the run folder and decodes
    #: before and after.
    main: bool
    #: Where a resumed run's training goes on from (None: from the start).
    checkpoint: Path | None
    #: Where publishing copies the run's best model.
    published: Path


def prepare(
    config: RunConfig,
    on_event: EventSink | None,
    resume: bool,
    run_dir: Path | None,
    lease: RunLease | None,
    writer: RunWriter,
) -> RunContext:
    """Check, plan, read the data, then make (or take up again) the run folder and say
    what the run will do; the arguments are :func:`~.run_training._run`'s."""
    output_root = Path(config.output_dir).expanduser()
    published = OutputFolder(output_root).best_model  # where the run's best model is copied
    check_writable(output_root)
    main = distributed.is_main()
    log = RunLog() if main else None  # the run's lines in its folder, whoever watches
    # One set of lines and files: rank 0's.
    on_event = fan_out(on_event, log) if main else None
    writer.on_event = on_event
    # Rank 0 holds the run folder: the other ranks find it held, by their own job.
    resume_dir = run_to_resume(output_root, refuse_live=main) if resume else None
    if run_dir is not None and RunFolder(run_dir).config.is_file():
        resume_dir = run_dir
    held = resume_dir or run_dir
    if main and held is not None:  # taken before minutes of set-up
        writer.hold(held, log)
    if resume_dir is not None:
        config = saved_config(resume_dir, config.preset)
    config, starting = starting_model(config)  # never the folder this run publishes to
    config = with_launcher(config)  # accelerate launched with an FSDP config: sharded
    preflight(config)
    distributed.configure(config.ddp_timeout)  # before the first collective creates the group

    # ---- languages, label and lengths (tokenizer and config only), then the data
    with distributed.main_first(), reporting_retries(on_event):
        count_tokens = check_run_model(config)
        # The device, its arithmetic and the memory plan: from the model's config alone.
        planned = plan_run(config)
    plan, precision = planned.plan, planned.precision
    check_fits(plan, config.model)
    # --pick's after training, --objective's before
    check_candidates_fit(config, planned.model_config, plan)
    fan_out(on_event)(Phase("data", config.data))
    # rank 0 fills the sample cache; the others read it
    with distributed.main_first(), reporting_retries(on_event):
        data = prepare_data(config, on_event=on_event, count_tokens=count_tokens)
    if data.revision and config.data_revision != data.revision:
        # Pinned in config.json: a resume, or a rerun with this config, reads the same rows.
        config = dataclasses.replace(config, data_revision=data.revision)

    # ---- the run folder, once every check has passed and the data is ready
    from transformers import set_seed

    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    run_dir = resume_dir or new_run(output_root, config, precision, main, run_dir, data)
    if main:
        writer.hold(run_dir, log)
        writer.began = True  # from here on, the run writes its folder
    recorder = JsonlRecorder(RunFolder(run_dir).metrics) if main else None
    emit = fan_out(while_held(recorder, lease) if recorder else None, on_event)
    checkpoint: Path | None = None
    if resume_dir is not None:
        checkpoint = last_complete_checkpoint(run_dir, emit)
        if checkpoint is not None and is_sharded(checkpoint):
            distributed.barrier()  # every rank checks at once, and so says it in one go
            check_shards(checkpoint)  # every rank's files, before any rank loads its own
        if checkpoint is not None:
            check_world_size(checkpoint, distributed.world_size())
        emit(Note(f"resuming {run_dir.name} from {checkpoint.name if checkpoint else 'start'}"))
    for line in [*run_lines(run_dir, data, config), *plan_lines(plan, planned.scorers)]:
        emit(Note(line))
    for line in data.notes:
        emit(Note(line, "warning"))
    if starting:
        emit(Note(starting))
    set_seed(config.seed)
    return RunContext(config, data, precision, run_dir, emit, lease, main, checkpoint, published)


def new_run(
    output_root: Path,
    config: RunConfig,
    precision: Precision,
    main: bool,
    folder: Path | None,
    data: SplitData,
) -> Path:
    """A fresh run folder (made by rank 0, shared with the others, or ``folder`` when the
    caller made it) with its config.json and the pairs cleaning dropped."""
    made = (folder or new_run_dir(output_root, config.preset)) if main else None
    run_dir = distributed.from_main(made)
    if main:
        saved = SavedConfig(config.to_dict(), precision, data.cleaning.record())
        write_saved_config(run_dir, saved)
        write_dropped_pairs(run_dir, data.cleaning)
    return run_dir


def run_lines(run_dir: Path, data: SplitData, config: RunConfig) -> list[str]:
    """The run's first lines: where it writes, what it trains and tests on, the batch."""
    lines = [
        f"run folder: {run_dir}",
        *data.cleaning.lines(),
        f"data: {len(data.train):,} train / {len(data.validation):,} validation "
        f"({data.validation_name}) from {data.origin}",
        f"test set: {len(data.test):,} pairs ({data.test_name}), scored before and after "
        "fine-tuning only, never used to choose anything",
    ]
    tokenizer, fallback = bleu_tokenizer_for(config.target_lang)
    if fallback and config.bleu_tokenize == tokenizer:  # char for ja or ko: say why
        lines.append(fallback)
    world = distributed.world_size()
    lines.append(
        f"effective batch size {config.batch_size * world}"
        + (f" ({config.batch_size} per process x {world} processes)" if world > 1 else "")
    )
    if world > 1:
        waits = distributed.process_group_timeout()
        lines.append(
            f"processes wait up to {waits:.0f} s for each other (ddp_timeout)"
            if waits is not None
            else f"ddp_timeout {config.ddp_timeout} s"
        )
    return lines


def model_line(model: Any, precision: Precision) -> str:
    """What was loaded, how big, where, and at which precision it trains and decodes."""
    n_params = sum(p.numel() for p in model.parameters())
    return (
        f"model: {type(model).__name__}, {n_params / 1e6:.1f}M parameters, on "
        f"{precision.device}; training in {precision.training}, before/after decoded in "
        f"{precision.decoding}"
    )
