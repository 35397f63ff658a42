"""Fine-tuning: run_training and its steps (preflight, the run's model, the Trainer, loss,
checkpoints, several ranks).
"""
