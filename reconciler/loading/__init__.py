"""From a directory of YAML files to validated documents, keeping where each value came from."""

from reconciler.loading.configuration import Configuration, load_configuration, load_documents

__all__ = ["Configuration", "load_configuration", "load_documents"]
