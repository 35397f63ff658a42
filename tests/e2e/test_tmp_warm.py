import threading
from tests.e2e.test_objective_runs import losses
from tests.helpers.runs import small
from workbench.core.events import TrainStep
from workbench.core.train.run_training import run_training


def test_sft_resume(tmp_path, tiny_model_dir):
    kw = dict(model=str(tiny_model_dir), epochs=2.0, logging_steps=1, learning_rate=1e-3, max_source_length=32, max_target_length=32, max_new_tokens=8)
    a, b = [], []
    run_training(small(tmp_path, "a", **kw), losses(a))
    stop = threading.Event()
    def at4(e):
        losses(b)(e)
        if isinstance(e, TrainStep) and e.step >= 4:
            stop.set()
    r = run_training(small(tmp_path, "b", **kw), at4, stop)
    assert r.status == "stopped"
    run_training(small(tmp_path, "b", **kw), losses(b), resume=True)
    print(a[:8]); print(b[:8])
    assert a == b
