"""What a user asks of a model's direction, before any model is loaded: the languages,
Marian's label, a task prefix or a decoder-only model's prompt.

The translating commands' flags, the TUI's panes and a run's configuration all ask in
this one form, and :func:`~workbench.core.model.direction.resolve_direction` answers it
for one model with a :class:`~workbench.core.languages.Direction`. What the request
leaves out, the model's recorded settings fill in (:meth:`DirectionRequest.over`), so a
saved model decodes as its run did with no flags.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.decoding import AUTO_LABEL
from workbench.core.records.model_settings import ModelSettings


@dataclass(frozen=True)
class DirectionRequest:
    """The direction a user asks of a model: the translating commands' flags, a pane's
    choice, or a run's configuration. A field left at its default is not asked.

    ``target_label`` is Marian's: :data:`AUTO_LABEL` takes the model's label for the
    target language (none for a single-pair model), a ``>>xxx<<`` token is checked against
    the vocabulary, None is no label. ``source_prefix`` is put before every source (T5's
    task prefix). A decoder-only model is told the pair by ``prompt`` (or
    ``prompt_template``, the text of one).
    """

    source_lang: str | None = None  # None: the model's recorded one, else en
    target_lang: str | None = None  # None: the model's recorded one, else zh
    target_label: str | None = AUTO_LABEL
    source_prefix: str | None = None
    prompt: str | None = None
    prompt_template: str | None = None

    def over(self, recorded: ModelSettings) -> DirectionRequest:
        """This request, with what it leaves out taken from what the model recorded (its
        workbench.json, or a Hub id's preset); the workbench's defaults come after both.

        The label :data:`AUTO_LABEL` keeps the recorded label unless a new
        ``target_lang`` is asked. A recorded prompt is kept unless a prompt is asked.
        """
        label = self.target_label
        if label == AUTO_LABEL and self.target_lang is None:
            label = recorded.target_label
        source_lang = self.source_lang or recorded.source_lang
        target_lang = self.target_lang or recorded.target_lang
        prompt, template = self.prompt, self.prompt_template
        if template is None and prompt in (None, recorded.prompt):
            prompt = recorded.prompt
            # A recorded chat message names the languages: kept unless other ones are asked.
            new_languages = (source_lang, target_lang) != (
                recorded.source_lang,
                recorded.target_lang,
            )
            if not (prompt == "chat" and new_languages):
                template = recorded.prompt_template
        return DirectionRequest(
            source_lang=source_lang,
            target_lang=target_lang,
            target_label=label,
            source_prefix=(
                self.source_prefix if self.source_prefix is not None else recorded.source_prefix
            ),
            prompt=prompt,
            prompt_template=template,
        )
