"""Providers realise managed resources in a cloud. Cloud SDKs are imported only in their own
subpackage, and only when that provider is chosen."""
