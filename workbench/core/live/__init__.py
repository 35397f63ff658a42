"""Live runs: one writer per run folder, what every front end reads of a run's life, its
lines as a log file, following it while it grows, stopping it from anywhere, and starting
it detached from the terminal.

A run belongs to its folder, not to the terminal that started it. The writer holds the
folder (``writer.lock``, ``writer.json``); viewers -- ``workbench runs``, ``logs``, ``stop``,
the TUI, report and compare -- only read the folder, so any number of them may watch, and
a stop is a request left in the folder that the writer polls.
"""
