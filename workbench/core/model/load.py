"""Loading a translation model and its tokenizer from a folder or the Hub.

A value that looks like a path is only ever a path: a missing folder is reported as
missing, never sent to the Hub as a model id. Hub ids are tried in the local cache first,
so a model downloaded once keeps working offline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.core.data.hub_requests import cached_or_fetched
from workbench.core.data.sources import looks_like_local_path
from workbench.core.run_folder.layout import MODEL_CONFIG_FILE
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

T = TypeVar("T")


def quiet_libraries() -> None:
    """Silence library chatter that our events already say better.

    transformers' info logs, save progress bars, and the "missing keys" note when the
    best checkpoint is reloaded (tied embeddings are stored once, by design).
    """
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
    # peft asks for the old name of a property transformers 5 renamed (a FutureWarning)
    warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated")


def check_local_model(path: Path) -> None:
    """Fail with the fix unless ``path`` holds a saved model."""
    if not path.exists():
        raise WorkbenchError(
            f"model folder '{path}' does not exist; train one first "
            "(workbench train --headless --preset demo) or pass --model with a saved model"
        )
    if not (path / MODEL_CONFIG_FILE).is_file():
        raise WorkbenchError(
            f"'{path}' is not a saved model (no config.json); pass a folder written by "
            "save_pretrained, such as translation_output/best_model"
        )


def load_model_and_tokenizer(
    name: str, attn_implementation: str | None = None, dtype: str = "auto"
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a translation model (seq2seq, or a decoder-only causal LM) and its tokenizer
    from a local folder or a Hub id.

    ``attn_implementation="eager"`` is for attention maps only: SDPA (the default) is
    faster but returns no attention weights. ``dtype``: ``auto`` (the checkpoint's, as
    transformers loads it) or a torch dtype's name (a run's: :func:`run_dtype`).
    """
    import torch
    from transformers import AutoConfig, AutoTokenizer

    from workbench.core.model.architecture import model_class

    kwargs: dict[str, Any] = {"dtype": dtype if dtype == "auto" else getattr(torch, dtype)}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation

    def load(where: str, **extra: Any) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
        tokenizer = AutoTokenizer.from_pretrained(where, **extra)
        config = AutoConfig.from_pretrained(where, **extra)
        return model_class(config).from_pretrained(where, **extra, **kwargs), tokenizer

    return _from_folder_or_hub(name, load)


def frozen_as_built(model: PreTrainedModel) -> PreTrainedModel:
    """``model`` with the parameters its class builds frozen made frozen again.

    transformers 5's ``from_pretrained`` makes every floating-point parameter it loads or
    fills in trainable, whatever the class built. Marian builds its sinusoidal position
    tables frozen and never saves them (``_keys_to_ignore_on_save``): left trainable, a
    fine-tuned run would train tables that no checkpoint holds, so a resumed run, and the
    saved best model, would get the untrained sinusoids back. The class built on the meta
    device (no storage) says which parameters it freezes. Only a model about to train
    needs it (:func:`~workbench.core.train.run_model.load_run_model`): decoding trains
    nothing.
    """
    from workbench.core.model.meta_model import meta_model

    built = dict(meta_model(model.config).named_parameters())
    for name, parameter in model.named_parameters():
        if name in built and not built[name].requires_grad:
            parameter.requires_grad_(False)
    return model


def load_tokenizer_and_config(name: str) -> tuple[PreTrainedTokenizerBase, Any]:
    """A model's tokenizer and config without its weights: enough to resolve its languages
    and bounds before a run folder is made."""
    from transformers import AutoConfig, AutoTokenizer

    def load(where: str, **extra: Any) -> tuple[PreTrainedTokenizerBase, Any]:
        return AutoTokenizer.from_pretrained(where, **extra), AutoConfig.from_pretrained(
            where, **extra
        )

    return _from_folder_or_hub(name, load)


def load_model_config(name: str) -> Any:
    """A model's config alone (what the memory plan counts from)."""
    from transformers import AutoConfig

    return _from_folder_or_hub(
        name, lambda where, **extra: AutoConfig.from_pretrained(where, **extra)
    )


def _from_folder_or_hub(name: str, load: Callable[..., T]) -> T:
    """``load(where, **options)`` on a local folder, the Hub cache, then the Hub, with
    each failure as one line."""
    quiet_libraries()
    if looks_like_local_path(name):
        path = Path(name).expanduser()
        check_local_model(path)
        try:
            return load(str(path))
        except (OSError, ValueError) as err:
            raise WorkbenchError(f"cannot load the model in '{path}': {err}") from None
    return cached_or_fetched(
        lambda **options: load(name, **options),
        f"model '{name}'",
        "check the id or pass a local folder",
    )


def pick_device() -> str:
    """``cuda`` when a GPU is visible, else ``mps`` on Apple silicon, else ``cpu``."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def bf16_supported() -> bool:
    """True on GPUs with native bf16 (Ampere and newer)."""
    import torch

    return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())


@contextmanager
def fp32_decoding() -> Iterator[None]:
    """Full fp32 matmuls while decoding the before/after sets (TF32 off, then restored).

    The Trainer switches TF32 on for the whole process on Ampere+ GPUs (``tf32=True``);
    without this, "after" would be decoded with TF32 matmuls and "before" without.
    """
    import torch

    if not hasattr(torch.backends, "fp32_precision"):  # torch < 2.9: the legacy flags
        matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        try:
            yield
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
        return
    previous = torch.backends.fp32_precision
    torch.backends.fp32_precision = "ieee"
    try:
        yield
    finally:
        torch.backends.fp32_precision = previous
