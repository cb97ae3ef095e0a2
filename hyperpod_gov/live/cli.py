"""``hyperpod-gov drift`` and ``hyperpod-gov import``: argparse wiring and the commands themselves.

The lead registers them with ``configure_drift(sub.add_parser("drift", ...))`` and
``configure_import(sub.add_parser("import", ...))``; each sets ``func`` to its ``run_*``.
``clients`` lets tests pass Stubber-wrapped clients instead of boto3's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Optional

from ..spec import SpecError, load_spec
from .aws import AccessDenied, Caller, ClientFactory, LiveError, boto3_clients
from .drift import DriftItem, compare, to_json, to_text
from .expected import Expected, expected_state
from .importer import EXISTING_SUPPORTED, ImportResult, LiveNetwork, spec_from_live
from .isolation import vpc_cni_enforces
from .k8s import Connector, KubernetesSide, connector, kubernetes_drift
from .read import (eks, read_addon_names, read_cluster, read_eks, read_eks_cluster, read_governance, read_vpc_cidr,
                   sagemaker)
from .slurm import SlurmSide, compare_slurm, spec_from_live_slurm

EXIT_OK, EXIT_DRIFT, EXIT_CANNOT_CHECK = 0, 1, 2
EXIT_IMPORT_NEEDS_EDITS = 1


def _aws_options(parser: argparse.ArgumentParser, region: str) -> None:
    """--profile, and --region with its default (``region``: what the command reads when it is not given)."""
    parser.add_argument("--profile", help="AWS profile (default: the default credential chain)")
    parser.add_argument("--region", help=f"AWS region (default: {region})")


def _slurm_options(parser: argparse.ArgumentParser, what: str) -> None:
    group = parser.add_argument_group("Slurm accounting (cluster.orchestrator: slurm; not held by any AWS API)")
    group.add_argument("--slurm-dump", metavar="FILE", help=f"{what} the accounts and users of this `sacctmgr dump "
                       "CLUSTER file=FILE`, written on the controller")
    group.add_argument("--slurm-qos", metavar="FILE", help="and the QOS of this `sacctmgr -P show qos "
                       "format=name,description,priority,grptres,preempt,preemptmode,flags` (Slurm 22.05 to 25.05 "
                       "dumps hold no QOS)")


def configure_drift(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add drift's arguments to ``parser`` (a subparser) and make ``run_drift`` its ``func``."""
    parser.add_argument("spec", help="path of the governance spec (YAML)")
    parser.add_argument("--environment", metavar="NAME", help="compare this environment of the spec (environments[])")
    parser.add_argument("--cluster", metavar="NAME", help="a fleet spec (clusters:): check this member only "
                        "(default: every member, each in its own account and region)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    _aws_options(parser, "the spec's capacity region")
    _slurm_options(parser, "compare")
    k8s = parser.add_argument_group("Kubernetes side (the objects hyperpod-gov owns; read-only)")
    k8s.add_argument("--kubeconfig", help="kubeconfig to reach the API with (default: KUBECONFIG or ~/.kube/config "
                     "when its context is the spec's EKS cluster, else a token from EKS through your AWS credentials)")
    k8s.add_argument("--context", dest="kube_context", help="kubeconfig context (default: the current one)")
    k8s.add_argument("--no-kubernetes", action="store_true", help="compare the AWS side only")
    k8s.add_argument("--require-kubernetes", action="store_true",
                     help="exit 2 when the Kubernetes side could not be checked (default: report it and go on)")
    parser.set_defaults(func=run_drift)
    return parser


def configure_import(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add import's arguments to ``parser`` (a subparser) and make ``run_import`` its ``func``."""
    parser.add_argument("--cluster-name", required=True, help="name of the HyperPod cluster to import")
    _aws_options(parser, "the region of the AWS profile or environment (AWS_REGION, AWS_DEFAULT_REGION), where the "
                 "cluster is looked up")
    parser.add_argument("--out", help="file to write the spec to (default: standard output)")
    _slurm_options(parser, "import")
    parser.add_argument("--new-cluster", action="store_true",
                        help="write a spec for a new cluster like this one (hyperpod-gov creates it) instead of one "
                        "that governs this cluster (cluster.existing)")
    parser.set_defaults(func=run_import)
    return parser


def _cannot(what: str, exc: LiveError) -> int:
    print(f"hyperpod-gov {what}: could not read the cluster: {exc}", file=sys.stderr)
    return EXIT_CANNOT_CHECK


def drift(expected: Expected, clients: ClientFactory, region: Optional[str] = None) -> tuple[DriftItem, ...]:
    """Read the live state (Describe/List calls only) and compare it with ``expected``. Raises ``LiveError``.

    ``region``: where ``clients`` look (default: the plan's region); only named in messages.
    """
    sm, ek = sagemaker(clients), eks(clients)
    cluster = read_cluster(sm, expected.cluster_name, region or expected.region)
    if cluster.account != expected.account:
        raise LiveError("DescribeCluster", f"the credentials reach account {cluster.account}, but the spec's "
                        f"capacity account is {expected.account}",
                        "use credentials of the capacity account (e.g. --profile)")
    governance = read_governance(sm, cluster)
    live_eks = read_eks(
        ek, cluster.eks_cluster_name,
        service_accounts=tuple((i.namespace, i.service_account) for i in expected.pod_identities),
        addons=expected.described_addons,
    )
    return compare(expected, cluster, governance, live_eks)


def run_drift(args: argparse.Namespace, clients: Optional[ClientFactory] = None,
              kube: Optional[Connector] = None) -> int:
    """Exit 0: nothing drifted; 1: drift found (printed); 2: the spec or the cluster could not be read.

    The Kubernetes side adds its items when the API can be reached; when it cannot, the AWS side is still
    reported, with the reason the Kubernetes side was not checked (exit 2 for that only with
    ``--require-kubernetes``). ``kube`` lets tests say how the API is reached.
    """
    from ..cli_support import one_cluster_refused
    from ..plan import build_plan

    if one_cluster_refused("drift", args):
        return EXIT_CANNOT_CHECK
    try:
        plan = build_plan(load_spec(args.spec, environment=args.environment), base_dir=Path(args.spec).resolve().parent)
    except SpecError as exc:
        source = "" if exc.source else f"{args.spec}: "
        print(f"hyperpod-gov drift: cannot check against an invalid spec.\n{source}{exc.render()}", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    return drift_plan(args, plan, clients, kube)


def drift_plan(args: argparse.Namespace, plan, clients: Optional[ClientFactory] = None,
               kube: Optional[Connector] = None, extra: tuple = ()) -> int:
    """``run_drift`` of one plan (``extra``: cluster-wide Kubernetes objects planned beside the plan's own, a fleet
    member's MultiKueue objects)."""
    if plan.slurm is not None:
        return _run_slurm_drift(args, plan, clients)
    expected = expected_state(plan)
    region = getattr(args, "region", None) or expected.region
    try:
        factory = clients or boto3_clients(profile=getattr(args, "profile", None), region=region)
        items = drift(expected, factory, region)
    except LiveError as exc:
        return _cannot("drift", exc)
    if getattr(args, "no_kubernetes", False):
        side = KubernetesSide(False, reason="not asked (--no-kubernetes)")
    else:
        side = kubernetes_drift(plan, kube or connector(
            kubeconfig=getattr(args, "kubeconfig", None), context=getattr(args, "kube_context", None),
            clients=factory, eks_cluster_name=expected.eks_cluster_name), extra)
    items = tuple(sorted((*items, *side.items), key=DriftItem.sort_key))
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(to_json(items, kubernetes=side.to_json()))
    else:
        sys.stdout.write(to_text(items, cluster_name=expected.cluster_name, region=region))
        sys.stdout.write(f"Kubernetes side: checked ({side.via}).\n" if side.checked
                         else f"Kubernetes side: not checked: {side.reason}\n")
    if not side.checked and getattr(args, "require_kubernetes", False):
        print(f"hyperpod-gov drift: --require-kubernetes: the Kubernetes side was not checked: {side.reason}",
              file=sys.stderr)
        return EXIT_CANNOT_CHECK
    return EXIT_DRIFT if items else EXIT_OK


class _BadInput(Exception):
    """A --slurm-dump or --slurm-qos file that cannot be read (the message says which and why)."""


def _slurm_state(args: argparse.Namespace):
    """The accounting of --slurm-dump (with --slurm-qos), or None when no dump is given."""
    from ..slurm.dump import DumpError, live_state

    dump, qos = getattr(args, "slurm_dump", None), getattr(args, "slurm_qos", None)
    if dump is None:
        if qos is not None:
            raise _BadInput("--slurm-qos needs --slurm-dump (the accounts and users come from the dump)")
        return None
    texts = []
    for flag, path in (("--slurm-dump", dump), ("--slurm-qos", qos)):
        if path is None:
            texts.append(None)
            continue
        try:
            texts.append(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise _BadInput(f"{flag} {path}: cannot read it ({exc.strerror})") from None
    try:
        return live_state(texts[0], texts[1], dump_source=dump, qos_source=qos or "qos")
    except DumpError as exc:
        raise _BadInput(str(exc)) from None


def slurm_drift(plan, clients: ClientFactory, live=None, region: Optional[str] = None
                ) -> tuple[tuple[DriftItem, ...], SlurmSide]:
    """Drift of a Slurm-orchestrated cluster: DescribeCluster, and the accounting when ``live`` (a dump) is given."""
    cluster = read_cluster(sagemaker(clients), plan.cluster_name, region or plan.region, orchestrator="slurm")
    if cluster.account != plan.account:
        raise LiveError("DescribeCluster", f"the credentials reach account {cluster.account}, but the spec's "
                        f"capacity account is {plan.account}", "use credentials of the capacity account (e.g. --profile)")
    items, side = compare_slurm(plan, cluster, live)
    return tuple(sorted(items, key=DriftItem.sort_key)), side


def _run_slurm_drift(args: argparse.Namespace, plan, clients: Optional[ClientFactory]) -> int:
    region = getattr(args, "region", None) or plan.region
    try:
        live = _slurm_state(args)
    except _BadInput as exc:
        print(f"hyperpod-gov drift: {exc}", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    try:
        factory = clients or boto3_clients(profile=getattr(args, "profile", None), region=region)
        items, side = slurm_drift(plan, factory, live, region)
    except LiveError as exc:
        return _cannot("drift", exc)
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(to_json(items, slurm=side.to_json()))
    else:
        sys.stdout.write(to_text(items, cluster_name=plan.cluster_name, region=region))
        sys.stdout.write(side.text())
    return EXIT_DRIFT if items else EXIT_OK


def import_spec(cluster_name: str, clients: ClientFactory, new_cluster: bool = False) -> ImportResult:
    """Read the cluster, its policy, its quotas and its EKS cluster; return the spec text. Raises ``LiveError``.

    Unless ``new_cluster``, the spec governs this cluster (``cluster.existing``, where the spec model has it),
    which also reads the VPC's CIDR (EC2 ``DescribeVpcs``), the installed add-ons (EKS ``ListAddons``) and whether
    the vpc-cni add-on enforces NetworkPolicies (EKS ``DescribeAddon``, when it is installed).
    """
    sm, ek = sagemaker(clients), eks(clients)
    cluster = read_cluster(sm, cluster_name, getattr(sm.client.meta, "region_name", None) or "")
    return _import_eks(cluster, sm, ek, clients, new_cluster)


def _import_eks(cluster, sm, ek, clients: ClientFactory, new_cluster: bool) -> ImportResult:
    governance = read_governance(sm, cluster)
    eks_cluster = read_eks_cluster(ek, cluster.eks_cluster_name)
    network = None
    if EXISTING_SUPPORTED and not new_cluster:  # governance-only mode: the spec governs this cluster as it is
        vpc_id = ((eks_cluster or {}).get("resourcesVpcConfig") or {}).get("vpcId")
        cidr = read_vpc_cidr(Caller(clients("ec2"), "ec2"), vpc_id) if vpc_id else None
        addons = read_addon_names(ek, cluster.eks_cluster_name)
        try:
            enforces: Optional[bool] = vpc_cni_enforces(ek, cluster.eks_cluster_name, addons)
        except AccessDenied:  # eks:DescribeAddon is beyond the reads docs/live-contract.md names for import
            enforces = None
        network = LiveNetwork(cidr, addons, enforces)
    return spec_from_live(cluster, governance, eks_cluster, network)


def run_import(args: argparse.Namespace, clients: Optional[ClientFactory] = None) -> int:
    """Exit 0: spec written and valid; 1: written, but it needs edits to validate (listed); 2: could not read."""
    try:
        live = _slurm_state(args)
    except _BadInput as exc:
        print(f"hyperpod-gov import: {exc}", file=sys.stderr)
        return EXIT_CANNOT_CHECK
    try:
        factory = clients or boto3_clients(profile=getattr(args, "profile", None), region=getattr(args, "region", None))
        sm = sagemaker(factory)
        cluster = read_cluster(sm, args.cluster_name, getattr(sm.client.meta, "region_name", None) or "",
                               orchestrator="any")
        if cluster.orchestrator == "slurm":
            result = spec_from_live_slurm(cluster, live)
        elif live is not None:
            print(f"hyperpod-gov import: --slurm-dump: cluster {args.cluster_name} is orchestrated by EKS, not Slurm",
                  file=sys.stderr)
            return EXIT_CANNOT_CHECK
        else:
            result = _import_eks(cluster, sm, eks(factory), factory, getattr(args, "new_cluster", False))
    except LiveError as exc:
        return _cannot("import", exc)
    out = getattr(args, "out", None)
    if out:
        try:
            Path(out).write_text(result.text, encoding="utf-8")
        except OSError as exc:
            print(f"hyperpod-gov import: --out {out}: cannot write ({exc.strerror}); choose a writable path",
                  file=sys.stderr)
            return EXIT_CANNOT_CHECK
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(result.text)
    if result.issues:
        print(f"the imported spec needs {len(result.issues)} edit(s) before it validates:", file=sys.stderr)
        for issue in result.issues:
            print(f"  - {issue}", file=sys.stderr)
        return EXIT_IMPORT_NEEDS_EDITS
    return EXIT_OK
