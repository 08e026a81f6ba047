"""From YAML files to validated documents, keeping where each value came from.

This layer reads the files of a configuration directory (or one file given on its own) and
validates each document against its model; the rules between documents live one layer up, in
`reconciler.checks`, whose `load_configuration` and `load_file` run both.
"""

from reconciler.loading.configuration import (
    Configuration,
    Finding,
    LoadedDocument,
    Reading,
    read_directory,
    read_file,
    resolve,
)
from reconciler.loading.sources import NotAConfigurationDirectory, NothingDeclared

__all__ = [
    "Configuration",
    "Finding",
    "LoadedDocument",
    "NotAConfigurationDirectory",
    "NothingDeclared",
    "Reading",
    "read_directory",
    "read_file",
    "resolve",
]
