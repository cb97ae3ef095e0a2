"""From a laptop to the cluster's API: the tools and their versions, the role to assume (an AWS CLI profile), the
network that reaches the endpoint and how to check it, and the kubeconfig and HyperPod CLI context."""

from __future__ import annotations

from dataclasses import dataclass

from ..plan import Plan, TeamPlan
from ..plan.api_access import API_PORT
from ..plan.connect import hyperpod_context_command, kubeconfig_command
from ..plan.workloads import kinds_for
from .document import Block, Bullets, Code, CodeBlock, Heading, Para, Table, codes, text

# The HyperPod CLI release the page's commands were checked against (aws/sagemaker-hyperpod-cli v3.9.0, 2026-06-11:
# `hyp set-cluster-context`, and `hyp list|describe|list-pods|get-logs` with `--namespace`, which defaults to
# `default`, not to the context's namespace). Its package declares Python 3.8 to 3.11 (python_requires >=3.8).
HYP_PACKAGE = "sagemaker-hyperpod"
HYP_VERSION = "3.9.0"
HYP_PYTHON = "3.8 to 3.11"
SSO_ROLE_PATH = ":role/aws-reserved/sso.amazonaws.com/"  # where IAM Identity Center puts permission-set roles
SSO_ROLE_PREFIX = "AWSReservedSSO_"


@dataclass(frozen=True)
class Principal:
    arn: str
    submits: bool  # on the team's submitters group (else it views)

    @property
    def account(self) -> str:
        return self.arn.split(":")[4]


def principals(plan: Plan, team: TeamPlan) -> tuple[Principal, ...]:
    """The principals with an access entry onto the team's groups, submitters first, then by ARN."""
    found = [Principal(p.principal_arn, team.submitters_group in p.groups) for p in plan.principals
             if team.name in p.teams]
    return tuple(sorted(found, key=lambda p: (not p.submits, p.arn)))


def profile_name(plan: Plan, team: TeamPlan) -> str:
    """The AWS CLI profile the page has the reader create (a name on their laptop only)."""
    return f"{plan.name}-{team.name}"


def kubectl_minors(version: str) -> tuple[str, ...]:
    """The kubectl minor versions within one of the cluster's Kubernetes ``version`` ("1.33": 1.32, 1.33, 1.34)."""
    major, minor = (int(x) for x in version.split(".")[:2])
    return tuple(f"{major}.{m}" for m in (minor - 1, minor, minor + 1) if m >= 0)


def install(plan: Plan, team: TeamPlan) -> list[Block]:
    version = plan.cluster.kubernetes_version
    minors = kubectl_minors(version)
    existing = plan.governance_only
    blocks: list[Block] = [
        Heading(2, "1. Install the tools"),
        Table(("Tool", "Version", "Check"), (
            (text("AWS CLI"), text("v2 (any 2.x release)"), text(Code("aws --version"))),
            (text("kubectl"), text(", ".join(minors) + f": within one minor version of the cluster's Kubernetes "
                                   f"{version}"), text(Code("kubectl version --client"))),
            (text("HyperPod CLI ", Code("hyp")), text(f"{HYP_PACKAGE} {HYP_VERSION} (Python {HYP_PYTHON})"),
             text(Code("hyp --version"))),
        )),
        CodeBlock("bash", "\n".join((
            "# AWS CLI v2 (Linux x86_64; macOS: https://awscli.amazonaws.com/AWSCLIV2.pkg)",
            "curl -sSLo awscliv2.zip https://awscli.amazonaws.com/awscli-exe-linux-x86_64.zip",
            "unzip -q awscliv2.zip && sudo ./aws/install",
            f"# kubectl {version} (macOS: darwin/arm64 instead of linux/amd64)",
            f'curl -sSLO "https://dl.k8s.io/release/$(curl -sSL https://dl.k8s.io/release/stable-{version}.txt)'
            '/bin/linux/amd64/kubectl"',
            "sudo install -m 0755 kubectl /usr/local/bin/kubectl",
            "# the HyperPod CLI, in a virtual environment of its own",
            f'python3 -m venv ~/.venvs/hyp && ~/.venvs/hyp/bin/pip install "{HYP_PACKAGE}=={HYP_VERSION}"',
            'export PATH="$HOME/.venvs/hyp/bin:$PATH"',
        ))),
    ]
    if existing:
        blocks.append(Para(text(
            f"The spec says the cluster runs Kubernetes {version}; the cluster existed before hyperpod-gov, so read "
            "what it runs now (once your profile of step 2 works): ",
            Code(f"aws eks describe-cluster --region {plan.region} --name {plan.eks_cluster_name} "
                 f"--query cluster.version --output text --profile {profile_name(plan, team)}"), ".")))
    return blocks


def _profile_block(plan: Plan, team: TeamPlan, arn: str) -> str:
    name = profile_name(plan, team)
    if SSO_ROLE_PATH in arn:
        permission_set = arn.rsplit("/", 1)[-1].removeprefix(SSO_ROLE_PREFIX).rsplit("_", 1)[0]
        return "\n".join((f"[profile {name}]", "sso_session = <your IAM Identity Center session>",
                          f"sso_account_id = {arn.split(':')[4]}", f"sso_role_name = {permission_set}",
                          f"region = {plan.region}"))
    return "\n".join((f"[profile {name}]", f"role_arn = {arn}", "source_profile = default",
                      f"region = {plan.region}"))


def role(plan: Plan, team: TeamPlan) -> list[Block]:
    people = principals(plan, team)
    blocks: list[Block] = [Heading(2, "2. The role to assume")]
    if not people:
        return blocks + [Para(text("Nobody yet: ask the platform team to add you to ", Code("access.submitters"),
                                   " or ", Code("access.viewers"), "."))]
    blocks.append(Table(("Principal", "May"), tuple(
        (text(Code(p.arn)), text("submit and manage the team's work" if p.submits else "view the team's work"))
        for p in people)))
    submitter = next((p for p in people if p.submits), people[0])
    name = profile_name(plan, team)
    blocks += [Para(text("Add a profile for it to ", Code("~/.aws/config"), ":")),
               CodeBlock("ini", _profile_block(plan, team, submitter.arn))]
    if SSO_ROLE_PATH in submitter.arn:
        blocks.append(Para(text("The role is an IAM Identity Center permission set: ", Code("aws configure sso"),
                                " writes the session block; sign in with ", Code(f"aws sso login --profile {name}"),
                                ".")))
    else:
        blocks.append(Para(text(Code("source_profile"), " is the profile you sign in with (your IAM Identity "
                                "Center or federated sign-in); it must be allowed to assume the role.")))
    blocks += [Para(text("Check: ", Code(f"aws sts get-caller-identity --profile {name}"),
                         " prints an ", Code("assumed-role"), " ARN of that role."))]
    if any(p.account != plan.account for p in people):
        blocks.append(Para(text(
            f"A role of another account than the cluster's ({plan.account}) has its access entry, but AWS "
            "authorizes eks:DescribeCluster and sagemaker:DescribeCluster only in the cluster's account: step 4 "
            "says how such a member connects.")))
    return blocks


def network(plan: Plan, team: TeamPlan) -> list[Block]:
    c = plan.cluster
    name = profile_name(plan, team)
    blocks: list[Block] = [Heading(2, "3. Reach the cluster's API")]
    if plan.governance_only:
        blocks.append(Para(text(
            "The cluster existed before hyperpod-gov, which changes no network access to its endpoint: ask the "
            "platform team which network (VPN, peered VPC) reaches it, then check as below.")))
    else:
        sources = [text(Code(s.value), f" ({s.description})") if s.kind == "cidr" else text(s.words)
                   for s in c.api_access]
        private = f"in the cluster's VPC ({plan.network.cidr}), reached on TCP {API_PORT} from the VPC"
        lead = (text("The Kubernetes API has a private endpoint only: its name resolves to addresses ", private)
                if c.endpoint_access == "private" else
                text("The Kubernetes API has a public endpoint, open to ", *codes(c.admin_cidrs), " (your address: ",
                     Code("curl -s https://checkip.amazonaws.com"), "), and a private one ", private))
        if sources:
            blocks += [Para((*lead, " and from these networks:")), Bullets(tuple(sources)),
                       Para(text("Connect to one of them (the VPN, a peered network) before you go on."))]
        else:
            outside = ("use the public endpoint from outside it" if c.endpoint_access != "private"
                       else "work from inside the VPC, or ask the platform team to admit your VPN")
            blocks.append(Para((*lead, " alone (", Code("cluster.apiAccess"),
                                f" admits no other network): {outside}.")))
    blocks += [
        Para(text("Check that you reach it (any HTTP status, 200, 401 or 403, means you do; ", Code("000"),
                  " after 5 seconds means you do not):")),
        CodeBlock("bash", "\n".join((
            f"ENDPOINT=$(aws eks describe-cluster --region {plan.region} --name {plan.eks_cluster_name} "
            f"--profile {name} --query cluster.endpoint --output text)",
            "curl -sk --max-time 5 -o /dev/null -w '%{http_code}\\n' \"$ENDPOINT/healthz\"",
        ))),
    ]
    return blocks


def connect(plan: Plan, team: TeamPlan) -> list[Block]:
    name = profile_name(plan, team)
    kinds = kinds_for(team)
    lines = [f"{kubeconfig_command(plan)} --profile {name}",
             f"kubectl config set-context --current --namespace {team.namespace}",
             f"AWS_PROFILE={name} {hyperpod_context_command(plan, team.namespace)}"]
    if kinds:
        k = kinds[0]
        lines.append(f"kubectl auth can-i create {k.resource}{'.' + k.group if k.group else ''} "
                     f"--namespace {team.namespace}  # yes")
    blocks: list[Block] = [
        Heading(2, "4. Connect kubectl and the HyperPod CLI"),
        CodeBlock("bash", "\n".join(lines)),
        Para(text(Code("hyp set-cluster-context"), " writes the same kubeconfig entry and pins the team namespace "
                  "in it; the HyperPod CLI's ", Code("list"), ", ", Code("describe"), " and ", Code("get-logs"),
                  " commands still default to the namespace ", Code("default"), ": pass ",
                  Code(f"--namespace {team.namespace}"), ".")),
    ]
    if team.tools_policy is None:
        blocks.append(Para(text(
            "hyperpod-gov gives the team's roles no tools policy (", Code("teams[].access.toolsPolicy: false"),
            "): ", Code("aws eks update-kubeconfig"), " needs eks:DescribeCluster on the cluster and ",
            Code("hyp set-cluster-context"), " also sagemaker:DescribeCluster and eks:DescribeAccessEntry; ask "
            "whoever manages your role.")))
    foreign = [p for p in principals(plan, team) if p.account != plan.account]
    if foreign:
        stack = plan.stacks.capacity or plan.stacks.governance or plan.name
        eks = plan.eks_cluster_name
        blocks += [
            Heading(3, "A role of another account"),
            Para(text("For ", *codes(tuple(p.arn for p in foreign)), ": ", Code("aws eks update-kubeconfig"),
                      " and ", Code("hyp set-cluster-context"), " are refused outside the cluster's account. Ask the "
                      "platform team for the outputs ", Code("EksEndpoint"), " and ", Code("EksCertificateAuthority"),
                      " of the stack ", Code(stack), ", then write the kubeconfig yourself (",
                      Code("aws eks get-token"), " signs with your own credentials and needs no IAM right):")),
            CodeBlock("bash", "\n".join((
                "ENDPOINT=<EksEndpoint>; echo '<EksCertificateAuthority>' | base64 --decode > ~/.kube/" + eks + ".crt",
                f'kubectl config set-cluster {eks} --server "$ENDPOINT" --certificate-authority ~/.kube/{eks}.crt '
                "--embed-certs",
                f"kubectl config set-credentials {name} --exec-api-version=client.authentication.k8s.io/v1beta1 "
                f"--exec-command=aws --exec-arg=eks --exec-arg=get-token --exec-arg=--cluster-name "
                f"--exec-arg={eks} --exec-arg=--region --exec-arg={plan.region} --exec-env=AWS_PROFILE={name}",
                f"kubectl config set-context {name} --cluster {eks} --user {name} --namespace {team.namespace}",
                f"kubectl config use-context {name}",
            ))),
            Para(text("The HyperPod CLI's job commands then use this context.")),
        ]
    return blocks
