"""Effective `advanced_instance_config` of worker groups (Anyscale's machine pool merge rules).

A workload's config comes from the compute config's cluster-level `advanced_instance_config`
with the worker group's merged over it; when the group draws from a machine pool, that workload
config is then merged over the machine type's launch template defaults.

A merge adds or modifies, never removes. A fixed set of fields deep-merge by identity key:

* AWS (and the local provider, which mimics AWS shapes): `TagSpecifications` by `ResourceType`
  (their `Tags` by `Key`), `NetworkInterfaces` by (`DeviceIndex`, `NetworkCardIndex`, missing
  counts as 0), `BlockDeviceMappings` by `DeviceName`.
* GCP, under `instance_properties` / `instanceProperties`: `labels` by key,
  `network_interfaces` / `networkInterfaces` by array index, `disks` by `device_name` /
  `deviceName`, with the boot disk (`boot: true`) kept at index 0. An override boot disk without
  a device name modifies the base's boot disk.

Matched entries merge field by field (nested maps recursively, anything else replaced); every
other field is replaced wholesale by the override, nested maps included. Entries without an
identity key never match and are appended. A field the base lacks merges as if empty (so an
override's boot disk still goes first). Inputs are never mutated and the result shares no
mutable values with them; order is base entries in base order, then new ones in override order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Literal, TypeGuard

from schemas.compute_config import ComputeConfig, WorkerGroup
from schemas.machine_pool import MachinePool

Provider = Literal["aws", "gcp", "local"]

_KeyFn = Callable[[Any], Hashable | None]
_EntryMerge = Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, Any]]

_INSTANCE_PROPERTIES = ("instance_properties", "instanceProperties")
_NETWORK_INTERFACES = ("network_interfaces", "networkInterfaces")
_DEVICE_NAME = ("device_name", "deviceName")


# --- generic helpers -------------------------------------------------------------------------


def _deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Field-by-field merge of two matched entries: maps recurse, anything else is replaced."""
    result = copy.deepcopy(dict(base))
    for key, value in override.items():
        old = result.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            result[key] = _deep_merge(old, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _field(key: str) -> _KeyFn:
    def key_of(entry: Any) -> Hashable | None:
        value = entry.get(key) if isinstance(entry, Mapping) else None
        return value if isinstance(value, Hashable) else None

    return key_of


def _merge_keyed(
    base: Sequence[Any],
    override: Sequence[Any],
    key_of: _KeyFn,
    merge_entry: _EntryMerge = _deep_merge,
) -> list[Any]:
    """Merge two lists of entries by identity key. An override entry merges into the first base
    entry with its key (successive override entries with one key merge in turn); unmatched and
    keyless entries are appended in override order."""
    result = [copy.deepcopy(entry) for entry in base]
    position: dict[Hashable, int] = {}
    for index, entry in enumerate(result):
        key = key_of(entry)
        if key is not None:
            position.setdefault(key, index)
    for entry in override:
        key = key_of(entry)
        if key is not None and key in position:
            index = position[key]
            result[index] = merge_entry(result[index], entry)
        else:
            if key is not None:
                position[key] = len(result)
            result.append(copy.deepcopy(entry))
    return result


def _merge_indexed(base: Sequence[Any], override: Sequence[Any]) -> list[Any]:
    """Merge two lists position by position; extra override entries are appended."""
    result = [copy.deepcopy(entry) for entry in base]
    for index, entry in enumerate(override):
        if (
            index < len(result)
            and isinstance(result[index], Mapping)
            and isinstance(entry, Mapping)
        ):
            result[index] = _deep_merge(result[index], entry)
        elif index < len(result):
            result[index] = copy.deepcopy(entry)
        else:
            result.append(copy.deepcopy(entry))
    return result


def _spelling(config: Mapping[str, Any], aliases: tuple[str, ...]) -> str | None:
    """The one spelling of a field `config` uses, if any; both spellings at once is an error."""
    present = [alias for alias in aliases if alias in config]
    if len(present) > 1:
        raise ValueError(f"both {present[0]!r} and {present[1]!r} given; use one spelling")
    return present[0] if present else None


def _is_list(value: Any) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, list | tuple)


# --- AWS -------------------------------------------------------------------------------------


def _network_interface_key(entry: Any) -> Hashable | None:
    if not isinstance(entry, Mapping) or entry.get("DeviceIndex") is None:
        return None
    key = (entry["DeviceIndex"], entry.get("NetworkCardIndex", 0))
    return key if isinstance(key, Hashable) else None


def _merge_tag_spec(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    result = _deep_merge(base, {k: v for k, v in override.items() if k != "Tags"})
    if "Tags" in override:
        old, new = base.get("Tags", []), override["Tags"]
        merged = _merge_keyed(old, new, _field("Key")) if _is_list(old) and _is_list(new) else new
        result["Tags"] = copy.deepcopy(merged)
    return result


def _merge_aws(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(base))
    for key, new in override.items():
        old = base.get(key, [])  # a missing keyed list merges like an empty one
        if key == "TagSpecifications" and _is_list(old) and _is_list(new):
            result[key] = _merge_keyed(old, new, _field("ResourceType"), _merge_tag_spec)
        elif key == "NetworkInterfaces" and _is_list(old) and _is_list(new):
            result[key] = _merge_keyed(old, new, _network_interface_key)
        elif key == "BlockDeviceMappings" and _is_list(old) and _is_list(new):
            result[key] = _merge_keyed(old, new, _field("DeviceName"))
        else:
            result[key] = copy.deepcopy(new)
    return result


# --- GCP -------------------------------------------------------------------------------------


def _device_name(disk: Any) -> Hashable | None:
    if not isinstance(disk, Mapping):
        return None
    spelling = _spelling(disk, _DEVICE_NAME)
    value = disk.get(spelling) if spelling else None
    return value if isinstance(value, Hashable) else None


def _is_boot(disk: Any) -> bool:
    return isinstance(disk, Mapping) and disk.get("boot") is True


def _merge_disks(base: Sequence[Any], override: Sequence[Any]) -> list[Any]:
    base_boot = next((disk for disk in base if _is_boot(disk)), None)
    boot_name = _device_name(base_boot)

    def key_of(disk: Any) -> Hashable | None:
        name = _device_name(disk)
        if name is None and _is_boot(disk):
            # A boot disk without a device name is "the boot disk". Device names are strings,
            # so the tuple never collides with one.
            return boot_name if boot_name is not None else ("boot",)
        return name

    def merge_disk(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
        # Keep the base's spelling of the device name rather than ending up with both.
        spelling, new_spelling = _spelling(old, _DEVICE_NAME), _spelling(new, _DEVICE_NAME)
        if spelling and new_spelling and spelling != new_spelling:
            new = {spelling if k == new_spelling else k: v for k, v in new.items()}
        return _deep_merge(old, new)

    merged = _merge_keyed(base, override, key_of, merge_disk)
    boot = next((i for i, disk in enumerate(merged) if _is_boot(disk)), None)
    if boot:
        merged.insert(0, merged.pop(boot))
    return merged


def _merge_instance_properties(
    base: Mapping[str, Any], override: Mapping[str, Any]
) -> dict[str, Any]:
    result = copy.deepcopy(dict(base))
    base_nics = _spelling(base, _NETWORK_INTERFACES)
    for key, new in override.items():
        if key in _NETWORK_INTERFACES:
            target = base_nics or key
            old = base.get(target, [])
            result[target] = (
                _merge_indexed(old, new) if _is_list(old) and _is_list(new) else copy.deepcopy(new)
            )
            continue
        old = base.get(key, {} if key == "labels" else [])  # missing merges like empty
        if key == "labels" and isinstance(old, Mapping) and isinstance(new, Mapping):
            result[key] = {**copy.deepcopy(dict(old)), **copy.deepcopy(dict(new))}
        elif key == "disks" and _is_list(old) and _is_list(new):
            result[key] = _merge_disks(old, new)
        else:
            result[key] = copy.deepcopy(new)
    return result


def _merge_gcp(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(base))
    base_props = _spelling(base, _INSTANCE_PROPERTIES)
    _spelling(override, _INSTANCE_PROPERTIES)
    for key, new in override.items():
        if key not in _INSTANCE_PROPERTIES:
            result[key] = copy.deepcopy(new)
            continue
        target = base_props or key
        old = base.get(target, {})
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            _spelling(new, _NETWORK_INTERFACES)  # reject both spellings in the override too
            result[target] = _merge_instance_properties(old, new)
        else:
            result[target] = copy.deepcopy(new)
    return result


# --- public API ------------------------------------------------------------------------------


def merge_advanced_config(
    base: Mapping[str, Any], override: Mapping[str, Any], provider: Provider
) -> dict[str, Any]:
    """`override` merged over `base` by the provider's rules (see the module docstring).

    Raises ValueError when a GCP mapping spells one field both ways (e.g. `instance_properties`
    and `instanceProperties`); the result uses the base's spelling, else the override's.
    """
    if provider == "gcp":
        return _merge_gcp(base, override)
    return _merge_aws(base, override)


def effective_worker_config(
    compute_config: ComputeConfig,
    group: WorkerGroup,
    pool_template_config: Mapping[str, Any] | None,
    provider: Provider,
) -> dict[str, Any]:
    """merge(template, merge(cluster level, worker group)): the group beats the cluster level,
    which beats the machine pool's launch template defaults."""
    workload = merge_advanced_config(
        compute_config.advanced_instance_config, group.advanced_instance_config, provider
    )
    return merge_advanced_config(pool_template_config or {}, workload, provider)


def effective_compute_config(
    compute_config: ComputeConfig, machine_pools: Mapping[str, MachinePool], provider: Provider
) -> dict[str, dict[str, Any]]:
    """The effective launch parameters of every worker group, by group name.

    A group drawing from a machine pool names one of its machine types as `instance_type`; its
    instance and market type come from that machine type's launch template, and its config is
    merged over the template's with the pool's provider (else `provider`). Raises KeyError for an
    unknown pool or machine type, ValueError for two groups with one name.
    """
    result: dict[str, dict[str, Any]] = {}
    for group in compute_config.worker_nodes:
        if group.group_name in result:
            raise ValueError(f"two worker groups are named {group.group_name!r}")
        pool_name = group.machine_pool
        if pool_name is None:
            instance_type, market_type = group.instance_type, group.market_type
            machine_type: str | None = None
            template_config: Mapping[str, Any] | None = None
            group_provider = provider
        else:
            pool = machine_pools[pool_name]
            found = pool.machine_type(group.instance_type)
            if found is None:
                raise KeyError(
                    f"machine pool {pool_name!r} has no machine type {group.instance_type!r}"
                )
            template = found.template
            instance_type, market_type = template.instance_type, template.market_type
            machine_type, template_config = found.machine_type, template.advanced_instance_config
            group_provider = pool.provider or provider
        result[group.group_name] = {
            "instance_type": instance_type,
            "market_type": market_type,
            "machine_pool": pool_name,
            "machine_type": machine_type,
            "min_nodes": group.min_nodes,
            "max_nodes": group.max_nodes,
            "advanced_instance_config": effective_worker_config(
                compute_config, group, template_config, group_provider
            ),
        }
    return result
