"""poolform's reconciler: loading, validation, planning, applying and the CLI that wires them."""
