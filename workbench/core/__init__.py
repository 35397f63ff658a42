"""The core every front end runs through; it never imports Textual."""
