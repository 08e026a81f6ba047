"""The command line: the only layer that prints, reads the terminal and chooses exit codes.

Each *_commands module (a package where a group has many commands: scheduler_commands,
state_commands) parses its arguments, calls a use case (reconciler/usecases) and renders the
result; none imports another. The common package holds what they share (options.py: options
and the prompt; exit_codes.py: the error -> exit code mapping; json_output.py: --json's
documents), output.py the terminal output of plans and drift reports, progress.py the apply
progress reporters.
"""
