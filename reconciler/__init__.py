"""poolform's reconciler, in layers that import only downwards (checked by lint-imports):

cli -> usecases (+ workspace) -> apply | render -> drift -> plan -> checks -> loading

The CLI parses and renders; the use cases do the I/O (state, provider, environment, clock) and
call the pure steps below them; the scheduler stands beside them and never plans or applies.
"""
