"""Checks before a run: everything outside the configuration that a user can get wrong.

They run before torch or transformers is imported and before a run folder exists, so an
offline machine or a wrong path fails in about a second, with the fix, leaving nothing
behind (and not after a retry loop). Nothing here imports torch.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from workbench.core.config.run_config import RunConfig
from workbench.core.data.hub_requests import ensure_hub_reachable
from workbench.core.data.sample_cache import (
    cached_revision,
    default_cache_dir,
    find_cached_sample,
    find_cached_split,
)
from workbench.core.data.sources import (
    first_look,
    hub_sample,
    hub_test_split,
    is_hub_dataset,
    looks_like_local_path,
)
from workbench.core.model.load import check_local_model
from workbench.core.run_folder.layout import MODEL_CONFIG_FILE
from workbench.core.train.objective import Objective
from workbench.core.train.sharding import check_sharding
from workbench.core.translate.picked import PickSettings
from workbench.errors import WorkbenchError


def preflight(config: RunConfig) -> None:
    """Cheap checks of everything outside the config: local paths, and the Hub if needed.

    The Hub is asked only for what the local caches lack, so a cached model and sample
    train offline.
    """
    check_sharding(config)  # --shard needs a launched job
    if config.report_to == "tensorboard":
        check_tensorboard()
    if config.lora and importlib.util.find_spec("peft") is None:
        raise WorkbenchError(
            "--lora needs the peft package, which is not installed; "
            "pip install 'nmt-workbench[lora]' (or drop --lora)"
        )

    pick = PickSettings.requested(config, config.qe_model)  # --pick's: one line when wrong
    if pick is not None:
        pick.check_model()  # its metric's model, from its files, before anything slow
    objective = Objective.of(config)  # --objective's: one line when wrong
    if objective is not None:
        objective.check_model()  # the ranker's model, as a pick's
    first_look(config)  # local files first: no network check delays their one line
    check_model_reachable(config)
    if is_hub_dataset(config):
        cache = default_cache_dir()
        cached = find_cached_sample(cache, hub_sample(config), config.data_revision)
        split = hub_test_split(config)
        if cached and split is not None and not config.test_data:
            # The test split is read at the sample's commit (prepare_data).
            cached = find_cached_split(cache, split, cached_revision(cached))
        if not cached:
            what = f"dataset '{config.data}'" + (
                f" config '{config.data_config}'" if config.data_config else ""
            )
            ensure_hub_reachable(what)


def check_model_reachable(config: RunConfig) -> None:
    """One line unless the run's model can be read: a local folder with its config.json,
    or a Hub model cached or reachable (the scratch model is built, not read)."""
    if config.is_scratch:
        return
    if looks_like_local_path(config.model):
        check_local_model(Path(config.model).expanduser())
    elif not hub_model_cached(config.model):
        ensure_hub_reachable(f"model '{config.model}'")


def hub_model_cached(name: str) -> bool:
    """True when a Hub model's config is in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(name, MODEL_CONFIG_FILE)
    except Exception:  # a malformed id: let the loader produce the real message
        return False
    return isinstance(found, str)


def check_tensorboard() -> None:
    """One line with the fix when --report-to tensorboard is asked for and not installed."""
    if importlib.util.find_spec("tensorboard") is None:
        raise WorkbenchError(
            "--report-to tensorboard needs the tensorboard package, which is not installed; "
            "pip install tensorboard (or drop --report-to)"
        )


def check_writable(folder: Path) -> None:
    """Fail early, with the fix, when outputs cannot be written -- without creating anything.

    The folder may not exist yet (it is made when the run starts, after every other
    check), so the nearest existing ancestor must be a writable folder.
    """
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    problem = None
    if not existing.is_dir():
        problem = f"'{existing}' is a file, not a folder"
    elif not os.access(existing, os.W_OK | os.X_OK):
        problem = f"no write permission on '{existing}'"
    if problem:
        raise WorkbenchError(
            f"output dir '{folder}' is not writable ({problem}); "
            "pass a writable folder with --output-dir"
        )
