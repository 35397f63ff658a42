"""Fine-tuning: :mod:`.run_training` (the run as one story of stages), :mod:`.run_start`
(its checks, data and folder) and :mod:`.run_end` (scored after, published), and their
parts: :mod:`.preflight`, :mod:`.memory` (the memory plan, by model kind),
:mod:`.run_plan` (the plan a run starts with, and ``--plan-only`` prints),
:mod:`.run_model` (the run's model, its precision), :mod:`.recipe` (what the Trainer is
given), :mod:`.trainer` (the Seq2SeqTrainer), :mod:`.training_loop` (its loop run),
:mod:`.callbacks` (its logs as events), :mod:`.loss`, :mod:`.checkpoints`,
:mod:`.distributed` (several ranks), :mod:`.early_stop` and :mod:`.averaging` (of
checkpoints); ``--objective cpo|dpo``'s :mod:`.preference_trainer` over
:mod:`.preference_batches` and :mod:`.preference_loss`."""
