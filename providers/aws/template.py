"""Launch template data: what poolform writes into an EC2 launch template, and reading it back.

A machine type's template is its declared `advanced_instance_config` passed through as
LaunchTemplateData (CapacityReservationSpecification, NetworkInterfaces, BlockDeviceMappings,
...), with poolform's own keys set over it:

    InstanceType           instance_type
    InstanceMarketOptions  MarketType "spot" for market_type SPOT (declared SpotOptions kept; a
                           declared non-spot market such as capacity-block is kept as is)
    UserData               base64 of user_data
    ImageId                declared, else the provider setting image_id
    TagSpecifications      poolform's tags merged into the instance and volume entries

Reading back inverts this: instance_type, market_type and user_data come out of their keys, and
advanced_instance_config is the data without what poolform added, so drift compares it with the
declaration. An AMI poolform took from settings rather than the declaration is recorded in the
version's VersionDescription, versioned with the data, so a read can tell that default from a
declared ImageId without any extra call.

A worker pool's template has no advanced config; its UserData is a script exporting `envs`
and running `setup`, which reading back parses.
"""

from __future__ import annotations

import base64
import copy
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from providers.protocol import ErrorKind, ProviderError
from providers.shapes import Shape

from .errors import Launch

TAG_PREFIX = "poolform:"
TAGGED_RESOURCES = ("instance", "volume")
_DESCRIPTION = "poolform "
_SETUP_MARKER = "# poolform:setup"


@dataclass(frozen=True)
class Defaults:
    """What poolform filled in for a template version (kept in its VersionDescription)."""

    image_id: str | None = None  # the AMI came from settings, not the declaration

    def describe(self) -> str:
        return _DESCRIPTION + json.dumps({"image": self.image_id}, separators=(",", ":"))

    @classmethod
    def parse(cls, description: str | None) -> Defaults | None:
        """None for a version poolform did not write (made by hand, say)."""
        if not description or not description.startswith(_DESCRIPTION):
            return None
        try:
            return cls(json.loads(description[len(_DESCRIPTION) :]).get("image"))
        except (ValueError, AttributeError):
            return None


@dataclass(frozen=True)
class TemplateRequest:
    data: dict[str, Any]
    launch: Launch
    defaulted_image: str | None = None  # ImageId came from settings
    zones: list[str] = field(default_factory=list)  # declared; [] lets the provider choose


def _bad(address: str, message: str) -> ProviderError:
    return ProviderError(ErrorKind.PERMANENT, message, address=address)


def _merge_tags(declared: Any, tags: Mapping[str, str]) -> list[dict[str, Any]]:
    """Declared TagSpecifications with poolform's tags added to the instance and volume ones."""
    specs = [copy.deepcopy(s) for s in declared or []]
    for resource in TAGGED_RESOURCES:
        entry = next((s for s in specs if s.get("ResourceType") == resource), None)
        if entry is None:
            entry = {"ResourceType": resource, "Tags": []}
            specs.append(entry)
        kept = [t for t in entry.get("Tags") or [] if t.get("Key") not in tags]
        entry["Tags"] = kept + [{"Key": k, "Value": v} for k, v in tags.items()]
    return specs


def _strip_tags(specs: Any) -> list[dict[str, Any]]:
    """TagSpecifications without poolform's tags, and without entries left with none."""
    result = []
    for spec in specs or []:
        kept = [t for t in spec.get("Tags") or [] if not str(t.get("Key")).startswith(TAG_PREFIX)]
        if kept:
            result.append({**spec, "Tags": kept})
    return result


def _encode(text: str | None) -> str | None:
    return None if text is None else base64.b64encode(text.encode()).decode()


def _decode(data: Mapping[str, Any]) -> str | None:
    encoded = data.get("UserData")
    if not encoded:
        return None
    return base64.b64decode(encoded).decode(errors="replace")


def machine_template(
    address: str, shape: Shape, image_id: str | None, tags: Mapping[str, str]
) -> TemplateRequest:
    config = shape.template_config or {}
    declared = dict(config.get("advanced_instance_config") or {})
    data = copy.deepcopy(declared)
    data["InstanceType"] = shape.instance_type
    options = dict(data.get("InstanceMarketOptions") or {})
    if shape.market == "SPOT":
        data["InstanceMarketOptions"] = {**options, "MarketType": "spot"}
    elif options.get("MarketType") == "spot":
        raise _bad(
            address,
            "advanced_instance_config.InstanceMarketOptions asks for spot but market_type is "
            "ON_DEMAND; set market_type: SPOT instead",
        )
    user_data = config.get("user_data")
    if user_data is not None:
        data["UserData"] = _encode(str(user_data))
    defaulted_image = None
    if not data.get("ImageId"):
        if image_id is None:
            raise _bad(
                address,
                "no AMI for the launch template: set provider_settings.image_id on the Cluster "
                "or ImageId in advanced_instance_config",
            )
        data["ImageId"] = defaulted_image = image_id
    data["TagSpecifications"] = _merge_tags(declared.get("TagSpecifications"), tags)
    zones = [str(z) for z in config.get("zones") or []]
    return TemplateRequest(data, Launch(shape.instance_type, shape.market), defaulted_image, zones)


def worker_script(envs: Mapping[str, str], setup: str | None) -> str:
    lines = ["#!/bin/bash", "# poolform worker pool: envs, then setup"]
    lines += [f"export {name}={shlex.quote(value)}" for name, value in sorted(envs.items())]
    if setup is not None:
        lines += [_SETUP_MARKER, setup]
    return "\n".join(lines) + "\n"


def parse_worker_script(script: str | None) -> dict[str, Any]:
    """`setup` and `envs` back out of a worker script; nothing for one poolform did not write."""
    if not script or "# poolform worker pool" not in script:
        return {}
    head, marker, setup = script.partition(_SETUP_MARKER + "\n")
    envs: dict[str, str] = {}
    for line in head.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export ") :].partition("=")
            envs[name] = shlex.split(value)[0] if value else ""
    return {
        "setup": setup[:-1] if marker and setup.endswith("\n") else (setup or None),
        "envs": envs,
    }


def worker_template(
    address: str, shape: Shape, image_id: str | None, tags: Mapping[str, str]
) -> TemplateRequest:
    config = shape.group_config
    resources = config.get("resources") or {}
    if config.get("file_mounts") or config.get("workdir"):
        raise _bad(
            address,
            "the AWS provider cannot copy local files to instances: remove `file_mounts` and "
            "`workdir` (bake them into the AMI or fetch them in `setup`)",
        )
    if config.get("secret_names"):
        raise _bad(
            address,
            "the AWS provider refuses worker pools with `secrets`: user data is readable by "
            "anyone who can describe the launch template; fetch them in `setup` from a secret "
            "store (Secrets Manager, SSM Parameter Store) instead",
        )
    data: dict[str, Any] = {"InstanceType": shape.instance_type}
    if shape.market == "SPOT":
        data["InstanceMarketOptions"] = {"MarketType": "spot"}
    data["UserData"] = _encode(worker_script(config.get("envs") or {}, shape.setup))
    declared_image = resources.get("image_id")
    if not declared_image and image_id is None:
        raise _bad(
            address,
            "no AMI for the worker pool: set resources.image_id, or provider_settings.image_id "
            "on the Cluster",
        )
    data["ImageId"] = declared_image or image_id
    data["TagSpecifications"] = _merge_tags(None, tags)
    zone = resources.get("zone")
    return TemplateRequest(
        data,
        Launch(shape.instance_type, shape.market),
        None if declared_image else image_id,
        [str(zone)] if zone else [],
    )


def template_view(
    resource_type: str, data: Mapping[str, Any], defaults: Defaults | None
) -> dict[str, Any]:
    """The vocabulary of providers/observable.py, from one template version's data."""
    options = dict(data.get("InstanceMarketOptions") or {})
    spot = options.get("MarketType") == "spot"
    view: dict[str, Any] = {
        "instance_type": data.get("InstanceType"),
        "market_type": "SPOT" if spot else "ON_DEMAND",
    }
    if resource_type == "worker_pool":
        view.update(parse_worker_script(_decode(data)))
        view.update(workdir=None, file_mounts={}, secret_names=[])  # never set on AWS
        return view
    advanced = {
        k: copy.deepcopy(v)
        for k, v in data.items()
        if k not in ("InstanceType", "UserData", "InstanceMarketOptions", "TagSpecifications")
    }
    if spot:
        options.pop("MarketType")
    if options:
        advanced["InstanceMarketOptions"] = options
    tag_specs = _strip_tags(data.get("TagSpecifications"))
    if tag_specs:
        advanced["TagSpecifications"] = tag_specs
    if defaults is not None and defaults.image_id and advanced.get("ImageId") == defaults.image_id:
        del advanced["ImageId"]
    view["advanced_instance_config"] = advanced
    view["user_data"] = _decode(data)
    return view
