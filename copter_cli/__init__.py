"""copter's command-line interface (Typer). Commands are thin: they call ``formats`` and ``solver`` and
map the library's typed errors to the exit codes of ``copter_cli.exit_codes``."""
