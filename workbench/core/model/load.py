"""Loading a translation model and its tokenizer from a folder or the Hub.

A value that looks like a path is only ever a path: a missing folder is reported as
missing, never sent to the Hub as a model id. Hub ids are tried in the local cache first,
so a model downloaded once keeps working offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.data.hub import ensure_hub_reachable, explain, hub_endpoint
from workbench.core.data.pairs import looks_like_local_path
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase


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


def check_local_model(path: Path) -> None:
    """Fail with the fix unless ``path`` holds a saved model."""
    if not path.exists():
        raise WorkbenchError(
            f"model folder '{path}' does not exist; train one first "
            "(workbench train --headless --preset demo) or pass --model with a saved model"
        )
    if not (path / "config.json").is_file():
        raise WorkbenchError(
            f"'{path}' is not a saved model (no config.json); pass a folder written by "
            "save_pretrained, such as translation_output/best_model"
        )


def load_model_and_tokenizer(
    name: str, attn_implementation: str | None = None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a seq2seq model and tokenizer from a local folder or a Hub id.

    ``attn_implementation="eager"`` is for attention maps only: SDPA (the default) is
    faster but returns no attention weights.
    """
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    quiet_libraries()
    kwargs: dict[str, Any] = {}
    if attn_implementation:
        kwargs["attn_implementation"] = attn_implementation
    if looks_like_local_path(name):
        path = Path(name).expanduser()
        check_local_model(path)
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path))
            model = AutoModelForSeq2SeqLM.from_pretrained(str(path), **kwargs)
        except (OSError, ValueError) as err:
            raise WorkbenchError(f"cannot load the model in '{path}': {err}") from None
        return model, tokenizer
    try:  # Hub id: the local cache first, so offline use works after one download.
        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        model = AutoModelForSeq2SeqLM.from_pretrained(name, local_files_only=True, **kwargs)
        return model, tokenizer
    except OSError:
        pass
    what = f"model '{name}'"
    ensure_hub_reachable(what)
    try:
        tokenizer = AutoTokenizer.from_pretrained(name)
        model = AutoModelForSeq2SeqLM.from_pretrained(name, **kwargs)
    except OSError as err:
        # transformers wraps huggingface_hub's typed errors in OSError ``from`` them.
        found = explain(err, what, "check the id or pass a local folder")
        if found is not None:
            raise found from None
        first = " ".join(str(err).split("\n", 1)[0].split()) or type(err).__name__
        raise WorkbenchError(
            f"cannot load {what} from the Hub at {hub_endpoint()}: {first}"
        ) from None
    return model, tokenizer


def check_target_label(tokenizer: PreTrainedTokenizerBase, label: str | None) -> None:
    """Fail unless ``label`` is one known token of the tokenizer's vocabulary.

    Multi-target opus-mt models select the output language with a token such as
    ``>>cmn_Hans<<``; an unknown label (the assignment's ``>>cmn<<``) is silently split
    into pieces and the model ignores it.
    """
    if not label:
        return
    vocab = tokenizer.get_vocab()
    if label in vocab:
        return
    known = sorted(t for t in vocab if t.startswith(">>") and t.endswith("<<"))
    hint = (
        f"known labels include: {', '.join(known[:12])}"
        if known
        else ("this model has no language labels; set target_label = none")
    )
    raise WorkbenchError(
        f"target label '{label}' is not a single token of this model's vocabulary, so the "
        f"model would ignore it; {hint}"
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
