"""Scoring: sacreBLEU metrics and the before/after evaluation on validation and test."""
