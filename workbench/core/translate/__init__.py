"""Decoding: the Translator (transformers or CTranslate2) and the console history."""
