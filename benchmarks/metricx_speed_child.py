"""One measurement of one arm of ``metricx_speed.py``, in a fresh process of its venv.

``python metricx_speed_child.py ARM JOB`` reads the job (a JSON file: the checkpoint, the
tokenizer, the segments, the batch size, the threads, where to write), and writes what it
measured there: the load time, the scoring time (wall and process CPU) and each segment's
score. ``ARM`` is ``workbench`` (run in the project's venv) or ``reference``
(google-research/metricx's ``metricx24`` code, run in ``/tmp/metricx-reference-venv``:
transformers 4.30.2). This file imports nothing of the workbench at its top, so that the
reference venv can run it.

The reference arm is ``predict.main()``'s steps, in its order, with the load and the
scoring timed apart: its tokenizer and ``MT5ForRegression.from_pretrained(...,
torch_dtype="auto")``, then ``get_dataset`` (its input strings, ids and EOS removal) and
``Trainer.predict``. For batches above 1 the Trainer gets the right-padding collator of
metricx issue #2 (``tests/fixtures/metricx/build_fixtures.py``'s, which built the parity
fixtures), without which predict.py cannot stack inputs of different lengths.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
#: What the workbench's loading imports, imported before its clock starts, as the
#: reference arm's imports are.
PRELOADED = (
    "transformers.models.mt5.modeling_mt5",
    "workbench.core.metricx.checkpoint",
    "workbench.core.metricx.network",
    "workbench.core.model.load",
)


def workbench_arm(job: dict[str, Any]) -> tuple[float, float, float, list[float]]:
    """Load and score with the workbench; (load s, score s, score CPU s, scores)."""
    from workbench.core.metricx.scorer import MetricXSettings, load_metricx

    for module in PRELOADED:
        importlib.import_module(module)
    started = time.perf_counter()
    settings = MetricXSettings(job["model"], job["tokenizer"], None, job["batch_size"], "cpu")
    scorer = load_metricx(settings)
    load = time.perf_counter() - started
    segments = job["segments"]
    texts = ([s["source"] for s in segments], [s["hypothesis"] for s in segments])
    references = [s["reference"] for s in segments]
    scorer.score(
        texts[0][: job["batch_size"]],
        texts[1][: job["batch_size"]],
        references[: job["batch_size"]],
    )
    cpu, started = time.process_time(), time.perf_counter()
    scores = scorer.score(*texts, references)
    return load, time.perf_counter() - started, time.process_time() - cpu, scores


def reference_arm(job: dict[str, Any]) -> tuple[float, float, float, list[float]]:
    """Load and score with metricx's own code; (load s, score s, score CPU s, scores)."""
    os.environ["HF_DATASETS_CACHE"] = tempfile.mkdtemp(prefix="metricx-speed-")
    sys.path.insert(0, str(REPO / "tests" / "fixtures" / "metricx"))
    import transformers
    from metricx24 import models, predict  # type: ignore[import-not-found]  # its venv only

    # The fixtures' builder holds the collator of metricx issue #2 (found on sys.path).
    padding_trainer = importlib.import_module("build_fixtures").PaddingTrainer

    started = time.perf_counter()
    tokenizer = transformers.AutoTokenizer.from_pretrained(job["tokenizer"])
    model = models.MT5ForRegression.from_pretrained(job["model"], torch_dtype="auto")
    model.to("cpu").eval()
    load = time.perf_counter() - started
    folder = Path(tempfile.mkdtemp(prefix="metricx-speed-"))

    def predict_all(segments: list[dict[str, str]]) -> list[float]:
        inputs = folder / "input.jsonl"
        inputs.write_text("".join(json.dumps(s) + "\n" for s in segments), encoding="utf-8")
        ds = predict.get_dataset(str(inputs), tokenizer, 1536, "cpu", False)
        arguments = transformers.TrainingArguments(
            output_dir=str(folder), per_device_eval_batch_size=job["batch_size"],
            dataloader_pin_memory=False, report_to=[],
        )  # fmt: skip
        trainer = (padding_trainer if job["batch_size"] > 1 else transformers.Trainer)(
            model=model, args=arguments
        )
        predictions, _, _ = trainer.predict(test_dataset=ds["test"])
        return [float(p) for p in predictions]

    predict_all(job["segments"][: job["batch_size"]])  # the warm-up
    cpu, started = time.process_time(), time.perf_counter()
    scores = predict_all(job["segments"])
    return load, time.perf_counter() - started, time.process_time() - cpu, scores


def main() -> None:
    """Measure the arm ``argv[1]`` names on the job file ``argv[2]``."""
    arm, job_file = sys.argv[1], Path(sys.argv[2])
    job = json.loads(job_file.read_text(encoding="utf-8"))
    import torch

    torch.set_num_threads(job["threads"])
    measure = workbench_arm if arm == "workbench" else reference_arm
    load, seconds, cpu, scores = measure(job)
    result = {"load_s": load, "seconds": seconds, "cpu_seconds": cpu, "scores": scores}
    Path(job["result"]).write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
