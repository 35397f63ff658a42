"""The memory plan of a ``--shard`` run, one rank's (FSDP2): the weights, gradients and
AdamW's moments divided by the world size, the units gathered whole beside them, the
shards in host memory under --shard-offload, the fewest GPUs that fit a run, and the world
size the plan divides by. The figures are counted here by hand from ALMA-7B's shape
(Llama-2-7B's). The command (``train --plan-only``) is in tests/cli/test_cli_plan_only.py."""

from __future__ import annotations

import pytest

from tests.helpers.memory import ALMA_7B, NLLB_3B_CONFIG
from tests.helpers.runs import tiny_config
from workbench.core.records.memory import GB
from workbench.core.records.run_records import Precision
from workbench.core.train.memory.plan import estimate, plan_memory
from workbench.core.train.memory.sharded import plan_world_size
from workbench.errors import WorkbenchError

BF16 = Precision("cuda", "bf16", True)
BUDGET = (80 * GB, "(--memory-budget)")

# ALMA-7B by hand: hidden d, FFN f, 32 layers, 32,000 pieces, untied, every head a
# key-value head. A layer: q, k, v, o (d × d each), gate, up, down (d × f each), two
# RMSNorms (d each); the root: the embeddings and the output layer (32,000 × d each) and
# the final norm.
D, F, LAYERS, VOCAB = 4096, 11008, 32, 32000
BLOCK = 4 * D * D + 3 * D * F + 2 * D
ROOT = 2 * VOCAB * D + D
PARAMETERS = ROOT + LAYERS * BLOCK


def alma_config():
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(ALMA_7B)


def alma_run(**overrides):
    """ALMA-7B fully fine-tuned through its prompt, as the docs' 8 × 80 GB example."""
    values = dict(model="x", prompt="alma", batch_size=16, bf16=True, memory_budget=80)
    return tiny_config(**{**values, **overrides})


def test_a_rank_keeps_its_share_of_the_weights_gradients_and_moments():
    whole = estimate(alma_run(), alma_config(), BF16, BUDGET)
    sharded = estimate(alma_run(shard=True), alma_config(), BF16, BUDGET, world=8)
    assert whole.parameters == PARAMETERS == 6_738_415_616
    # fp32 weights that train, their fp32 gradients, AdamW's two fp32 moments: each 1/8;
    # no autocast copy (the gathered units are the bf16 copies)
    assert sharded.weights == 4 * PARAMETERS / 8
    assert sharded.gradients == 4 * PARAMETERS / 8
    assert sharded.optimizer == 8 * PARAMETERS / 8
    assert whole.weights == (4 + 2) * PARAMETERS
    # every rank runs the whole per-device batch
    assert sharded.activations == whole.activations
    assert sharded.decoding == whole.decoding
    assert sharded.sharding is not None
    assert sharded.sharding.world_size == 8


def test_a_rank_also_holds_the_root_and_two_blocks_gathered_in_bf16_with_gradients():
    sharded = estimate(alma_run(shard=True), alma_config(), BF16, BUDGET, world=8)
    assert sharded.sharding is not None
    assert (sharded.sharding.root, sharded.sharding.block) == (ROOT, BLOCK)
    # the root and its gradients, the block computed and the one prefetched, and the
    # computed one's gradients: 2 bytes each
    assert sharded.sharding.gathered == 2 * (2 * ROOT + 3 * BLOCK)
    assert sharded.sharding.dtype == "bf16"
    peak = max(sharded.activations, sharded.decoding)
    held = 16 * PARAMETERS / 8
    assert sharded.total == pytest.approx(held + 2 * (2 * ROOT + 3 * BLOCK) + peak + GB)


def test_in_fp32_the_units_are_gathered_as_the_weights_rest():
    fp32 = Precision("cuda", "fp32", True)
    sharded = estimate(alma_run(shard=True, bf16=False), alma_config(), fp32, BUDGET, world=4)
    assert sharded.sharding is not None
    assert sharded.sharding.gathered == 4 * (2 * ROOT + 3 * BLOCK)


def test_under_lora_the_frozen_base_is_sharded_too_and_only_adapters_have_gradients():
    lora = estimate(alma_run(shard=True, lora=True), alma_config(), BF16, BUDGET, world=8)
    # rank 8 on q_proj and v_proj (d → d): 2 × 8 × (d + d) a layer
    per_layer = 2 * 8 * (D + D)
    adapters = LAYERS * per_layer
    assert lora.trainable == adapters
    # ALMA's config says float32, so its frozen base loads so; the adapters are fp32
    assert lora.weights == 4 * (PARAMETERS + adapters) / 8
    assert lora.gradients == 4 * adapters / 8
    assert lora.sharding is not None
    # the frozen root has no gradients; a block's are its adapters'
    block = BLOCK + per_layer
    assert lora.sharding.gathered == 2 * (ROOT + 2 * block + per_layer)


def test_offloaded_shards_leave_the_device_with_the_gathered_units_and_activations():
    run = alma_run(shard=True, shard_offload=True)
    offloaded = estimate(run, alma_config(), BF16, BUDGET, world=8)
    on_device = estimate(alma_run(shard=True), alma_config(), BF16, BUDGET, world=8)
    assert offloaded.sharding is not None
    assert offloaded.host == 16 * PARAMETERS / 8
    peak = max(offloaded.activations, offloaded.decoding)
    assert offloaded.total == pytest.approx(offloaded.sharding.gathered + peak + GB)
    assert offloaded.total == pytest.approx(on_device.total - 16 * PARAMETERS / 8)


def test_a_run_too_big_for_one_gpu_is_told_the_fewest_gpus_that_fit_it_sharded():
    plan = plan_memory(alma_run(), alma_config(), BF16)
    assert not plan.fits
    assert plan.fix is not None  # the one-GPU way out first...
    assert plan.fix.flags == ("--lora",)
    assert plan.scale is not None  # ...and the full fine-tune, sharded
    assert plan.scale.flags == ()
    world = plan.scale.world
    fewer = estimate(alma_run(shard=True), alma_config(), BF16, BUDGET, world=world - 1)
    enough = estimate(alma_run(shard=True), alma_config(), BF16, BUDGET, world=world)
    assert not fewer.fits
    assert enough.fits
    assert plan.scale.total == enough.total
    # by hand: what sharding does not divide, and the rest over N
    unshared = 2 * (2 * ROOT + 3 * BLOCK) + max(enough.activations, enough.decoding) + GB
    assert world == -(-16 * PARAMETERS // (80 * GB - unshared))
    assert plan.scale.arguments[0] == "--shard"
    assert "--bf16" in plan.scale.arguments


def test_past_one_node_the_fewest_gpus_are_whole_nodes_of_8():
    run = alma_run(memory_budget=18, gradient_checkpointing=True, batch_size=1)
    plan = plan_memory(run, alma_config(), BF16)
    assert plan.scale is not None
    assert plan.scale.world % 8 == 0
    assert plan.scale.world > 8
    sharded = alma_run(shard=True, memory_budget=18, gradient_checkpointing=True, batch_size=1)
    budget = (18 * GB, "(--memory-budget)")
    previous = estimate(sharded, alma_config(), BF16, budget, world=plan.scale.world - 8)
    assert not previous.fits
    assert estimate(sharded, alma_config(), BF16, budget, world=plan.scale.world).fits


def test_a_sharded_run_whose_activations_exceed_a_gpu_is_told_the_flag_that_shrinks_them():
    run = alma_run(shard=True, gpus=8, batch_size=64)
    plan = plan_memory(run, alma_config(), BF16)
    assert plan.sharding is not None
    assert plan.unshared > 80 * GB  # no number of GPUs divides the activations
    assert plan.fix is not None
    assert plan.fix.flags[0] == "--gradient-checkpointing"  # never --lora: it shards to train all
    assert plan.scale is None


def test_a_sharded_run_that_more_gpus_fit_is_told_how_many():
    plan = plan_memory(alma_run(shard=True, gpus=2), alma_config(), BF16)
    assert plan.scale is not None
    assert plan.scale.world > 2
    assert plan.scale.flags == ()
    assert plan_memory(alma_run(shard=True, gpus=plan.scale.world), alma_config(), BF16).fits


def test_the_world_size_is_gpus_else_the_launchers_else_1(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert plan_world_size(alma_run(shard=True)) == 1
    assert plan_world_size(alma_run(shard=True, gpus=8)) == 8
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert plan_world_size(alma_run(shard=True)) == 4
    assert plan_world_size(alma_run(shard=True, gpus=4)) == 4


@pytest.mark.parametrize("world", ["8", "1"])
def test_under_a_launcher_gpus_that_differ_from_its_world_size_are_refused(monkeypatch, world):
    monkeypatch.setenv("WORLD_SIZE", world)
    with pytest.raises(
        WorkbenchError, match=rf"--gpus 4 is not this launch's world size \({world}"
    ):
        plan_world_size(alma_run(shard=True, gpus=4))


def test_a_seq2seq_models_blocks_are_its_layers_and_its_root_the_shared_table():
    from transformers import AutoConfig

    nllb = AutoConfig.from_pretrained(NLLB_3B_CONFIG)
    sharded = estimate(
        tiny_config(model="x", batch_size=16, shard=True), nllb, BF16, BUDGET, world=4
    )
    assert sharded.sharding is not None
    d, f, vocab = 2048, 8192, 256206
    # a decoder layer: self- and cross-attention (q, k, v, o with biases), the FFN with
    # biases, three layer norms (weight and bias)
    decoder_layer = 8 * (d * d + d) + 2 * d * f + f + d + 3 * 2 * d
    assert sharded.sharding.block == decoder_layer
    # the shared table (tied to the output layer: once) and the two final layer norms
    assert sharded.sharding.root == vocab * d + 2 * 2 * d


def test_the_plans_blocks_are_the_ones_the_run_wraps():
    """Marian names no blocks of its own: the family seam does, for the plan as for the
    run (family.shard_blocks)."""
    from transformers import MarianConfig

    from workbench.core.model.blocks import transformer_blocks
    from workbench.core.model.meta_model import meta_model

    config = MarianConfig(
        d_model=16, encoder_layers=2, decoder_layers=3, encoder_ffn_dim=32,
        decoder_ffn_dim=32, encoder_attention_heads=2, decoder_attention_heads=2,
        vocab_size=100, pad_token_id=0, decoder_start_token_id=0,
    )  # fmt: skip
    blocks = transformer_blocks(meta_model(config))
    assert blocks == [
        "model.encoder.layers.0", "model.encoder.layers.1", "model.decoder.layers.0",
        "model.decoder.layers.1", "model.decoder.layers.2",
    ]  # fmt: skip


def test_the_launch_is_one_node_up_to_8_gpus_then_whole_nodes_with_their_rank():
    from workbench.core.views.launch_text import launch_command

    arguments = ["--shard", "--model", "./my model"]
    assert launch_command(5, arguments) == (
        "`torchrun --nproc_per_node=5 -m workbench train --headless --shard --model './my model'`"
    )
    many = launch_command(24, arguments)
    assert many.startswith(
        "`torchrun --nnodes=3 --nproc_per_node=8 --node_rank=RANK --master_addr=ADDR "
        "--master_port=29500 -m workbench train --headless --shard --model './my model'` "
        "on each of the 3 nodes (RANK 0 to 2; ADDR: node 0's address, as MASTER_ADDR)"
    )
