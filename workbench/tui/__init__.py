"""The Textual front end. Imported only by ``workbench tui``; the core never imports it."""
