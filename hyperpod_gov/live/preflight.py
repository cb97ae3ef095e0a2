"""``hyperpod-gov preflight SPEC``: the live prerequisites of a first deploy, checked read-only, with what to fix.

For a spec with ``cluster.existing`` (governance-only mode) every check reads the existing clusters; each names
the AWS documentation or API it follows in ``source``. For a cluster hyperpod-gov creates there is nothing live
yet: preflight checks that the names it will create are free (a HyperPod or EKS cluster of that name would make
the deploy fail) and says that the rest is checked by ``validate`` and CloudFormation.

Exit status: 0 every check passed, 1 something to fix, 2 a check could not be made (and nothing to fix found).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional

from ..spec import SpecError, load_spec
from . import autoscaling
from .aws import Caller, ClientFactory, LiveError, NotFound, boto3_clients
from .isolation import endpoint_check, network_policy, policy_documents
from .k8s import KubeApi, KubeUnavailable, connector

EXIT_OK, EXIT_FIX, EXIT_CANNOT_CHECK = 0, 1, 2
MIN_KUBERNETES = (1, 30)
API_AUTH_MODES = ("API", "API_AND_CONFIG_MAP")
TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
KUEUE_NAMESPACE, KUEUE_DEPLOYMENT = "kueue-system", "kueue-controller-manager"

# Where each check comes from (the AWS documentation page or API reference it follows).
SOURCES = {
    "hyperpod-cluster": "SageMaker API DescribeCluster (Orchestrator.Eks); SageMaker developer guide, 'Prerequisites "
                        "for using SageMaker HyperPod task governance' (an EKS-orchestrated HyperPod cluster)",
    "authentication-mode": "EKS API DescribeCluster (accessConfig.authenticationMode); EKS user guide, 'Grant IAM "
                           "users access to Kubernetes with EKS access entries' (access entries need API or "
                           "API_AND_CONFIG_MAP)",
    "kubernetes-version": "EKS API DescribeCluster (version); SageMaker developer guide, task governance "
                          "prerequisites (EKS 1.30 or later)",
    "addons": "EKS API ListAddons; SageMaker developer guide, 'Install the task governance add-on' (uninstall a "
              "self-managed Kueue first)",
    "kueue": "Kubernetes API GET namespaces/kueue-system and deployments/kueue-controller-manager (Kueue's own "
             "install manifests)",
    "endpoint-access": "EKS API DescribeCluster (resourcesVpcConfig.endpointPrivateAccess); EKS user guide, "
                       "'Cluster API server endpoint' (a client in the VPC needs private access)",
    "subnets": "EC2 API DescribeSubnets (VpcId); EKS API DescribeCluster (resourcesVpcConfig.vpcId)",
    "security-group": "EC2 API DescribeSecurityGroups (VpcId)",
    "names-free": "SageMaker API DescribeCluster and EKS API DescribeCluster (ResourceNotFound: the name is free)",
    # Isolation on a cluster hyperpod-gov did not create (issue 55): live/isolation.py
    "network-policy": "EKS API DescribeAddon (vpc-cni configurationValues: enableNetworkPolicy, "
                      "env.NETWORK_POLICY_ENFORCING_MODE); EKS user guide, 'Restrict Pod network traffic with "
                      "Kubernetes network policies' (off by default; strict mode isolates a new pod at once)",
    "vpc-endpoints": "EC2 API DescribeVpcEndpoints (Filters vpc-id; ServiceName, PolicyDocument); AWS PrivateLink "
                     "guide, 'Control access to VPC endpoints using endpoint policies' (the default policy allows "
                     "full access)",
    # HyperPod-managed Karpenter (cluster.autoScaling, issue 57): live/autoscaling.py
    **autoscaling.SOURCES,
}

Status = Literal["pass", "fix", "not checked", "skipped"]


@dataclass(frozen=True)
class Check:
    id: str
    status: Status
    detail: str
    fix: str = ""

    @property
    def source(self) -> str:
        return SOURCES[self.id]

    def to_json(self) -> dict[str, Any]:
        out = {"check": self.id, "status": self.status, "detail": self.detail, "source": self.source}
        if self.fix:
            out["fix"] = self.fix
        return out


def _version(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in str(text).split(".")[:2])
    except ValueError:
        return ()


def _eks_described(ek: Caller, name: str) -> dict[str, Any]:
    return ek.call("describe_cluster", name=name).get("cluster") or {}


def _kueue(kube: Optional[Callable[[], KubeApi]]) -> tuple[Check, Optional[bool]]:
    """The check, and whether a self-managed Kueue runs (None: unknown)."""
    if kube is None:
        return Check("kueue", "skipped", "not asked (--no-kubernetes): whether a self-managed Kueue runs is "
                     "unknown"), None
    try:
        api = kube()
        namespace = api.get_json(f"/api/v1/namespaces/{KUEUE_NAMESPACE}")
        deployment = api.get_json(f"/apis/apps/v1/namespaces/{KUEUE_NAMESPACE}/deployments/{KUEUE_DEPLOYMENT}")
    except KubeUnavailable as exc:
        return Check("kueue", "not checked", f"the Kubernetes API could not be read: {exc.reason}",
                     "give --kubeconfig, or run where the EKS endpoint is reachable (or --no-kubernetes)"), None
    except LiveError as exc:
        return Check("kueue", "not checked", f"the EKS endpoint could not be read: {exc}"), None
    if deployment is not None:
        return Check("kueue", "pass", f"Kueue runs (deployment {KUEUE_NAMESPACE}/{KUEUE_DEPLOYMENT})"), True
    if namespace is not None:
        return Check("kueue", "pass", f"namespace {KUEUE_NAMESPACE} exists, without the {KUEUE_DEPLOYMENT} "
                     "deployment"), False
    return Check("kueue", "pass", f"no self-managed Kueue (no namespace {KUEUE_NAMESPACE})"), False


def _subnets(ec2: Caller, e: Any) -> Check:
    fix = f"list private subnets of {e.vpc_id} in cluster.existing.subnetIds"
    try:
        found = {s["SubnetId"]: s for s in ec2.pages("describe_subnets", "Subnets", SubnetIds=list(e.subnet_ids))}
    except NotFound as exc:  # EC2 refuses the whole call and names the unknown id
        return Check("subnets", "fix", f"a subnet was not found ({exc.problem})", fix)
    absent = [s for s in e.subnet_ids if s not in found]
    elsewhere = [f"{s} ({found[s].get('VpcId')})" for s in e.subnet_ids
                 if s in found and found[s].get("VpcId") != e.vpc_id]
    if absent or elsewhere:
        problems = ([f"not found: {', '.join(absent)}"] if absent else []) + (
            [f"not in {e.vpc_id}: {', '.join(elsewhere)}"] if elsewhere else [])
        return Check("subnets", "fix", "; ".join(problems), fix)
    return Check("subnets", "pass", f"{len(found)} subnet(s) in {e.vpc_id}")


def existing_checks(spec: Any, clients: ClientFactory, kube: Optional[Callable[[], KubeApi]]) -> list[Check]:
    """The checks of governance-only mode. Raises ``LiveError`` when the HyperPod cluster cannot be read at all."""
    e = spec.cluster.existing
    sm, ek, ec2 = Caller(clients("sagemaker"), "sagemaker"), Caller(clients("eks"), "eks"), Caller(clients("ec2"), "ec2")
    checks: list[Check] = []
    try:
        hp = sm.call("describe_cluster", ClusterName=e.hyper_pod_cluster_arn)
    except NotFound:
        return [Check("hyperpod-cluster", "fix", f"no HyperPod cluster {e.hyper_pod_cluster_arn}",
                      "check cluster.existing.hyperPodClusterArn, the account (--profile) and the region")]
    eks_arn = ((hp.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn", "")
    if not eks_arn:
        return [Check("hyperpod-cluster", "fix", f"HyperPod cluster {hp.get('ClusterName')} is not orchestrated by "
                      "EKS (Slurm clusters have no task governance)", "name an EKS-orchestrated HyperPod cluster")]
    live_eks = eks_arn.rsplit("/", 1)[-1]
    if live_eks != e.eks_cluster_name:
        checks.append(Check("hyperpod-cluster", "fix", f"HyperPod cluster {hp.get('ClusterName')} is orchestrated by "
                            f"EKS cluster {live_eks}, the spec says {e.eks_cluster_name}",
                            f"set cluster.existing.eksClusterName: {live_eks}"))
    else:
        checks.append(Check("hyperpod-cluster", "pass", f"HyperPod cluster {hp.get('ClusterName')} "
                            f"({hp.get('ClusterStatus', 'status unknown')}) is orchestrated by EKS cluster {live_eks}"))
    autoscaled = getattr(spec.cluster, "auto_scaling", None) is not None
    if autoscaled:
        checks.append(Check("continuous-provisioning", *autoscaling.provisioning(hp)))
    try:
        cluster = _eks_described(ek, live_eks)
    except NotFound:
        return checks + [Check("authentication-mode", "fix", f"no EKS cluster {live_eks}", "check the region")]
    mode = (cluster.get("accessConfig") or {}).get("authenticationMode", "CONFIG_MAP")
    checks.append(Check("authentication-mode", "pass", f"authentication mode {mode}") if mode in API_AUTH_MODES
                  else Check("authentication-mode", "fix", f"authentication mode {mode}: access entries (how "
                             "hyperpod-gov grants teams and its kubectl handler access) are not used",
                             f"aws eks update-cluster-config --name {live_eks} --access-config "
                             "authenticationMode=API_AND_CONFIG_MAP"))
    version = str(cluster.get("version", ""))
    if _version(version) >= MIN_KUBERNETES:
        spec_version = str(spec.cluster.kubernetes_version)
        checks.append(Check("kubernetes-version", "pass", f"Kubernetes {version}") if spec_version == version
                      else Check("kubernetes-version", "fix", f"the cluster runs Kubernetes {version}, the spec says "
                                 f"{spec_version} (validation checks against it)",
                                 f'set cluster.kubernetesVersion: "{version}"'))
    else:
        checks.append(Check("kubernetes-version", "fix", f"Kubernetes {version or 'unknown'} is older than "
                            f"{'.'.join(map(str, MIN_KUBERNETES))}", "upgrade the EKS cluster (one minor version at a "
                            "time) before the first deploy"))
    addons = sorted(ek.pages("list_addons", "addons", clusterName=live_eks))
    kueue, runs = _kueue(kube)
    installs = getattr(e, "installs", None)
    mode_tg = spec.scheduler.mode == "task-governance"
    tg_present = TASK_GOVERNANCE_ADDON in addons
    installs_tg = bool(installs and installs.scheduler and mode_tg)
    listed = ", ".join(addons) or "none"
    if (tg_present or installs_tg) and runs:
        what = "is installed" if tg_present else "would be installed (installs.scheduler)"
        checks.append(Check("addons", "fix", f"add-ons: {listed}; the task-governance add-on {what} and a "
                            "self-managed Kueue runs", "uninstall the self-managed Kueue first (AWS prerequisite), "
                            "or use scheduler.mode: kueue without the add-on"))
    elif mode_tg and not tg_present and not installs_tg:
        checks.append(Check("addons", "fix", f"add-ons: {listed}; task-governance mode needs "
                            f"{TASK_GOVERNANCE_ADDON}, which is not installed",
                            "install it, or set cluster.existing.installs.scheduler: true"))
    elif not mode_tg and tg_present:
        checks.append(Check("addons", "fix", f"add-ons: {listed}; kueue mode, but {TASK_GOVERNANCE_ADDON} is "
                            "installed (its Kueue would fight the spec's Kueue objects)",
                            "use scheduler.mode: task-governance, or remove the add-on"))
    else:
        checks.append(Check("addons", "pass", f"add-ons: {listed}"))
    checks.append(kueue)
    if autoscaled:
        checks.append(Check("health-agent", *autoscaling.health_agent(kube)))
    checks.append(Check("network-policy", *network_policy(ek, live_eks, addons,
                                                          getattr(e, "network_policy_enforcement", None))))
    vpc = cluster.get("resourcesVpcConfig") or {}
    checks.append(Check("endpoint-access", "pass", "the EKS endpoint has private access") if vpc.get(
        "endpointPrivateAccess") else Check("endpoint-access", "fix", "the EKS endpoint has no private access: the "
                                            "kubectl handler in the given subnets cannot reach it",
                                            f"aws eks update-cluster-config --name {live_eks} "
                                            "--resources-vpc-config endpointPrivateAccess=true"))
    live_vpc = vpc.get("vpcId", "")
    if live_vpc and live_vpc != e.vpc_id:
        checks.append(Check("subnets", "fix", f"EKS cluster {live_eks} is in {live_vpc}, the spec says {e.vpc_id}",
                            f"set cluster.existing.vpcId: {live_vpc}"))
    else:
        checks.append(_subnets(ec2, e))
    try:
        groups = list(ec2.pages("describe_security_groups", "SecurityGroups", GroupIds=[e.security_group_id]))
    except NotFound:
        groups = []
    if not groups or groups[0].get("VpcId") != e.vpc_id:
        where = f"in {groups[0].get('VpcId')}" if groups else "not found"
        checks.append(Check("security-group", "fix", f"security group {e.security_group_id} is {where}",
                            f"give a security group of {e.vpc_id} (e.g. the EKS cluster security group "
                            f"{vpc.get('clusterSecurityGroupId', '')})"))
    else:
        checks.append(Check("security-group", "pass", f"security group {e.security_group_id} is in {e.vpc_id}"))
    region = e.hyper_pod_cluster_arn.split(":")[3]  # the cluster's region (validated ARN)
    checks.append(Check("vpc-endpoints", *endpoint_check(ec2, e.vpc_id, region)))
    return checks


def new_cluster_checks(spec: Any, clients: ClientFactory) -> list[Check]:
    """A cluster hyperpod-gov creates: nothing runs yet; its HyperPod and EKS cluster names must be free."""
    sm, ek = Caller(clients("sagemaker"), "sagemaker"), Caller(clients("eks"), "eks")
    name = spec.cluster.name
    taken = []
    try:
        sm.call("describe_cluster", ClusterName=name)
        taken.append(f"HyperPod cluster {name}")
    except NotFound:
        pass
    eks_name = f"{name}-eks"
    try:
        ek.call("describe_cluster", name=eks_name)
        taken.append(f"EKS cluster {eks_name}")
    except NotFound:
        pass
    elastic = [Check("autoscaling", *autoscaling.new_cluster(spec))] if getattr(spec.cluster, "auto_scaling",
                                                                                 None) else []
    if taken:
        return [Check("names-free", "fix", f"{' and '.join(taken)} exist already (deployed from this spec "
                      "before? then run drift instead)", "to govern that cluster, add cluster.existing (hyperpod-gov "
                      "import writes it); else choose another cluster.name")] + elastic
    return [Check("names-free", "pass", f"no HyperPod cluster {name} and no EKS cluster {eks_name} yet; nothing "
                  "else runs before the first deploy (validate and CloudFormation check the rest)")] + elastic


def exit_code(checks: list[Check]) -> int:
    if any(c.status == "fix" for c in checks):
        return EXIT_FIX
    if any(c.status == "not checked" for c in checks):
        return EXIT_CANNOT_CHECK
    return EXIT_OK


def to_text(checks: list[Check]) -> str:
    marks = {"pass": "ok  ", "fix": "FIX ", "not checked": "??  ", "skipped": "--  "}
    lines = []
    for c in checks:
        lines.append(f"{marks[c.status]}{c.id}: {c.detail}")
        if c.fix:
            lines.append(f"      fix: {c.fix}")
    return "\n".join(lines) + "\n"


def configure_preflight(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add preflight's arguments to ``parser`` (a subparser) and make ``run_preflight`` its ``func``."""
    parser.add_argument("spec", help="path of the governance spec (YAML)")
    parser.add_argument("--cluster", metavar="NAME", help="a fleet spec (clusters:): check this member only "
                        "(default: every member, each in its own account and region)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--profile", help="AWS profile (default: the default credential chain)")
    parser.add_argument("--region", help="AWS region (default: the spec's capacity region)")
    parser.add_argument("--kubeconfig", help="kubeconfig for the Kueue check (default: as drift chooses)")
    parser.add_argument("--context", dest="kube_context", help="kubeconfig context (default: the current one)")
    parser.add_argument("--no-kubernetes", action="store_true", help="skip the check that reads the Kubernetes API")
    parser.add_argument("--endpoint-policies", metavar="DIR", help="also write, as DIR/NAME.json, the VPC endpoint "
                        "policy hyperpod-gov gives each endpoint it creates (the spec's accounts only), for an "
                        "existing VPC's endpoints (to attach with aws ec2 modify-vpc-endpoint)")
    parser.set_defaults(func=run_preflight)
    return parser


def _write_endpoint_policies(spec: Any, folder: str) -> bool:
    """Write the endpoint policies of the spec's perimeter into ``folder``; False (reported) when it cannot."""
    from pathlib import Path

    from ..plan.endpoint_policies import perimeter
    from ..spec._base import partition_of

    documents = policy_documents(perimeter(spec.accounts, partition_of(spec.accounts.capacity.region),
                                           handlers_in_vpc=spec.cluster.orchestrator != "slurm"))
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for name, text in documents.items():
            (Path(folder) / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"hyperpod-gov preflight: --endpoint-policies {folder}: cannot write ({exc.strerror}); choose a "
              "writable folder", file=sys.stderr)
        return False
    print(f"wrote {len(documents)} endpoint policies to {folder}", file=sys.stderr)
    return True


def run_preflight(args: argparse.Namespace, clients: Optional[ClientFactory] = None,
                  kube: Optional[Callable[[], KubeApi]] = None) -> int:
    """Exit 0: every check passed; 1: something to fix (each with its fix); 2: could not check."""
    from ..cli_support import one_cluster_refused

    if one_cluster_refused("preflight", args):
        return EXIT_CANNOT_CHECK
    try:
        spec = load_spec(args.spec)
    except SpecError as exc:
        source = "" if exc.source else f"{args.spec}: "
        print(f"hyperpod-gov preflight: cannot check an invalid spec.\n{source}{exc.render()}", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    return preflight_spec(args, spec, clients, kube)


def preflight_spec(args: argparse.Namespace, spec: Any, clients: Optional[ClientFactory] = None,
                   kube: Optional[Callable[[], KubeApi]] = None) -> int:
    """``run_preflight`` of one parsed spec."""
    region = getattr(args, "region", None) or spec.accounts.capacity.region
    existing = getattr(spec.cluster, "existing", None)
    if getattr(args, "endpoint_policies", None) and not _write_endpoint_policies(spec, args.endpoint_policies):
        return EXIT_CANNOT_CHECK
    try:
        factory = clients or boto3_clients(profile=getattr(args, "profile", None), region=region)
        if existing is None:
            checks = new_cluster_checks(spec, factory)
        else:
            connect = None if getattr(args, "no_kubernetes", False) else (
                kube or connector(kubeconfig=getattr(args, "kubeconfig", None),
                                  context=getattr(args, "kube_context", None), clients=factory,
                                  eks_cluster_name=existing.eks_cluster_name))
            checks = existing_checks(spec, factory, connect)
    except LiveError as exc:
        print(f"hyperpod-gov preflight: could not read the cluster: {exc}", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(json.dumps({"checks": [c.to_json() for c in checks]}, indent=2) + "\n")
    else:
        sys.stdout.write(to_text(checks))
    return exit_code(checks)
