"""``workbench train --plan-only``: the memory plan for the flags, printed without loading
a weight (a folder with ALMA-7B's config.json alone: no tokenizer, no weights; or the same
config from a Hub, which is asked for nothing else), exit 0 when the run fits and 4 when
it does not; the ``torchrun`` command its refusal names, run with ``--plan-only`` under that
world size, fits, and under one GPU fewer does not. docs/sharding.md's outputs are this
command's, word for word. The arithmetic is tested in tests/unit/test_memory_plan_sharded.py."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.memory import ALMA_7B
from tests.helpers.paths import REPO

#: docs/sharding.md's examples: ``$ workbench train --plan-only …`` and what it printed.
EXAMPLE = re.compile(r"```\n\$ workbench (train --plan-only [^\n]*)\n(.*?)\n```", re.DOTALL)
#: The command a refusal names: ``torchrun --nproc_per_node=N -m workbench train …``.
LAUNCH = re.compile(r"`torchrun --nproc_per_node=(\d+) -m workbench (train [^`]*)`")


@pytest.fixture
def alma_folder(tmp_path: Path) -> Path:
    """ALMA-7B's config.json alone, as ./alma-7b of the test's folder."""
    folder = tmp_path / "alma-7b"
    folder.mkdir()
    shutil.copy(ALMA_7B / "config.json", folder)
    return folder


def plan_only(cli, folder: Path, *flags: str, env: dict[str, str] | None = None):
    return cli(
        "train", "--plan-only", "--model", "./alma-7b", "--prompt", "alma", "--bf16",
        "--memory-budget", "80", *flags, cwd=folder.parent, env=env,
    )  # fmt: skip


def test_a_7b_full_fine_tune_on_8_gpus_of_80_gb_fits_without_a_weight(cli, alma_folder):
    result = plan_only(cli, alma_folder, "--shard", "--gpus", "8")
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("memory plan (every weight, sharded over 8 ranks; batch 16 × 296")
    assert "a rank at a step's peak, against 80.0 GB (--memory-budget)" in lines[0]
    assert lines[2].startswith("  FSDP2: each rank keeps 1/8 of the weights")
    assert lines[-1].startswith("./alma-7b fits: about ")
    # Nothing read but config.json, nothing written: no tokenizer, weights, data or run.
    assert [p.name for p in alma_folder.parent.iterdir()] == ["alma-7b"]
    assert [p.name for p in alma_folder.iterdir()] == ["config.json"]
    assert "[data]" not in result.stdout


def test_on_one_gpu_it_does_not_fit_and_names_lora_and_the_sharded_launch(cli, alma_folder):
    result = plan_only(cli, alma_folder)
    assert result.returncode == 4, result.stderr[-2000:]
    verdict = result.stdout.splitlines()[-1]
    assert verdict.startswith("./alma-7b will not fit: its memory plan needs about ")
    assert "pass --lora (about " in verdict
    launch = LAUNCH.search(verdict)
    assert launch is not None, verdict
    world, arguments = int(launch.group(1)), shlex.split(launch.group(2))
    assert f"shard it (--shard) on {world} GPUs of this size (about " in verdict
    assert arguments[:3] == ["train", "--headless", "--shard"]
    # The named launch, planned under its world size, fits; one GPU fewer does not.
    launched = cli(
        *arguments, "--plan-only", cwd=alma_folder.parent, env={"WORLD_SIZE": str(world)}
    )
    assert launched.returncode == 0, launched.stdout[-2000:]
    assert f"sharded over {world} ranks" in launched.stdout
    fewer = cli(
        *arguments, "--plan-only", cwd=alma_folder.parent, env={"WORLD_SIZE": str(world - 1)}
    )
    assert fewer.returncode == 4


def test_gpus_that_differ_from_the_launchers_world_size_are_one_line(cli, alma_folder):
    result = plan_only(cli, alma_folder, "--shard", "--gpus", "4", env={"WORLD_SIZE": "8"})
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr[-2000:]
    assert "--gpus 4 is not this launch's world size (8 processes, WORLD_SIZE)" in lines[0]
    assert "drop --gpus" in lines[0]


def test_the_docs_quote_what_the_command_prints(cli, alma_folder):
    page = (REPO / "docs" / "sharding.md").read_text(encoding="utf-8")
    examples = EXAMPLE.findall(page)
    assert len(examples) >= 2
    for command, printed in examples:
        result = cli(*shlex.split(command), cwd=alma_folder.parent)
        assert result.returncode in (0, 4), result.stderr[-2000:]
        assert result.stdout.rstrip("\n") == printed, command
    exits = "exit status 0 when the run fits, 4 when it does not"
    assert exits in " ".join(page.split())
    assert exits in " ".join(cli("train", "--help").stdout.split())


def test_the_run_that_starts_prints_the_same_plan(cli, family_models, pairs_file, tmp_path):
    """The run that starts plans through the same functions: with a tokenizer beside the
    config, it goes past its plan (--memory-budget 400 fits one GPU), prints it, and stops
    where it looks for the weights the folder lacks."""
    folder = tmp_path / "alma-7b"
    folder.mkdir()
    shutil.copy(ALMA_7B / "config.json", folder)
    for path in family_models["nllb"].iterdir():
        if path.name.startswith("tokenizer") or path.suffix == ".model":
            shutil.copy(path, folder / path.name)
    flags = (
        "--data", str(pairs_file), "--source-lang", "en", "--target-lang", "zh",
        "--memory-budget", "400", "--no-interact", "--output-dir", "out",
    )  # fmt: skip
    planned = plan_only(cli, folder, *flags)
    started = cli(
        "train", "--headless", "--model", "./alma-7b", "--prompt", "alma", "--bf16", *flags,
        cwd=tmp_path,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr[-2000:]
    assert started.returncode != 0
    assert "model.safetensors" in started.stderr  # the weights, looked for only now
    plan = planned.stdout.splitlines()[:-1]
    assert plan[0].startswith("memory plan (every weight; ")
    for line in plan:
        assert line.strip() in started.stdout


def test_a_hub_models_plan_reads_its_config_alone(tmp_path):
    """A new interpreter: the Hub's libraries read HF_ENDPOINT at import."""
    from tests.helpers.hub import hub_env
    from tests.helpers.hub_server import HubServer

    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ALMA_7B / "config.json", repo)
    (repo / "model.safetensors").write_bytes(b"\0" * 4096)  # never to be asked for
    server = HubServer()
    server.add_repo("model", "haoranxu/ALMA-7B", repo)
    server.start()
    try:
        done = run_cli(
            "train", "--plan-only", "--model", "haoranxu/ALMA-7B", "--prompt", "alma",
            "--shard", "--gpus", "8", "--memory-budget", "80", "--bf16",
            cwd=tmp_path, env=hub_env(server, tmp_path),
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr[-2000:]
    assert "haoranxu/ALMA-7B fits: about " in done.stdout
    asked = [request.path for request in server.requests()]
    assert any(path.endswith("/config.json") for path in asked), asked
    assert not any("safetensors" in path for path in asked), asked
