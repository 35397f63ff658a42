"""The run settings of ``train --objective``: what a run trains towards.

``sft`` (the default) trains on the references. The others start from a trained model
(usually a finished run's ``best_model/``), draw N candidates of each training source as
picking draws them (``--candidates``, ``--candidates-from``, ``--epsilon``, ``--top-p``,
``--temperature``, with the run's ``seed``), and rank them by ``--rank-by``:

- ``best`` trains on the top candidate as the target (QE and MBR fine-tuning:
  Finkelstein, Freitag et al., ICLR 2024);
- ``cpo`` on preference pairs, the best and the worst of the reference and the candidates,
  by ALMA-R's loss: the preference term plus NLL on the preferred (Xu et al., ICML 2024);
- ``dpo`` on the same pairs against a frozen copy of the starting model (Rafailov et al.
  2023).

Each is a :class:`~workbench.core.config.run_config.RunConfig` field, defined here so the
run's configuration reads as one list, and recorded in ``config.json`` for ``runs``,
report and compare to show.
"""

from __future__ import annotations

from workbench.core.config.settings import setting

OBJECTIVE = setting(
    "sft",
    group="objective",
    help="sft (the references), best (the top-ranked candidate), cpo or dpo (the best and "
    "the worst of reference and candidates as a preference pair)",
)
RANK_BY = setting(
    None,
    group="objective",
    help="--objective's ranker: qe (--qe-model), metricx-qe, comet, metricx (--metricx), "
    "chrf or bleu (the last four against the reference)",
)
BETA = setting(
    0.1, group="objective", help="CPO's and DPO's beta: how sharply the preference is scored"
)
NLL_WEIGHT = setting(
    1.0, group="objective", help="CPO's weight of the NLL on the preferred translation"
)
