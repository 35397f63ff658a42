"""CTranslate2: a faster engine for a saved model, as an optional extra.

``workbench export --ctranslate2`` converts a saved model (Marian, NLLB-200, M2M100,
mBART-50 or T5, or a decoder-only Llama, Mistral, Qwen or Gemma;
:mod:`workbench.core.translate.ct2_convert` says how each is converted exactly) into
``<model>/ct2-<quantization>/`` and the
:class:`~workbench.core.translate.translator.Translator` can then generate with
:class:`CT2Backend` instead of ``model.generate``. Everything around generation (cleaning,
splitting at the position limit, the language codes or the prompt, batching, decoding)
stays in the Translator, so both engines treat text the same way; this module only turns
token ids into token ids, through the export's own vocabulary, row for row. A seq2seq
export generates with ``ctranslate2.Translator``, a decoder-only one with
``ctranslate2.Generator``, which continues each prompt and returns only what it wrote, as
:class:`~workbench.core.translate.backend.TransformersBackend` does.

The export records a fingerprint of the files it was made from, so an export of an older
version of the model (or of its tokenizer) is never picked up silently, and the model's
``model_type``, position bound and kind (decoder-only or not), as its config.json is
ctranslate2's (:mod:`workbench.core.translate.ct2_export_info`). Nothing here imports
ctranslate2 at module level: without the extra, the rest of the workbench works and says
how to install it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.core import DISTRIBUTION
from workbench.core.decoding import DecodeOptions
from workbench.core.languages import Direction
from workbench.core.run_folder.layout import MODEL_CONFIG_FILE
from workbench.core.translate.ct2_export_info import EXPORT_INFO, read_export_info, read_vocabulary
from workbench.core.translate.ct2_search import search_arguments
from workbench.errors import WorkbenchError

if TYPE_CHECKING:
    from types import ModuleType

EXPORT_PREFIX = "ct2-"
DEFAULT_QUANTIZATION = "int8"
#: ctranslate2's weight types; int8 is the fast one on CPU, float32 the exact one.
QUANTIZATIONS = (
    "int8",
    "int8_float32",
    "int16",
    "float32",
    "int8_float16",
    "int8_bfloat16",
    "float16",
    "bfloat16",
)
INSTALL_HINT = f"pip install '{DISTRIBUTION}[ct2]' (or pip install ctranslate2)"


def import_ctranslate2() -> ModuleType:
    """The ctranslate2 module, or one line saying how to install it."""
    try:
        import ctranslate2
    except ImportError:
        raise WorkbenchError(
            f"ctranslate2 is not installed; {INSTALL_HINT}, or use --backend transformers"
        ) from None
    return ctranslate2


def ctranslate2_available() -> bool:
    """True when ``import ctranslate2`` works (it is an optional extra)."""
    try:
        import_ctranslate2()
    except WorkbenchError:
        return False
    return True


class ModelFacts(NamedTuple):
    """What an export records of the model it was made from (its config.json is
    ctranslate2's own), so a direction can be resolved without the model."""

    model_type: str
    max_positions: int | None  # None: relative positions (T5)


def export_model_facts(export_dir: Path) -> ModelFacts:
    """The exported model's ``model_type`` and position bound, as its export recorded them."""
    info = read_export_info(export_dir)
    if info.model_type is None:
        raise WorkbenchError(
            f"the CTranslate2 export {export_dir} does not record which model it was made "
            f"from ({EXPORT_INFO} names no model_type); export it again with "
            "workbench export --ctranslate2"
        )
    return ModelFacts(info.model_type, info.max_positions or None)


# --- generation -----------------------------------------------------------------------


def load_export_tokenizer(export_dir: Path) -> Any:
    """The model's own tokenizer, from the copy kept in the export."""
    from transformers import AutoTokenizer

    from workbench.core.model.load import quiet_libraries

    quiet_libraries()
    try:
        return AutoTokenizer.from_pretrained(str(export_dir))
    except (OSError, ValueError) as err:
        raise WorkbenchError(
            f"cannot load the tokenizer kept in {export_dir}: {err}; "
            "rebuild the export with workbench export --ctranslate2 --force "
            "--model <the model folder>"
        ) from None


class CT2Backend:
    """Generates with a CTranslate2 export: token ids in, token ids out, like transformers."""

    name = "ctranslate2"

    def __init__(
        self,
        export_dir: Path,
        tokenizer: Any,
        device: str | None = None,
        threads: int | None = None,
        direction: Direction | None = None,
    ) -> None:
        from transformers import GenerationConfig

        ct2 = import_ctranslate2()
        self.export_dir = export_dir
        self.tokenizer = tokenizer
        info = read_export_info(export_dir)
        #: A decoder-only export: ``generator`` continues prompts (``translator`` is None).
        self.causal = info.causal
        if direction is not None and direction.causal != self.causal:
            kinds = ("seq2seq", "decoder-only")
            raise WorkbenchError(
                f"the CTranslate2 export {export_dir} records a {kinds[self.causal]} model, "
                f"and a {direction.family} model is {kinds[direction.causal]}; rebuild it "
                "with workbench export --ctranslate2 --force --model <the model folder>"
            )
        # The export's vocabulary is the embedding rows in order, so ids and tokens map
        # through it exactly, even rows the tokenizer has no token for (M2M100's made-up
        # words, which it would turn into <unk>'s id and so change the text).
        self.vocabulary = read_vocabulary(export_dir)
        self.row_of = {token: i for i, token in enumerate(self.vocabulary)}
        # CTranslate2 ignores forced_bos_token_id: the target code is given as the start of
        # every output instead (target_prefix), and the Translator drops it when decoding.
        first = (direction or Direction()).first_token_id
        self.target_prefix = self.tokens([first]) if first is not None and not self.causal else None
        self.quantization = info.quantization
        #: The decoder's sliding window (0: none), past which a prompt is not forwarded at
        #: once (:meth:`_continue`).
        self.sliding_window = info.sliding_window
        if device not in ("cpu", "cuda"):  # mps and others: ctranslate2 has CPU and CUDA
            device = "cuda" if ct2.get_cuda_device_count() > 0 else "cpu"
        self.device = device
        # One thread per available core unless told (importing torch just to ask it would
        # cost the fast path a second or two).
        self.threads = threads or (
            len(os.sched_getaffinity(0))  # Linux only
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1
        )
        engine = ct2.Generator if self.causal else ct2.Translator
        self.translator: Any = None
        self.generator: Any = None
        try:
            loaded = engine(str(export_dir), device=device, intra_threads=self.threads)
        except (RuntimeError, ValueError) as err:
            raise WorkbenchError(
                f"cannot load the CTranslate2 export {export_dir}: {err}; "
                "rebuild it with workbench export --ctranslate2 --force "
                "--model <the model folder>"
            ) from None
        try:
            self.generation_config = GenerationConfig.from_pretrained(str(export_dir))
        except OSError:
            self.generation_config = GenerationConfig()
        if self.causal:
            self.generator = loaded
        else:
            self.translator = loaded
        bad = self.generation_config.bad_words_ids or []
        # transformers blocks <pad> (the decoder start) via bad_words_ids; so do we.
        self.suppressed = [self.tokens(list(seq)) for seq in bad]
        #: Where a decoder-only model's output ends: at any of its generation config's EOS
        #: ids or the prompt's stops (the chat turn's end), as
        #: :func:`~workbench.core.model.prompts.apply_prompt` tells ``generate``.
        self.stop_ids = sorted(
            _id_list(self.generation_config.eos_token_id)
            | (direction.stop_ids if direction is not None else frozenset())
        )
        #: The BOS a Generator leaves out of a prompt it returns (its config's own).
        self.bos_id = self.row_of.get(_config_token(export_dir, "bos_token"), -1)

    def tokens(self, ids: list[int]) -> list[str]:
        """The export's tokens for ``ids`` (the tokenizer's where the export has none)."""
        if self.vocabulary and all(0 <= i < len(self.vocabulary) for i in ids):
            return [self.vocabulary[i] for i in ids]
        return list(self.tokenizer.convert_ids_to_tokens(ids))

    def ids(self, tokens: list[str]) -> list[int]:
        """The ids of the export's ``tokens``, as transformers would have generated them."""
        if self.row_of and all(t in self.row_of for t in tokens):
            return [self.row_of[t] for t in tokens]
        return list(self.tokenizer.convert_tokens_to_ids(tokens))

    def describe(self) -> str:
        """One line for the user: engine, weights, device, threads."""
        threads = f", {self.threads} threads" if self.device == "cpu" else ""
        return f"ctranslate2 {self.quantization} ({self.device}{threads}) from {self.export_dir}"

    def generate_ids(
        self, sources: list[list[int]], options: DecodeOptions, bound: int
    ) -> list[list[int]]:
        """Translate tokenized sources; at most ``bound`` tokens each, and
        ``options.num_return_sequences`` rows per source in a row, as transformers."""
        search = search_arguments(options, import_ctranslate2())
        if self.causal:
            return self._continue(sources, options, bound, search)
        # The target prefix (a forced language code) counts in max_decoding_length as the
        # forced first token counts in max_new_tokens. transformers also counts the </s> it
        # forces at the bound (forced_eos_token_id, mBART), which the Translator drops when
        # decoding: stopping one step earlier gives the same text.
        steps = bound - 1 if self.generation_config.forced_eos_token_id is not None else bound
        results = self.translator.translate_batch(
            [self.tokens(ids) for ids in sources],
            max_decoding_length=max(1, steps),
            **search,
            no_repeat_ngram_size=options.no_repeat_ngram_size,
            suppress_sequences=self.suppressed or None,
            target_prefix=[self.target_prefix] * len(sources) if self.target_prefix else None,
        )
        n = options.num_return_sequences
        return [self.ids(hypothesis) for r in results for hypothesis in r.hypotheses[:n]]

    def _continue(
        self, prompts: list[list[int]], options: DecodeOptions, bound: int, search: dict[str, Any]
    ) -> list[list[int]]:
        """What a decoder-only model writes after each prompt: at most ``bound`` new
        tokens, ending with the stop token that ended it, the prompt left out -- as
        :class:`~workbench.core.translate.backend.TransformersBackend` returns them
        (less its padding after the stop).

        With ``include_prompt_in_result=False`` the Generator forwards the prompts at once
        (up to the shortest one's length; the rest of a longer one is forced token by
        token) and ``max_length`` then counts new tokens only, as ``max_new_tokens``
        does -- unless the shortest prompt is a single token: then nothing is forwarded
        and ``max_length`` counts the forced rest of the longer prompts too. So one-token
        prompts go in a batch of their own.

        Two things make a prompt go through the decoding loop whole, token by token
        (``include_prompt_in_result=True``; ``max_length`` then counts the prompt, less
        its first token, which is the loop's start), with prompts batched by length:

        - an n-gram block (``no_repeat_ngram_size``): transformers also blocks the
          prompt's n-grams, and CTranslate2's sees only what went through its loop. The
          one n-gram that begins at the loop's start token is blocked as a suppressed
          sequence (prompts batched together share it). Left padding is not in the
          history, as it is in a batch transformers pads.
        - a prompt longer than the decoder's sliding window (Gemma 3's 512 or 1,024
          positions): CTranslate2 forwards such a prompt in window-sized chunks whose
          later tokens see more than the window, while step by step it keeps the window
          as transformers does.
        """
        n = options.no_repeat_ngram_size
        returned = options.num_return_sequences
        window = self.sliding_window
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, ids in enumerate(prompts):
            whole = n > 0 or (window > 0 and len(ids) - 1 > window)
            key = (1, len(ids), *ids[:n]) if whole else (0, min(len(ids), 2))
            groups.setdefault(key, []).append(i)
        rows: list[list[list[int]]] = [[] for _ in prompts]
        for key, group in groups.items():
            first = prompts[group[0]]
            whole = key[0] == 1  # the whole prompt goes through the decoding loop
            suppressed = list(self.suppressed)
            if whole and n and len(first) >= n:
                suppressed.append(self.tokens(first[:n]))
            results = self.generator.generate_batch(
                [self.tokens(prompts[i]) for i in group],
                max_length=bound + (len(first) - 1 if whole else 0),
                include_prompt_in_result=whole,
                end_token=self.tokens(self.stop_ids) if self.stop_ids else None,
                return_end_token=True,
                no_repeat_ngram_size=n,
                suppress_sequences=suppressed or None,
                **search,
            )
            for i, result in zip(group, results, strict=True):
                # the prompt comes back whole, its first token unless it is the BOS
                cut = len(first) - int(prompts[i][0] == self.bos_id) if whole else 0
                rows[i] = [[int(t) for t in ids][cut:] for ids in result.sequences_ids[:returned]]
        return [ids for row in rows for ids in row]


def _id_list(value: Any) -> set[int]:
    """A generation config's ``eos_token_id`` (None, an id or a list) as a set of ids."""
    if value is None:
        return set()
    return {int(v) for v in (value if isinstance(value, (list, tuple)) else [value])}


def _config_token(export_dir: Path, key: str) -> str:
    """A special token ctranslate2 recorded in the export's config.json, or ""."""
    try:
        config = json.loads((export_dir / MODEL_CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return ""
    value = config.get(key) if isinstance(config, dict) else None
    return value if isinstance(value, str) else ""
