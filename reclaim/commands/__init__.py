"""The ``reclaim`` commands, one module per group. Each module's ``register`` adds its
commands to the parser; each command is a function from parsed arguments to an exit status."""
