"""The loaders that make CTranslate2 compute what transformers computes for a seq2seq
model's family (Marian, NLLB-200, M2M100, mBART-50, T5).

ctranslate2 ships a loader per model class, but three of them do not give transformers'
output for the models users bring, so those three are ours:

- **Marian**: the stock loader assumes ``<pad>`` is the *last* vocabulary entry (true for
  opus-mt, where it is 65000) and drops that row; the demo model's ``<pad>`` is id 2, so
  the stock conversion fails ("vocabulary of size 3999"). It also starts the decoder from
  a zero vector, while transformers starts it from the ``<pad>`` embedding, which
  fine-tuning with tied embeddings moves away from zero (0.29 in norm on the demo model).
  Ours keeps the whole vocabulary and the real start token.
- **M2M100**: its tokenizer keeps the ``__xx__`` codes outside ``get_vocab()``, so the
  stock vocabulary is 100 rows short of the embeddings ("Source vocabulary 0 has size
  1009 but the model expected …"). Ours names every embedding row as the tokenizer maps
  ids, codes included.
- **mBART-50**: the stock loader reads ``normalize_before`` from the config, which
  transformers 5's ``MBartConfig`` no longer has, and starts the decoder as mBART-25 does
  (with the language code) unless the config names the mBART-50 tokenizer class. Ours
  says what the architecture is (pre-norm, a layer norm after the embeddings) and starts
  the decoder from the config's ``decoder_start_token_id``, as ``generate`` does.

NLLB-200 and T5/mT5 convert exactly with the stock loaders. A special id a loader reads
that the config has as None is taken from where transformers takes it
(:func:`fill_missing_ids`), or the export is refused in one line. The target language
code is not part of the conversion: CTranslate2 ignores ``forced_bos_token_id``, so
:class:`~workbench.core.translate.ct2.CT2Backend` passes it as the target prefix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.core.model.family import M2M100, MARIAN, MBART50, NLLB, T5
from workbench.core.translate.ct2_export_info import vocabulary_by_id
from workbench.errors import WorkbenchError


def fill_missing_ids(model: Any, tokenizer: Any, family: str, model_dir: Path) -> None:
    """Give ``model.config`` the special ids the loaders read where it has None, taken from
    where transformers takes them, or refuse the export in one line.

    The loaders turn those ids into tokens with ``convert_ids_to_tokens``, which raises a
    TypeError on None; and CTranslate2 cannot load a config whose bos token is null ("type
    must be string, but is null"). The model object is used for nothing else afterwards.

    - ``decoder_start_token_id``: every loader reads it (T5's only when the config has the
      key at all; without it, ``<pad>``). ``generate`` takes the generation config's, else
      the generation config's ``bos_token_id``; MBartConfig's default is None, so a
      config.json with null beside a generation_config.json with the id is a model
      transformers translates.
    - ``bos_token_id``: only mBART-50's loader reads it (the others take the tokenizer's
      ``bos_token``, or T5's ``<pad>``). transformers 5's MBart50Tokenizer has no bos
      token, so a config built from it has null; fairseq's ``<s>`` (id 0) is that token.
    - ``eos_token_id``: only mBART-50's loader reads it; the tokenizer's is the one the
      stock loaders use.
    """
    config = model.config
    if getattr(config, "decoder_start_token_id", 0) is None:
        generation = model.generation_config
        start = generation.decoder_start_token_id
        config.decoder_start_token_id = start if start is not None else generation.bos_token_id
        if config.decoder_start_token_id is None:
            raise WorkbenchError(
                f"'{model_dir}' names no decoder start token (decoder_start_token_id and "
                "bos_token_id are null in config.json and generation_config.json); set "
                "decoder_start_token_id in its config.json"
            )
    if family != MBART50.name:
        return
    if config.eos_token_id is None:
        config.eos_token_id = tokenizer.eos_token_id
    if config.bos_token_id is None:
        bos = tokenizer.bos_token or ("<s>" if "<s>" in tokenizer.get_vocab() else None)
        if bos is None:
            raise WorkbenchError(
                f"'{model_dir}' has bos_token_id null in config.json and its tokenizer has "
                "no bos token and no <s>; set bos_token_id in its config.json"
            )
        config.bos_token_id = tokenizer.convert_tokens_to_ids(bos)


def seq2seq_loader(family: str, model_type: str) -> Any:
    """The ctranslate2 loader that reproduces transformers for ``family``, or None."""
    from ctranslate2.converters import transformers as stock

    class ExactMarianLoader(stock.BartLoader):
        """Marian as transformers runs it: full vocabulary, real decoder start token."""

        @property
        def architecture_name(self) -> str:
            return "MarianMTModel"

        def get_model_spec(self, model: Any) -> Any:
            model.config.normalize_before = False  # Marian is post-norm
            model.config.normalize_embedding = False
            return super().get_model_spec(model)

        def set_config(self, config: Any, model: Any, tokenizer: Any) -> None:
            config.eos_token = tokenizer.eos_token
            config.unk_token = tokenizer.unk_token
            config.decoder_start_token = tokenizer.convert_ids_to_tokens(
                model.config.decoder_start_token_id
            )

    class ExactM2M100Loader(stock.M2M100Loader):
        """M2M100 with its language codes in the vocabulary, each at its own id."""

        def get_vocabulary(self, model: Any, tokenizer: Any) -> list[str]:
            return vocabulary_by_id(tokenizer, model.config.vocab_size)

    class ExactMBart50Loader(stock.MBartLoader):
        """mBART-50: pre-norm with an embedding layer norm, decoding from ``</s>``."""

        def get_model_spec(self, model: Any) -> Any:
            # What MBartEncoder/MBartDecoder always do, whatever the config says.
            model.config.normalize_before = True
            model.config.normalize_embedding = True
            return super().get_model_spec(model)

        def set_config(self, config: Any, model: Any, tokenizer: Any) -> None:
            ids = model.config
            config.bos_token = tokenizer.convert_ids_to_tokens(ids.bos_token_id)
            config.eos_token = tokenizer.convert_ids_to_tokens(ids.eos_token_id)
            config.unk_token = tokenizer.unk_token
            config.decoder_start_token = tokenizer.convert_ids_to_tokens(ids.decoder_start_token_id)

    # mT5 is T5's stack; UMT5 gives every layer its own position bias (T5 shares layer 0's).
    t5_variants = {"mt5": stock.MT5Loader, "umt5": stock.UMT5Loader}
    by_family: dict[str, Any] = {
        MARIAN.name: ExactMarianLoader,
        NLLB.name: stock.M2M100Loader,
        M2M100.name: ExactM2M100Loader,
        MBART50.name: ExactMBart50Loader,
        T5.name: t5_variants.get(model_type, stock.T5Loader),
    }
    found = by_family.get(family)
    return found() if found is not None else None
