"""Every wording and drawing the front ends share: numbers, scores and events as text,
markdown/HTML document helpers, SVG and text charts, wide characters. Imports no torch and
nothing above the loose core modules.
"""
