"""Print this instance's Slurm node type, its instance group and the controllers' addresses (comma-separated).

Usage: node_type.py RESOURCE_CONFIG PROVISIONING_PARAMETERS

RESOURCE_CONFIG is HyperPod's /opt/ml/config/resource_config.json (every group's instances and their addresses);
PROVISIONING_PARAMETERS is what hyperpod-gov synth wrote (controller_group, login_group). This instance is the
one whose CustomerIpAddress is the address it sends from (HPG_SELF_IP overrides it, for tests).
"""

import json
import os
import socket
import sys


def own_address() -> str:
    if os.environ.get("HPG_SELF_IP"):
        return os.environ["HPG_SELF_IP"]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("10.254.254.254", 1))  # no packet is sent: this only picks the outgoing interface
        return s.getsockname()[0]


def main(resource_config: str, parameters: str) -> int:
    with open(resource_config) as f:
        groups = json.load(f)["InstanceGroups"]
    with open(parameters) as f:
        params = json.load(f)
    address = own_address()
    controllers = [i["CustomerIpAddress"] for g in groups if g["Name"] == params["controller_group"]
                   for i in g["Instances"]]
    mine = next((g["Name"] for g in groups for i in g["Instances"] if i.get("CustomerIpAddress") == address), None)
    if mine is None:
        print(f"node_type.py: no instance group of {resource_config} has an instance at {address}", file=sys.stderr)
        return 1
    if not controllers:
        print(f"node_type.py: the controller group {params['controller_group']} has no instances", file=sys.stderr)
        return 1
    if mine == params["controller_group"]:
        kind = "Controller"
    elif mine == params.get("login_group"):
        kind = "Login"
    else:
        kind = "Compute"
    print(kind, mine, ",".join(controllers))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
