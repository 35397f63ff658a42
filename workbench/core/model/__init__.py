"""Loading a translation model and its tokenizer (from a folder or the Hub), and the demo's
scratch Marian.
"""
