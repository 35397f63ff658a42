"""A run's folder: every file it holds named once (:mod:`.layout`:
:class:`~.layout.RunFolder`, and the :class:`~.layout.OutputFolder` around it), and the
typed reader and writer of each record whose type the base holds: ``config.json``
(:mod:`.saved_config`), ``summary.json`` (:mod:`.summary_file`), the held-out translations
(:mod:`.samples`); the run folders of an output folder, made and found
(:mod:`.output_folder`). Part of the core's base: it imports only the other base parts,
and the packages above read and write their own records (the writer's, a stop request,
the Lab's studies) at the paths it names.
"""
