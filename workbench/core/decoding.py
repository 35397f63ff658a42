"""How a model is asked to translate, decided in one place for every front end.

The run's before/after scoring, ``workbench translate``/``interact``, ``workbench
attention`` and the TUI's Translate and Attention panes must turn the same sentence into
the same token ids and decode them with the same settings, or their outputs disagree for
reasons nobody can see. So input cleaning, the length bound, the
range checks and the model's decoding defaults live here, and everything else calls them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from typing import Any

from workbench.errors import WorkbenchError

#: The scratch model's position table (Marian's size). Every other model's own bound is
#: read from its config (:attr:`workbench.core.languages.Direction.max_positions`).
MAX_POSITIONS = 512
#: The longest source, target or output accepted before a model is loaded; the model's
#: own bound is checked once it is (relative-position models such as T5 have none).
LENGTH_CEILING = 8192
#: New tokens one output may take: every position but the decoder start token's.
MAX_NEW_TOKENS = LENGTH_CEILING - 1
#: Beams anyone asks for in practice; more only costs memory and time.
MAX_BEAMS = 64
#: Sequences one source may return (a pick's candidates): as many as beams at most.
MAX_RETURNED = MAX_BEAMS

#: The engines a translating command can ask for (``--backend``); see ``choose_export``.
BACKENDS = ("auto", "transformers", "ct2")

#: ``target_label`` value meaning "the model's own": the label of its target language
#: (:func:`workbench.core.model.direction.resolve_direction`).
AUTO_LABEL = "auto"


def check_beams(value: int, name: str = "num_beams") -> int:
    """``value`` when it is a usable beam count, else the one-line error naming ``name``."""
    if not 1 <= value <= MAX_BEAMS:
        raise WorkbenchError(f"{name} must be 1..{MAX_BEAMS}, got {value}")
    return value


def check_new_tokens(value: int, name: str = "max_new_tokens") -> int:
    """``value`` when it is a usable output length, else the one-line error naming ``name``."""
    if not 1 <= value <= MAX_NEW_TOKENS:
        raise WorkbenchError(f"{name} must be 1..{MAX_NEW_TOKENS}, got {value}")
    return value


@dataclass(frozen=True)
class DecodeOptions:
    """How to generate: beams, length bound and n-gram blocking (checked on creation).

    Sampling (``do_sample``, with ``top_k``, ``top_p``, ``temperature``, ``epsilon_cutoff``
    and a ``seed``) is for the Lab's decoding study and a pick's candidates; translation
    itself searches (greedy or beams). ``num_return_sequences`` rows come back per source,
    in a row: beam search's n-best in rank order, or independent samples.
    """

    num_beams: int = 1
    max_new_tokens: int = 128
    no_repeat_ngram_size: int = 0
    do_sample: bool = False
    top_k: int = 0  # 0: no top-k cut
    top_p: float = 1.0  # 1.0: no nucleus cut
    temperature: float = 1.0
    epsilon_cutoff: float = 0.0  # 0: no epsilon cut (Hewitt et al. 2022: 0.02 for MBR)
    num_return_sequences: int = 1
    seed: int | None = None  # None: sampling draws from the process's random state

    def __post_init__(self) -> None:
        check_beams(self.num_beams)
        check_new_tokens(self.max_new_tokens)
        if self.no_repeat_ngram_size < 0:
            raise WorkbenchError(
                f"no_repeat_ngram_size must be >= 0, got {self.no_repeat_ngram_size}"
            )
        if self.top_k < 0 or not 0 < self.top_p <= 1 or not self.temperature > 0:
            raise WorkbenchError(
                f"sampling needs top_k >= 0, 0 < top_p <= 1 and temperature > 0; got "
                f"top_k {self.top_k}, top_p {self.top_p}, temperature {self.temperature}"
            )
        if not 0 <= self.epsilon_cutoff < 1:
            raise WorkbenchError(f"epsilon must be 0 <= epsilon < 1, got {self.epsilon_cutoff}")
        most = MAX_RETURNED if self.do_sample else self.num_beams
        if not 1 <= self.num_return_sequences <= most:
            raise WorkbenchError(
                f"num_return_sequences must be 1..{most} (beam search returns at most its "
                f"beams), got {self.num_return_sequences}"
            )

    def sampling_kwargs(self) -> dict[str, Any]:
        """``generate``'s sampling arguments: all of them set, so a model's own defaults
        (a ``top_k`` of 50 in many generation configs) never leak into a strategy."""
        if not self.do_sample:
            return {"do_sample": False}
        return {
            "do_sample": True,
            "top_k": self.top_k,
            "top_p": self.top_p,
            "temperature": self.temperature,
            **({"epsilon_cutoff": self.epsilon_cutoff} if self.epsilon_cutoff else {}),
        }

    @classmethod
    def of_model(cls, generation_config: Any) -> DecodeOptions:
        """The defaults a saved model carries in its generation config.

        A run writes ``max_length`` (start token + new tokens) rather than
        ``max_new_tokens``, which would make ``generate`` warn on every batch. Values past
        the limits (a Hub model's 512) are capped to them.
        """
        gen = generation_config
        return cls(
            num_beams=min(int(gen.num_beams or 1), MAX_BEAMS),
            max_new_tokens=min(
                int(gen.max_new_tokens or (gen.max_length or 129) - 1), MAX_NEW_TOKENS
            ),
            no_repeat_ngram_size=int(gen.no_repeat_ngram_size or 0),
        )

    def overridden(
        self, num_beams: int | None = None, max_new_tokens: int | None = None
    ) -> DecodeOptions:
        """These options with the values a user gave (None keeps the model's)."""
        return replace(
            self,
            num_beams=self.num_beams if num_beams is None else num_beams,
            max_new_tokens=self.max_new_tokens if max_new_tokens is None else max_new_tokens,
        )


def clean_input(text: str) -> str:
    """Make arbitrary input safe to tokenize: no lone surrogates or control characters."""
    text = text.encode("utf-8", "replace").decode("utf-8", "replace")
    text = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn") and ch != "\n" else ch
        for ch in text
    )
    return " ".join(text.split())


def length_bound(source_tokens: int, max_new_tokens: int) -> int:
    """New tokens allowed for a source of ``source_tokens``: an untrained or looping model
    would otherwise run every sentence to the cap."""
    return min(max_new_tokens, 2 * source_tokens + 8)
