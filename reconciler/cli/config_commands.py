"""Commands that read a configuration and change nothing on the cloud: validate, fmt, schema,
effective. (fmt rewrites configuration files' layout, never what they declare.)"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import diagnostic_json, echo_json_document, standard_input_bytes
from reconciler.errors import ConfigurationError, Diagnostic, Location, PoolformError
from reconciler.printable import printable

if TYPE_CHECKING:
    from reconciler.loading.sources import Listing

DIR = click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)
EXIT_WOULD_CHANGE = 3  # fmt --check, as terraform fmt -check

# PoolformErrors validate turns into diagnostics for --json and --format github.
_RULES = {"NothingDeclared": "nothing-declared", "NotAConfigurationDirectory": "not-a-directory"}


def _as_diagnostic(error: PoolformError, target: Path) -> Diagnostic:
    from schemas.text import printable

    rule = _RULES.get(type(error).__name__, "configuration")
    location = error.location or Location(printable(str(target)))
    return Diagnostic("error", rule, error.message, location, error.hint)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(diagnostic: Diagnostic) -> str:
    """A GitHub Actions workflow command: `::error file=F,line=L,col=C,title=RULE::MESSAGE`,
    escaped so no message can end the command or start another."""
    location = diagnostic.location
    properties = []
    if location is not None and location.file:
        properties.append(f"file={_escape_property(location.file)}")
        if location.line > 0:
            properties.append(f"line={location.line}")
            properties.append(f"col={location.column}")
    properties.append(f"title={_escape_property(diagnostic.rule)}")
    message = diagnostic.message
    if diagnostic.suggestion:
        message += f"\nhint: {diagnostic.suggestion}"
    return f"::{diagnostic.severity} {','.join(properties)}::{_escape_data(message)}"


def _report(
    output: str, target: str, diagnostics: Iterable[Diagnostic], summary: str | None
) -> None:
    shown = sorted(diagnostics, key=Diagnostic.sort_key)
    errors = sum(1 for d in shown if d.severity == "error")
    if output == "json":
        document = {
            "format_version": 1,
            "valid": errors == 0,
            "error_count": errors,
            "warning_count": len(shown) - errors,
            "diagnostics": [diagnostic_json(d) for d in shown],
        }
        echo_json_document(json.dumps(document, indent=2, ensure_ascii=False))
        return
    if output == "github":
        for diagnostic in shown:
            click.echo(github_annotation(diagnostic))
    else:
        for diagnostic in shown:
            click.echo(diagnostic.render(), err=True)
    if errors:
        click.echo(f"{target}: {errors} error(s)", err=True)
    elif output == "text":
        click.echo(f"{target}: valid ({summary})")


@click.command()
@click.argument(
    "target",
    metavar="[DIR | FILE]",
    type=click.Path(path_type=Path),
    default=".",
    required=False,
)
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="How to print the diagnostics: text on stderr, one JSON document on stdout, or "
    "GitHub Actions annotations on stdout.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
def validate(target: Path, output: str, as_json: bool) -> int:
    """Check a configuration directory (or one file, e.g. a Job) without touching anything.

    Exit 0 when valid (warnings are printed), 1 with every error found otherwise.
    """
    from reconciler.checks import load_configuration, load_file
    from schemas.text import printable

    output = "json" if as_json else output
    shown = printable(str(target))
    try:
        # a link that loops or dangles is read as a file, which names what is wrong with it
        if target.is_dir() or not (target.exists() or target.is_symlink()):
            configuration = load_configuration(target, refuse_empty=True)
        else:
            configuration = load_file(target)
    except ConfigurationError as error:
        _report(output, shown, error.diagnostics, None)
        return 1
    except PoolformError as error:
        if output == "text":
            raise
        _report(output, shown, [_as_diagnostic(error, target)], None)
        return 1
    kinds: dict[str, int] = {}
    for doc in configuration.documents:
        kinds[doc.kind] = kinds.get(doc.kind, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "no documents"
    _report(output, shown, configuration.warnings, summary)
    return 0


@click.command(name="fmt")
@click.argument(
    "target",
    metavar="[DIR | FILE | -]",
    type=click.Path(path_type=Path),
    default=".",
    required=False,
)
@click.option(
    "--check/--no-check",
    default=False,
    help="Change nothing: list the files that are not in the canonical layout and exit 3 "
    "if there are any.",
)
@click.option("--diff/--no-diff", default=False, help="Show each change as a unified diff.")
@click.option(
    "--recursive/--no-recursive",
    default=False,
    help="Also the directories below DIR (not those named .* nor links).",
)
@click.option(
    "--list/--no-list",
    "list_files",
    default=True,
    help="List the files that change (the default; --diff shows the changes instead).",
)
@click.option(
    "--write/--no-write",
    default=True,
    help="Write the changes into the files (the default; never with --check).",
)
def fmt(
    target: Path, check: bool, diff: bool, recursive: bool, list_files: bool, write: bool
) -> int:
    """Rewrite the configuration's YAML files in one canonical layout, comments kept.

    Lists the files it changed (with --check: would change; with --diff: shows the
    changes instead). `-` reads standard input and writes it laid out to standard output.
    Exit 0, 3 with --check when a file would change, 1 when a file cannot be read, parsed
    or written (that file is left alone) or a FILE given is not named *.yaml or *.yml.
    Terraform's spellings work too: -check, -diff, -recursive, -list=false, -write=false.
    """

    from reconciler.loading.sources import SUFFIXES, read_single_file
    from reconciler.usecases.formatting import configuration_listing, within
    from schemas.text import printable

    if str(target) == "-":
        return _fmt_standard_input(check, diff, recursive)
    # A link that dangles or loops is read as a file, which names what is wrong with it.
    broken_link = target.is_symlink() and not target.exists()
    named_file = not target.is_dir() and target.exists()
    if named_file and not target.name.endswith(SUFFIXES):
        # Any text reads as YAML (a Dockerfile is one plain scalar): laid out, it is ruined.
        raise PoolformError(
            f"{printable(str(target))} is not a *.yaml or *.yml file; fmt left it alone",
            hint="give a configuration directory or one of its YAML files",
        )
    if named_file and recursive:
        raise PoolformError(
            f"--recursive takes a directory; {printable(str(target))} is a file",
            hint="give the directory to format with the ones below it",
        )
    if named_file or broken_link:
        root = target.parent
        listing = read_single_file(target)
    else:
        root = target
        listing = configuration_listing(target, recursive)
    return _fmt_files(within(listing, root), root, check, diff, list_files, write and not check)


def _fmt_standard_input(check: bool, diff: bool, recursive: bool) -> int:
    """`fmt -`, as an editor calls `terraform fmt -`: the text laid out (or as it was) on
    standard output; with --check only the exit code, with --diff the change."""
    from reconciler.loading.sources import MAX_FILE_BYTES
    from reconciler.usecases.formatting import format_sources, standard_input_source

    if recursive:
        raise PoolformError("--recursive takes a directory, not standard input (`-`)")
    # One byte past the limit is enough to refuse it (`fmt - < /dev/zero` ends).
    source = standard_input_source(standard_input_bytes(MAX_FILE_BYTES + 1))
    if isinstance(source, Diagnostic):
        click.echo(source.render(), err=True)
        return 1
    result = format_sources([source])
    for diagnostic in result.problems:
        click.echo(diagnostic.render(), err=True)
    if result.problems:
        return 1
    change = result.changes[0] if result.changes else None
    if diff:
        if change is not None:
            click.echo(change.diff(), nl=False)
    elif not check:
        click.echo(change.after if change else source.raw.decode("utf-8"), nl=False)
    return EXIT_WOULD_CHANGE if check and change else 0


def _fmt_files(
    listing: Listing, root: Path, check: bool, diff: bool, list_files: bool, write: bool
) -> int:
    from reconciler.usecases.formatting import format_sources

    result = format_sources(listing.sources)
    problems = [*listing.problems, *result.problems]
    changed = []
    for change in result.changes:
        if write and change.path is not None:
            problem = _rewrite(
                change.path, change.after, change.before.encode("utf-8"), change.display, root
            )
            if problem is not None:
                problems.append(problem)
                continue
        changed.append(change)
    for change in changed:
        if diff:
            click.echo(change.diff(), nl=False)
        elif list_files:
            click.echo(change.display)
    for diagnostic in sorted(problems, key=Diagnostic.sort_key):
        click.echo(diagnostic.render(), err=True)
    if any(problem.severity == "error" for problem in problems):
        return 1
    return EXIT_WOULD_CHANGE if check and changed else 0


def _rewrite(path: Path, text: str, before: bytes, display: str, root: Path) -> Diagnostic | None:
    """Write one laid-out file in place; why not, if it could not be."""
    from reconciler.cli.fmt_writing import (
        BackupKept,
        ChangedMeanwhile,
        ReadOnlyFile,
        rewrite_in_place,
    )
    from schemas.text import printable

    try:
        rewrite_in_place(path, text, before, within=root)
        return None
    except ChangedMeanwhile:
        message = "changed while fmt ran; left as it is now (run fmt again)"
    except ReadOnlyFile as read_only:
        message = (
            f"is read-only (mode {read_only.mode:04o}); left unchanged, as terraform fmt and "
            "gofmt leave it (make it writable to lay it out)"
        )
    except BackupKept as kept:
        saved = f"is in {printable(kept.backup)}" if kept.backup else "could not be saved"
        message = (
            f"cannot be rewritten ({printable(kept.strerror or str(kept))}) and may be "
            f"damaged: its old text {saved}"
        )
    except OSError as exc:
        message = f"cannot be rewritten ({printable(exc.strerror or str(exc))})"
    return Diagnostic("error", "fmt", message, Location(display))


@click.command()
@click.option(
    "--out",
    "out",
    metavar="DIR",
    type=click.Path(path_type=Path),
    help="Write <Kind>.json files here.",
)
def schema(out: Path | None) -> None:
    """The JSON Schema of every kind, generated from the models."""
    from schemas.kinds import KINDS, json_schema

    if out is None:
        click.echo(
            json.dumps({kind: json_schema(kind) for kind in KINDS}, indent=2, sort_keys=True)
        )
        return
    if out.exists() and not out.is_dir():
        raise PoolformError(f"--out {printable(str(out))} is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        for kind in KINDS:
            (out / f"{kind}.json").write_text(
                json.dumps(json_schema(kind), indent=2, sort_keys=True) + "\n"
            )
    except OSError as error:  # a read-only or full disk, a path through a file
        raise PoolformError(
            f"cannot write the schemas to {printable(str(out))}: "
            f"{error.strerror or error} ({printable(str(error.filename or out))})"
        ) from None
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
