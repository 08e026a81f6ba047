"""From YAML files to validated documents, keeping where each value came from.

This layer reads and validates each document against its model; the rules between documents
live one layer up, in `reconciler.checks`, whose `load_configuration` runs both.
"""

from reconciler.loading.configuration import Configuration, Finding, load_documents, resolve

__all__ = ["Configuration", "Finding", "load_documents", "resolve"]
