"""The mutating calls on one launch template + Auto Scaling group pair, idempotent by name.

Names are derived from lineage + address + token (`resource_name`), so a create retried after a
timeout, or resumed after a crash with the same intent token, finds the template and group the
first attempt made: create_launch_template carries the token as its ClientToken, and an
"already exists" answer from either call means "made by an earlier attempt", never an error.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from botocore.exceptions import ClientError

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, TAG_TOKEN

from .errors import Launch, translate
from .rollout import error_code
from .settings import AwsClients
from .template import Defaults, TemplateRequest
from .views import ZONES_BY_SUBNETS, ZONES_TAG, running_count, tags_of

_NAME_CHARS = re.compile(r"[^A-Za-z0-9().\-/_]")  # what launch template names allow
TEMPLATE_EXISTS = "InvalidLaunchTemplateName.AlreadyExistsException"


def resource_name(lineage: str, address: str, token: str) -> str:
    """`poolform-<address>-<digest>`: readable in the console, unique per lineage and token,
    and within the 128 characters a launch template name may have."""
    digest = hashlib.sha256(f"{lineage}\0{address}\0{token}".encode()).hexdigest()[:16]
    return f"poolform-{_NAME_CHARS.sub('-', address)[:96]}-{digest}"


def group_tags(name: str, tags: Mapping[str, str]) -> list[dict[str, Any]]:
    """poolform's identity tags propagate to instances; its bookkeeping tags do not."""
    return [
        {
            "ResourceId": name,
            "ResourceType": "auto-scaling-group",
            "Key": key,
            "Value": value,
            "PropagateAtLaunch": key != ZONES_TAG,
        }
        for key, value in tags.items()
    ]


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


class Groups:
    def __init__(self, clients: AwsClients, subnet_ids: Sequence[str]):
        self.ec2 = clients.ec2
        self.autoscaling = clients.autoscaling
        self.subnet_ids = tuple(subnet_ids)
        self._zones: list[str] | None = None

    def region_zones(self, address: str) -> list[str]:
        """Every available zone of the region (cached): where a group goes when neither zones
        nor subnets are declared."""
        if self._zones is None:
            with translate(address):
                response = self.ec2.describe_availability_zones(
                    Filters=[{"Name": "state", "Values": ["available"]}]
                )
            self._zones = sorted(
                z["ZoneName"]
                for z in response["AvailabilityZones"]
                if z.get("ZoneType", "availability-zone") == "availability-zone"
            )
        return list(self._zones)

    def placement(self, request: TemplateRequest, address: str) -> tuple[list[str], str | None]:
        """The group's AvailabilityZones, and the ZONES_TAG value when poolform chose them."""
        if request.zones:
            return list(request.zones), None
        if self.subnet_ids:
            return [], ZONES_BY_SUBNETS
        zones = self.region_zones(address)
        return zones, ",".join(zones)

    def where(self, zones: Sequence[str]) -> dict[str, Any]:
        where: dict[str, Any] = {}
        if zones:
            where["AvailabilityZones"] = list(zones)
        if self.subnet_ids:
            where["VPCZoneIdentifier"] = ",".join(self.subnet_ids)
        return where

    # -- templates -----------------------------------------------------------------------------

    def create_template(
        self,
        name: str,
        request: TemplateRequest,
        defaults: Defaults,
        tags: Mapping[str, str],
        token: str,
        address: str,
    ) -> tuple[str, int, bool]:
        """(template id, version, made by an earlier attempt)."""
        ask: dict[str, Any] = {
            "LaunchTemplateName": name,
            "VersionDescription": defaults.describe(),
            "LaunchTemplateData": request.data,
            "TagSpecifications": [
                {
                    "ResourceType": "launch-template",
                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                }
            ],
        }
        if token:
            ask["ClientToken"] = token[:64]
        with translate(address, request.launch):
            try:
                made = self.ec2.create_launch_template(**ask)["LaunchTemplate"]
                return str(made["LaunchTemplateId"]), int(made["LatestVersionNumber"]), False
            except ClientError as error:
                if error_code(error) != TEMPLATE_EXISTS:
                    raise
            found = self.ec2.describe_launch_templates(LaunchTemplateNames=[name])
        template = found["LaunchTemplates"][0]
        return str(template["LaunchTemplateId"]), int(template["LatestVersionNumber"]), True

    def new_version(
        self, template_id: str, request: TemplateRequest, defaults: Defaults, address: str
    ) -> int:
        """A new version with the full data (a version made from a source version would carry
        keys the declaration dropped), made the default too, for the console's sake."""
        with translate(address, request.launch):
            made = self.ec2.create_launch_template_version(
                LaunchTemplateId=template_id,
                VersionDescription=defaults.describe(),
                LaunchTemplateData=request.data,
            )["LaunchTemplateVersion"]
            number = int(made["VersionNumber"])
            self.ec2.modify_launch_template(
                LaunchTemplateId=template_id, DefaultVersion=str(number)
            )
        return number

    def delete_template(self, template_id: str, address: str) -> None:
        with translate(address):
            self.ec2.delete_launch_template(LaunchTemplateId=template_id)

    # -- groups --------------------------------------------------------------------------------

    def find(self, name: str, address: str) -> dict[str, Any] | None:
        with translate(address):
            found = self.autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])
        groups = [g for g in found["AutoScalingGroups"] if g.get("Status") != "Delete in progress"]
        return dict(groups[0]) if groups else None

    def create_group(
        self,
        name: str,
        template_id: str,
        bounds: tuple[int, int, int],
        placement: tuple[Sequence[str], str | None],
        tags: Mapping[str, str],
        address: str,
        launch: Launch,
    ) -> None:
        low, high, desired = bounds
        zones, chosen = placement
        if chosen is not None:
            tags = {**tags, ZONES_TAG: chosen}
        with translate(address, launch):
            try:
                self.autoscaling.create_auto_scaling_group(
                    AutoScalingGroupName=name,
                    LaunchTemplate={"LaunchTemplateId": template_id, "Version": "$Latest"},
                    MinSize=low,
                    MaxSize=high,
                    DesiredCapacity=desired,
                    Tags=group_tags(name, tags),
                    **self.where(zones),
                )
            except ClientError as error:
                if error_code(error) != "AlreadyExists":  # an earlier attempt made it
                    raise

    def resize(
        self,
        group: Mapping[str, Any],
        low: int,
        high: int,
        address: str,
        launch: Launch,
        **changes: Any,
    ) -> int:
        """New bounds (and any other changes); returns how many instances this launches.

        DesiredCapacity is sent only when it must move into the new bounds: the scheduler owns
        it inside them, and sending the value just read would race with its next move."""
        current = int(group["DesiredCapacity"])
        desired = clamp(current, low, high)
        ask: dict[str, Any] = {
            "AutoScalingGroupName": group["AutoScalingGroupName"],
            "MinSize": low,
            "MaxSize": high,
            **changes,
        }
        if desired != current:
            ask["DesiredCapacity"] = desired
        with translate(address, launch):
            self.autoscaling.update_auto_scaling_group(**ask)
        return min(desired, running_after(group, desired))

    def retag_zones(self, group: Mapping[str, Any], chosen: str | None, address: str) -> None:
        """Keep ZONES_TAG in step with a replace that changed how the zones are chosen."""
        name = str(group["AutoScalingGroupName"])
        if tags_of(group.get("Tags")).get(ZONES_TAG) == chosen:
            return
        with translate(address):
            if chosen is None:
                tag = {"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": ZONES_TAG}
                self.autoscaling.delete_tags(Tags=[tag])
            else:
                self.autoscaling.create_or_update_tags(Tags=group_tags(name, {ZONES_TAG: chosen}))

    def delete_group(self, name: str, address: str) -> None:
        with translate(address):
            self.autoscaling.delete_auto_scaling_group(AutoScalingGroupName=name, ForceDelete=True)

    def tag(
        self, group: Mapping[str, Any], template_id: str, tags: Mapping[str, str], address: str
    ) -> None:
        """Take a group, its template and its instances under management (`poolform import`)."""
        name = str(group["AutoScalingGroupName"])
        instances = [str(i["InstanceId"]) for i in group.get("Instances") or []]
        ec2_tags = [{"Key": k, "Value": v} for k, v in tags.items()]
        with translate(address):
            self.autoscaling.create_or_update_tags(Tags=group_tags(name, tags))
            resources = [template_id, *instances]
            for start in range(0, len(resources), 1000):  # the API's limit per call
                self.ec2.create_tags(Resources=resources[start : start + 1000], Tags=ec2_tags)


def untag(
    autoscaling: Any,
    ec2: Any,
    group: Mapping[str, Any] | None,
    template_id: str | None,
    address: str,
) -> None:
    """Remove poolform's identity tags from a group, its template and its instances (`state
    rm`); the zones bookkeeping tag stays, so an import reads the zones as poolform chose them."""
    identity = (TAG_LINEAGE, TAG_ADDRESS, TAG_TOKEN)
    resources = [template_id] if template_id else []
    if group is not None:
        name = str(group["AutoScalingGroupName"])
        ours = [k for k in tags_of(group.get("Tags")) if k in identity]
        keys = [{"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": k} for k in ours]
        resources += [str(i["InstanceId"]) for i in group.get("Instances") or []]
        with translate(address):
            if keys:
                autoscaling.delete_tags(Tags=keys)
    tags = [{"Key": key} for key in identity]
    with translate(address):
        for start in range(0, len(resources), 1000):  # the API's limit per call
            ec2.delete_tags(Resources=resources[start : start + 1000], Tags=tags)


def running_after(group: Mapping[str, Any], desired: int) -> int:
    """The in-service count a resize to `desired` waits for: what runs now plus what it adds."""
    current = int(group["DesiredCapacity"])
    return running_count(group) + max(0, desired - current)
