"""A decoder-only model's prompt and training rows, and the mistakes a user makes with
them: each refused in one line before any run folder exists."""

from __future__ import annotations

import pytest

from tests.helpers.causal_models import english_to_chinese

PAIRS = [
    ("I like tea.", "我喜欢茶。"),
    ("My brother is a doctor who works in a big hospital.", "我哥哥是大医院的医生。"),
]


@pytest.mark.parametrize(("family", "prompt"), [("qwen3", None), ("llama", "alma")])
def test_the_first_label_not_ignored_is_the_first_target_token(causal_models, family, prompt):
    from workbench.core.data.tokenize import PairTokenizer
    from workbench.core.train.batches import PromptCollator

    tokenizer, direction = english_to_chinese(causal_models[family], prompt)
    sources, targets = [s for s, _ in PAIRS], [t for _, t in PAIRS]
    encoded = PairTokenizer(tokenizer, direction, 32, 32).encode(sources, targets)
    rows = [{k: encoded[k][i] for k in ("input_ids", "attention_mask", "labels")} for i in (0, 1)]
    batch = PromptCollator(tokenizer.pad_token_id)(rows)
    for i, (source, target) in enumerate(PAIRS):
        labels = batch["labels"][i]
        first = int(labels.ne(-100).nonzero()[0])
        prompt_ids = tokenizer(direction.source_text(source))["input_ids"]
        assert first == len(prompt_ids)
        assert batch["input_ids"][i][:first].tolist() == prompt_ids
        answer = labels[labels.ne(-100)].tolist()
        target_ids = tokenizer(direction.target_prefix + target, add_special_tokens=False)
        assert labels[first] == target_ids["input_ids"][0]
        assert tokenizer.decode(answer).strip() == f"{target}{direction.target_suffix}"
        assert answer[-1] in direction.stop_ids  # the turn's end (or EOS) is learned
    # The shorter row is padded on the right: masked, and out of the loss.
    short = batch["attention_mask"][0]
    assert short[-1] == 0
    assert batch["labels"][0][short.eq(0)].eq(-100).all()


def test_a_qwen3_chat_prompt_has_no_thinking_and_stops_at_the_turns_end(causal_models):
    tokenizer, direction = english_to_chinese(causal_models["qwen3"])
    text = direction.source_text("I like tea.")
    assert text.startswith("<|im_start|>user\n")
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert direction.target_suffix == "<|im_end|>"
    assert tokenizer.convert_tokens_to_ids("<|im_end|>") in direction.stop_ids
    assert direction.output_text("<think>hm</think>\n\n我喜欢茶。\n") == "我喜欢茶。"


def test_a_seed_x_prompt_ends_with_the_target_tag_and_keeps_one_line(causal_models):
    _, direction = english_to_chinese(causal_models["mistral"], "seed-x")
    assert direction.source_text("Hi.") == (
        "Translate the following English sentence into Chinese:\nHi. <zh>"
    )
    assert direction.output_text(" 你好。\nTranslate the following") == "你好。"


def test_a_tokenizer_without_a_pad_token_pads_with_eos_and_says_so(causal_models):
    tokenizer, direction = english_to_chinese(causal_models["llama"], "alma")
    assert tokenizer.pad_token == tokenizer.eos_token == "</s>"
    assert any("no pad token" in note and "</s>" in note for note in direction.notes)


def test_a_recorded_chat_message_is_kept_for_the_same_languages_and_dropped_for_new_ones(
    causal_models,
):
    from workbench.core.config.direction_request import DirectionRequest
    from workbench.core.model.direction import resolve_direction
    from workbench.core.model.family import max_positions
    from workbench.core.model.load import load_tokenizer_and_config
    from workbench.core.records.model_settings import ModelSettings

    tokenizer, config = load_tokenizer_and_config(str(causal_models["qwen3"]))
    message = "Render this in {target_lang}, please:\n{source}"
    settings = ModelSettings(
        source_lang="en", target_lang="zh", prompt="chat", prompt_template=message
    )

    def prompt(**flags):
        asked = DirectionRequest(**flags).over(settings)
        direction = resolve_direction(config.model_type, max_positions(config), tokenizer, asked)
        return direction.source_text("Hi.")

    recorded = prompt()
    assert "Render this in Chinese, please:\nHi." in recorded  # the recorded message
    assert prompt(target_lang="zh") == recorded
    assert prompt(prompt="chat") == recorded
    assert "Render this" not in prompt(target_lang="de")  # it named the old languages


def test_a_prompt_for_a_seq2seq_model_is_refused_in_one_line(tiny_model_dir):
    from workbench.core.config.direction_request import DirectionRequest
    from workbench.core.model.direction import resolve_direction
    from workbench.core.model.family import max_positions
    from workbench.core.model.load import load_tokenizer_and_config
    from workbench.core.records.model_settings import ModelSettings
    from workbench.errors import WorkbenchError

    tokenizer, config = load_tokenizer_and_config(str(tiny_model_dir))
    asked = DirectionRequest(prompt="alma").over(ModelSettings())
    with pytest.raises(WorkbenchError, match=r"for decoder-only models.*drop them"):
        resolve_direction(config.model_type, max_positions(config), tokenizer, asked)


def test_the_chat_message_is_the_familys_own_wording():
    from workbench.core.model.family import MODEL_TYPES
    from workbench.core.model.prompts import chat_instruction

    hunyuan = MODEL_TYPES["hunyuan_v1_dense"].instruction
    assert chat_instruction(hunyuan, "m", "en", "zh").startswith("把下面的文本翻译成中文")
    assert chat_instruction(hunyuan, "m", "en", "de").startswith(
        "Translate the following segment into German"
    )
    assert "from English into Chinese" in chat_instruction("general", "x/TowerInstruct", "en", "zh")
