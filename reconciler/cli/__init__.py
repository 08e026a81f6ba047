"""The command line: the only layer that prints, reads the terminal and chooses exit codes.

Each *_commands.py module parses its arguments, calls a use case (reconciler/usecases) and
renders the result; none imports another. common.py holds what they share (options, the prompt,
the error -> exit code mapping), output.py the terminal output of plans and drift reports,
progress.py the apply progress reporters.
"""
