"""preflight's isolation checks of an existing cluster (issue 55): does anything enforce the teams' NetworkPolicies,
and do the VPC's endpoints admit only the spec's accounts?

hyperpod-gov emits default-deny NetworkPolicies and, on a VPC it creates, endpoints with data-perimeter policies
(``plan/endpoint_policies.py``). On a cluster it did not create it configures neither the vpc-cni add-on nor the
endpoints, so preflight reads them (EKS ``DescribeAddon``, EC2 ``DescribeVpcEndpoints``) and says what to fix.
The checks return ``(status, detail, fix)``; ``preflight.py`` makes its ``Check`` of each.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Literal, Optional

import yaml

from ..plan.endpoint_policies import Perimeter, endpoint_policy
from ..plan.plan import INTERFACE_ENDPOINTS
from ..plan.tables_addon import ADDON_CONFIGURATION
from .aws import Caller

VPC_CNI = "vpc-cni"
# What the teams' isolation needs of the add-on: the configuration hyperpod-gov gives the vpc-cni it creates.
WANTED = ADDON_CONFIGURATION[VPC_CNI]
STRICT_MODE = WANTED["env"]["NETWORK_POLICY_ENFORCING_MODE"]
# Strict mode came with the VPC CNI's network policy agent in v1.17.1 (its release notes); network policies with
# v1.14 (EKS user guide, "Restrict Pod network traffic with Kubernetes network policies").
MIN_STRICT_VERSION = (1, 17, 1)
# Each interface endpoint a private cluster needs (plan.INTERFACE_ENDPOINTS), by the service name's last part
# (com.amazonaws.REGION.<part>); S3 counts as a gateway endpoint too.
SERVICE_PARTS: dict[str, str] = {
    "EcrApi": "ecr.api", "EcrDkr": "ecr.dkr", "Ec2": "ec2", "Sts": "sts", "Eks": "eks", "EksAuth": "eks-auth",
    "Logs": "logs", "Monitoring": "monitoring", "SageMakerApi": "sagemaker.api", "Ssm": "ssm", "S3Interface": "s3",
    # Created only where a workload identity names KMS keys or secrets (plan.derive_cluster.data_endpoints): a
    # private cluster does not need them, so preflight does not require them.
    "Kms": "kms", "SecretsManager": "secretsmanager",
}
GONE = {"deleting", "deleted", "failed", "rejected", "expired"}
# (status, detail, fix), as preflight's Check takes them
Result = tuple[Literal["pass", "fix", "skipped"], str, str]


def _version(text: str) -> tuple[int, ...]:
    m = re.match(r"v?(\d+)\.(\d+)\.(\d+)", text or "")
    return tuple(int(x) for x in m.groups()) if m else ()


def _configuration(text: Optional[str]) -> dict[str, Any]:
    """The add-on's configurationValues (JSON or YAML; empty: the add-on's defaults)."""
    if not text:
        return {}
    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return values if isinstance(values, dict) else {}


def network_policy(ek: Caller, eks_name: str, addons: Iterable[str], enforcement: Any) -> Result:
    """Whether the vpc-cni add-on enforces NetworkPolicies in strict mode (``enforcement``: the spec's
    ``existing.networkPolicyEnforcement``, None when the spec does not say)."""
    if enforcement is not None and enforcement.enforcer == "other":
        return ("skipped", f"the spec says another network plugin enforces the NetworkPolicies ({enforcement.reason});"
                " preflight cannot check it", "")
    unstated = ("; the spec does not say so yet: set cluster.existing.networkPolicyEnforcement: {enforcer: vpc-cni} "
                "(HPG-E006)") if enforcement is None else ""
    other = "or, if another network plugin enforces them, networkPolicyEnforcement: {enforcer: other, reason: ...}"
    if VPC_CNI not in set(addons):
        return ("fix", f"{VPC_CNI} is not an EKS add-on of {eks_name} (self-managed, or another CNI): nothing says "
                "the teams' NetworkPolicies are enforced", f"install the {VPC_CNI} add-on with configurationValues "
                f"{json.dumps(WANTED, sort_keys=True)}, {other}")
    values, env, version = _settings(ek.call("describe_addon", clusterName=eks_name, addonName=VPC_CNI).get("addon")
                                     or {})
    problems = _problems(values, env, version)
    if not problems:
        return "pass", f"{VPC_CNI} {version}: enableNetworkPolicy, {STRICT_MODE} mode{unstated}", ""
    merged = {**values, "enableNetworkPolicy": WANTED["enableNetworkPolicy"], "env": {**env, **WANTED["env"]}}
    upgrade = "upgrade the add-on, then " if version and _version(version) < MIN_STRICT_VERSION else ""
    return ("fix", f"{VPC_CNI} {version or '(version unknown)'}: " + "; ".join(problems),
            f"{upgrade}aws eks update-addon --cluster-name {eks_name} --addon-name {VPC_CNI} --configuration-values "
            f"'{json.dumps(merged, sort_keys=True, separators=(',', ':'))}' (keeps the add-on's other values), {other}")


def _settings(addon: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The vpc-cni add-on's (DescribeAddon.addon) configuration values, their ``env`` and its version."""
    values = _configuration(addon.get("configurationValues"))
    env = values.get("env") if isinstance(values.get("env"), dict) else {}
    return values, env, str(addon.get("addonVersion", ""))


def _problems(values: dict[str, Any], env: dict[str, Any], version: str) -> list[str]:
    """Why the vpc-cni add-on with these settings (``_settings``) does not enforce NetworkPolicies in strict mode
    (empty: it does)."""
    problems = []
    if str(values.get("enableNetworkPolicy", "")).lower() != "true":
        problems.append("enableNetworkPolicy is not \"true\" (off by default): the NetworkPolicies are stored, not "
                        "enforced, and every pod reaches every other")
    if env.get("NETWORK_POLICY_ENFORCING_MODE") != STRICT_MODE:
        problems.append(f"env.NETWORK_POLICY_ENFORCING_MODE is {env.get('NETWORK_POLICY_ENFORCING_MODE', 'standard')}"
                        f", not {STRICT_MODE}: a new pod is reachable until its policies apply")
    if version and _version(version) < MIN_STRICT_VERSION:
        problems.append(f"version {version} is older than v{'.'.join(map(str, MIN_STRICT_VERSION))} (strict mode)")
    return problems


def vpc_cni_enforces(ek: Caller, eks_name: str, addons: Iterable[str]) -> bool:
    """True when the cluster's vpc-cni add-on enforces NetworkPolicies in strict mode (what import writes)."""
    if VPC_CNI not in set(addons):
        return False
    return not _problems(*_settings(ek.call("describe_addon", clusterName=eks_name, addonName=VPC_CNI).get("addon")
                                    or {}))


def open_policy(document: Optional[str]) -> bool:
    """True for an endpoint policy that admits anyone to anything: none (the default), or an unconditional Allow of
    every action on every resource to every principal without a Deny beside it."""
    if not document:
        return True
    try:
        policy = json.loads(document)
    except ValueError:
        return False  # not ours to judge: the endpoint has a policy EC2 accepted
    statements = policy.get("Statement", []) if isinstance(policy, dict) else []
    statements = [statements] if isinstance(statements, dict) else statements

    def anything(value: Any, wildcards: tuple[str, ...]) -> bool:
        values = value if isinstance(value, list) else [value]
        return any(v in wildcards for v in values)

    def anyone(principal: Any) -> bool:
        if isinstance(principal, dict):
            return anything(principal.get("AWS"), ("*",))
        return anything(principal, ("*",))

    if any(s.get("Effect") == "Deny" for s in statements if isinstance(s, dict)):
        return False
    return any(isinstance(s, dict) and s.get("Effect") == "Allow" and not s.get("Condition")
               and anyone(s.get("Principal")) and anything(s.get("Action"), ("*",))
               and anything(s.get("Resource"), ("*",)) for s in statements)


def endpoints(ec2: Caller, vpc_id: str, region: str) -> tuple[dict[str, Optional[dict[str, Any]]], list[str]]:
    """Each needed endpoint's plan name -> the VPC's endpoint of that service (None: missing), and the ids of the
    VPC's endpoints whose policy admits anyone to anything."""
    live = [e for e in ec2.pages("describe_vpc_endpoints", "VpcEndpoints",
                                 Filters=[{"Name": "vpc-id", "Values": [vpc_id]}])
            if str(e.get("State", "")).lower() not in GONE]
    found: dict[str, Optional[dict[str, Any]]] = {}
    for name in INTERFACE_ENDPOINTS:
        tail = f".{region}.{SERVICE_PARTS[name]}"
        found[name] = next((e for e in live if str(e.get("ServiceName", "")).endswith(tail)), None)
    opened = sorted(e.get("VpcEndpointId", "") for e in live if open_policy(e.get("PolicyDocument")))
    return found, opened


def endpoint_check(ec2: Caller, vpc_id: str, region: str) -> Result:
    """Every endpoint a private cluster needs is in the VPC, and no endpoint of the VPC admits anyone to anything."""
    found, opened = endpoints(ec2, vpc_id, region)
    missing = [n for n, e in found.items() if e is None]
    wide = {(e or {}).get("VpcEndpointId"): n for n, e in found.items() if e and e.get("VpcEndpointId") in opened}
    problems = []
    if missing:
        problems.append(f"no endpoint for {', '.join(SERVICE_PARTS[n] for n in missing)} (that traffic leaves the "
                        "VPC, where no endpoint policy applies)")
    if opened:
        named = [f"{i} ({SERVICE_PARTS[wide[i]]})" if i in wide else i for i in opened]
        problems.append(f"full access (no policy, or Allow * on * to *): {', '.join(named)}")
    if not problems:
        return "pass", f"{len(found)} endpoint(s) in {vpc_id}, none with a full-access policy", ""
    fix = ("give each endpoint a policy that admits only the spec's accounts: `hyperpod-gov preflight SPEC "
           "--endpoint-policies DIR` writes the ones hyperpod-gov gives its own endpoints, then `aws ec2 "
           "modify-vpc-endpoint --vpc-endpoint-id ID --policy-document file://DIR/NAME.json`")
    if missing:
        fix += f"; create the missing interface endpoints in {vpc_id}'s private subnets (private DNS on), each with " \
               "its policy"
    return "fix", f"VPC endpoints of {vpc_id}: " + "; ".join(problems), fix


def policy_documents(perimeter: Perimeter) -> dict[str, str]:
    """``NAME.json`` -> the policy document hyperpod-gov gives its own endpoint of that plan name, for every
    endpoint a private cluster needs and for the KMS and Secrets Manager endpoints a team's data calls may use
    (``S3Interface.json`` serves an S3 gateway endpoint too)."""
    return {f"{name}.json": json.dumps(endpoint_policy(perimeter, name), indent=2, sort_keys=True) + "\n"
            for name in SERVICE_PARTS}
