"""The Trainer and what it is given (workbench.core.train.trainer, .recipe): evaluation order,
TensorBoard files."""

from __future__ import annotations


def test_evaluation_set_is_longest_first_with_references_still_paired():
    import datasets

    from workbench.core.train.recipe import longest_first

    dataset = datasets.Dataset.from_dict(
        {"input_ids": [[1] * 3, [2] * 5, [3] * 1, [4] * 5], "labels": [[1], [2], [3], [4]]}
    )
    ordered, refs = longest_first(dataset, ["three", "five-a", "one", "five-b"])
    assert [len(ids) for ids in ordered["input_ids"]] == [5, 5, 3, 1]
    assert refs == ["five-a", "five-b", "three", "one"]  # ties keep their order
    assert [row[0] for row in ordered["labels"]] == [2, 4, 1, 3]
