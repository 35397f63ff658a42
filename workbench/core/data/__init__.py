"""Sentence pairs: local files, the Hub dataset and its seeded sample, tokenization for
training.
"""
