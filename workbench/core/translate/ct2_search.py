"""How a CTranslate2 export is asked to search or sample: ``DecodeOptions`` as
``translate_batch``'s and ``generate_batch``'s arguments.

Beam search's n-best is ``num_hypotheses`` of ``beam_size``; random sampling is
``beam_size=1`` with ``sampling_topk`` (0: the whole vocabulary), ``sampling_topp`` and
``sampling_temperature``, and then ``num_hypotheses`` independent samples, seeded by
``ctranslate2.set_random_seed``. Its samplers take the seed when a process first samples
and then go on from there: the same command gives the same candidates on every run, but a
second call in one process (the next line of a console) draws new ones, where
transformers draws the same. CTranslate2 has no epsilon cut: epsilon sampling is refused
with the flags that would do instead.
"""

from __future__ import annotations

from typing import Any

from workbench.core.decoding import DecodeOptions
from workbench.errors import WorkbenchError


def search_arguments(options: DecodeOptions, ct2: Any) -> dict[str, Any]:
    """The search (or sampling) arguments CTranslate2 takes for ``options``; a seed is set
    on ``ct2`` (the ctranslate2 module) here."""
    if not options.do_sample:
        return {"beam_size": options.num_beams, "num_hypotheses": options.num_return_sequences}
    check_sampling(options)
    if options.seed is not None:
        ct2.set_random_seed(options.seed)
    return {
        "beam_size": 1,
        "num_hypotheses": options.num_return_sequences,
        "sampling_topk": options.top_k,
        "sampling_topp": options.top_p,
        "sampling_temperature": options.temperature,
    }


def check_sampling(options: DecodeOptions) -> None:
    """Refuse in one line a sampler CTranslate2 does not have (an epsilon cut)."""
    if options.do_sample and options.epsilon_cutoff:
        raise WorkbenchError(
            f"CTranslate2 has no epsilon sampling (--epsilon {options.epsilon_cutoff}); "
            "sample with --top-p instead, or pass --backend transformers"
        )
