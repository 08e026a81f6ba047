"""Providers realise managed resources in a cloud. Cloud SDKs are imported only in their own
subpackage, and only when that provider is chosen (registry.py).

Shared by every provider: protocol.py (the Provider protocol and its errors), retry.py (the one
retry policy and the Clock), settings.py, shapes.py, observable.py, catalog.py. local/, aws/ and
gcp/ do not import each other (one exception, moving into the state backend: aws/ and gcp/ keep
control-plane objects through local/'s store)."""
