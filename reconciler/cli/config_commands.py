"""Commands that read a configuration and change nothing: validate, schema, effective."""

from __future__ import annotations

import json
from pathlib import Path

import click

from reconciler.errors import ConfigurationError, PoolformError

DIR = click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)


@click.command()
@click.argument("target", type=click.Path(path_type=Path), default=".", required=False)
def validate(target: Path) -> int:
    """Check a configuration directory (or one file, e.g. a Job) without touching anything.

    Exit 0 when valid (warnings are printed), 1 with every error found otherwise.
    """
    from reconciler.checks import load_configuration, load_file
    from schemas.text import printable

    try:
        if target.is_dir() or not target.exists():
            configuration = load_configuration(target)
        else:
            configuration = load_file(target)
    except ConfigurationError as error:
        click.echo(error.render(), err=True)
        count = sum(1 for d in error.diagnostics if d.severity == "error")
        click.echo(f"{printable(str(target))}: {count} error(s)", err=True)
        return 1
    for warning in configuration.warnings:
        click.echo(warning.render(), err=True)
    kinds: dict[str, int] = {}
    for doc in configuration.documents:
        kinds[doc.kind] = kinds.get(doc.kind, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no documents"
    click.echo(f"{printable(str(target))}: valid ({summary})")
    return 0


@click.command()
@click.option("--out", "out", type=click.Path(path_type=Path), help="Write <Kind>.json files here.")
def schema(out: Path | None) -> None:
    """The JSON Schema of every kind, generated from the models."""
    from schemas.kinds import KINDS, json_schema

    if out is None:
        click.echo(
            json.dumps({kind: json_schema(kind) for kind in KINDS}, indent=2, sort_keys=True)
        )
        return
    out.mkdir(parents=True, exist_ok=True)
    for kind in KINDS:
        (out / f"{kind}.json").write_text(
            json.dumps(json_schema(kind), indent=2, sort_keys=True) + "\n"
        )
    click.echo(f"wrote {len(KINDS)} schemas to {out}")


@click.command()
@click.argument("compute_config")
@DIR
def effective(compute_config: str, directory: Path) -> None:
    """The effective config of every worker group of COMPUTE_CONFIG, as YAML."""
    from ruamel.yaml import YAML

    from reconciler.checks import load_configuration
    from reconciler.effective import effective_compute_config
    from schemas import ComputeConfig, MachinePool

    configuration = load_configuration(directory)
    found = configuration.find(ComputeConfig, compute_config)
    if found is None:
        names = [c.name for c in configuration.of_kind(ComputeConfig)]
        raise PoolformError(
            f"no ComputeConfig named `{compute_config}` in {directory}",
            hint=f"defined: {', '.join(names) or 'none'}",
        )
    pools = {p.name: p for p in configuration.of_kind(MachinePool)}
    result = effective_compute_config(found, pools, configuration.cluster.provider)
    yaml = YAML()
    yaml.default_flow_style = False
    import sys

    yaml.dump({"compute_config": found.name, "worker_groups": result}, sys.stdout)
