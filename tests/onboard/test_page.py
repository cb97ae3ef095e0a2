"""``hyperpod-gov onboard``: the page's sections, its Markdown and HTML (plain YAML, everything from the spec
escaped, a well-formed HTML document), and the network, role and connection steps for each kind of cluster and
principal."""

from __future__ import annotations

import copy
import dataclasses
import re
from html.parser import HTMLParser

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.onboard import onboarding_team, plain_yaml, render_onboarding, render_onboarding_html
from hyperpod_gov.onboard.document import md_text
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.connect import hyperpod_context_command, kubeconfig_command
from hyperpod_gov.spec import SpecError, load_spec, parse_spec
from tests.conftest import BASE, EXAMPLES, TODAY

SECTIONS = ("1. Install the tools", "2. The role to assume", "3. Reach the cluster's API",
            "4. Connect kubectl and the HyperPod CLI", "5. Where your work goes", "6. Your first job",
            "7. Watch it, and find out why it waits", "8. Your data", "9. Whom to ask")
EKS_EXAMPLES = ("enterprise", "startup", "existing")
ENTERPRISE = build_plan(load_spec(EXAMPLES / "enterprise.yaml", today=TODAY))


def _plan(example: str):
    return ENTERPRISE if example == "enterprise" else build_plan(load_spec(EXAMPLES / f"{example}.yaml", today=TODAY))


def yaml_blocks(page: str) -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", page, re.S)


@pytest.mark.parametrize("example", EKS_EXAMPLES)
def test_every_page_has_every_section_in_order(example):
    plan = _plan(example)
    for team in plan.tenants:
        page = render_onboarding(plan, team)
        headings = re.findall(r"^## (.*)$", page, re.M)
        assert headings == list(SECTIONS), team.name


@pytest.mark.parametrize("example", (*EKS_EXAMPLES, "enterprise-slurm", "startup-slurm"))
def test_no_manifest_on_any_page_has_a_yaml_anchor_or_alias(example):
    """A manifest to copy and `kubectl apply` is plain YAML: no `&id001` / `*id001` (an MPIJob's launcher and worker
    once shared their resources mapping)."""
    plan = _plan(example)
    for team in plan.tenants:
        blocks = yaml_blocks(render_onboarding(plan, team))
        assert blocks, team.name
        for block in blocks:
            events = list(yaml.parse(block))
            assert not any(isinstance(e, yaml.AliasEvent) or getattr(e, "anchor", None) for e in events), team.name


def test_the_dumper_writes_a_shared_mapping_in_full_twice():
    shared = {"cpu": "1"}
    text = plain_yaml({"a": shared, "b": shared})
    assert text == "a:\n  cpu: '1'\nb:\n  cpu: '1'\n"
    assert "&id" in yaml.safe_dump({"a": shared, "b": shared})  # what the default dumper does with it


# --- what the page says, from the plan ------------------------------------------------------------------------------
def test_the_page_names_the_role_profile_kubeconfig_and_context_as_the_plan_has_them():
    team = ENTERPRISE.team("speech")
    page = render_onboarding(ENTERPRISE, team)
    assert ("[profile acme-ml-speech]\nrole_arn = arn:aws:iam::111111111111:role/SpeechScientist\n"
            "source_profile = default\nregion = us-east-1\n") in page
    assert f"{kubeconfig_command(ENTERPRISE)} --profile acme-ml-speech" in page
    assert f"AWS_PROFILE=acme-ml-speech {hyperpod_context_command(ENTERPRISE, team.namespace)}" in page
    assert "`arn:aws:iam::111111111111:role/SpeechViewer` | view the team's work" in page
    assert f"`{team.namespace}`" in page and f"`{team.local_queue}`" in page
    for label in team.kueue_priority_classes:
        assert f"`{label}`" in page


def test_the_tools_are_pinned_to_the_clusters_kubernetes_and_the_checked_hyperpod_cli():
    page = render_onboarding(ENTERPRISE, ENTERPRISE.team("speech"))
    assert "| kubectl | 1.32, 1.33, 1.34: within one minor version of the cluster's Kubernetes 1.33 |" in page
    assert "https://dl.k8s.io/release/stable-1.33.txt" in page
    assert 'pip install "sagemaker-hyperpod==3.9.0"' in page


def test_a_private_endpoint_names_the_vpn_and_how_to_check_it():
    page = render_onboarding(ENTERPRISE, ENTERPRISE.team("speech"))
    assert "private endpoint only" in page and "(10.192.0.0/16)" in page
    assert "- `10.8.0.0/16` (Corporate VPN)" in page
    assert ("aws eks describe-cluster --region us-east-1 --name ml-cluster-eks --profile acme-ml-speech "
            "--query cluster.endpoint --output text") in page
    assert "curl -sk --max-time 5" in page and "$ENDPOINT/healthz" in page


def test_a_public_endpoint_names_its_cidrs_and_how_to_find_ones_address():
    plan = _plan("startup")
    page = render_onboarding(plan, plan.team("chatbot"))
    assert "public endpoint, open to `203.0.113.0/24`" in page
    assert "curl -s https://checkip.amazonaws.com" in page
    assert "from the VPC alone (`cluster.apiAccess` admits no other network): use the public endpoint" in page


def test_an_existing_cluster_says_how_to_read_its_version_and_whom_to_ask_for_the_network():
    plan = _plan("existing")
    team = plan.tenants[0]
    page = render_onboarding(plan, team)
    assert (f"aws eks describe-cluster --region us-west-2 --name lab-eks --query cluster.version --output text "
            f"--profile lab-ml-{team.name}") in page
    assert "changes no network access to its endpoint: ask the platform team" in page


def test_the_watch_section_gives_this_teams_numbers_and_who_may_preempt_it():
    speech = render_onboarding(ENTERPRISE, ENTERPRISE.team("speech"))  # 25 GPUs, borrows up to 50 %, never preempts
    assert "the team's 25 GPUs on ml.p5.48xlarge are held by its own admitted work" in speech
    assert "up to 12 GPUs" in speech
    assert "its own team never (`preemptTeamTasks: Never`)" in speech and "`InCohortReclamation`" in speech
    fm = render_onboarding(ENTERPRISE, ENTERPRISE.team("foundation-models"))  # DontLend
    assert "(it borrows nothing)" in fm and "other teams never: the team borrows nothing" in fm
    assert "`InClusterQueue`: a job of its own team with a higher priority class" in fm
    assert "kubectl get workloads --namespace hyperpod-ns-foundation-models" in fm
    assert "hyp list hyp-pytorch-job --namespace hyperpod-ns-foundation-models" in fm


def test_the_data_section_lists_the_teams_grants_bucket_and_role():
    page = render_onboarding(ENTERPRISE, ENTERPRISE.team("speech"))
    assert "`s3://acme-research-audio/corpora/` (read, through `arn:aws:iam::222222222222:role/speech-trainer-data`)" \
        in page
    research = render_onboarding(ENTERPRISE, ENTERPRISE.team("applied-research"))
    assert "Team bucket `s3://" in research and "`s3://acme-shared-datasets/imagenet/` (read)" in research
    assert "| Support | Platform on-call (#ml-platform), business hours |" in research


def _with_team_a(**changes) -> dict:
    data = copy.deepcopy(BASE)
    data["teams"][0].update(changes)
    return data


def test_a_role_of_another_account_is_told_to_write_its_kubeconfig_from_the_stack_outputs():
    data = _with_team_a(access={"submitters": ["arn:aws:iam::222222222222:role/Remote"]})
    data["accounts"]["trusted"] = ["222222222222"]
    plan = build_plan(parse_spec(data, today=TODAY))
    page = render_onboarding(plan, plan.team("team-a"))
    assert "### A role of another account" in page
    assert "`EksEndpoint` and `EksCertificateAuthority`" in page
    assert "--exec-env=AWS_PROFILE=acme-team-a" in page and "kubectl config use-context acme-team-a" in page
    local = render_onboarding(build_plan(parse_spec(copy.deepcopy(BASE), today=TODAY)), plan.team("team-a"))
    assert "A role of another account" not in local


def test_an_identity_center_role_gets_an_sso_profile():
    arn = "arn:aws:iam::111111111111:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_DataScientist_0123456789abcdef"
    plan = build_plan(parse_spec(_with_team_a(access={"submitters": [arn]}), today=TODAY))
    page = render_onboarding(plan, plan.team("team-a"))
    assert "sso_account_id = 111111111111\nsso_role_name = DataScientist\n" in page
    assert "aws sso login --profile acme-team-a" in page


def test_a_slurm_cluster_keeps_the_page_it_had():
    plan = _plan("enterprise-slurm")
    page = render_onboarding(plan, plan.team("speech"))
    assert re.findall(r"^## (.*)$", page, re.M) == ["1. The role to assume", "2. Connect", "3. Where your work goes",
                                                      "4. What you may create", "5. Example manifests"]


# --- escaping ---------------------------------------------------------------------------------------------------------
HOSTILE = "<script>alert(1)</script> & [x](javascript:alert(1)) `tick` | **bold** _it_ &lt; \\"
DESCRIPTION = "VPN [click](http://evil.example) *x* & {y} $z !w"  # every character a rule description may hold


@pytest.fixture(scope="module")
def hostile():
    data = copy.deepcopy(BASE)
    data["cluster"]["apiAccess"] = {"cidrs": [{"cidr": "10.8.0.0/16", "description": DESCRIPTION}]}
    data["teams"][0]["contract"] = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com",
                                    "costOwner": "c@example.com", "dataClassification": "internal",
                                    "reviewBy": "2027-06-30", "support": "placeholder"}
    plan = build_plan(parse_spec(data, today=TODAY))
    team = plan.team("team-a")
    # the spec refuses '<' and control characters in a contract; the page must hold even if one got through
    evil = dataclasses.replace(team, contract=team.contract.model_copy(update={"support": HOSTILE,
                                                                               "monitoring": "a\r\n# heading"}))
    return dataclasses.replace(plan, teams=tuple(evil if t.name == "team-a" else t for t in plan.teams)), evil


def _unescape_md(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", re.sub(r"(?<!\\)&lt;", "<", value))


def test_markdown_shows_spec_text_as_written_and_makes_no_markup_of_it(hostile):
    plan, team = hostile
    page = render_onboarding(plan, team)
    (row,) = [line for line in page.splitlines() if line.startswith("| Support | ")]
    cell = row.removeprefix("| Support | ").removesuffix(" |")
    assert _unescape_md(cell) == HOSTILE
    assert not re.search(r"(?<!\\)[\[\]*_`|<]", cell.replace("&lt;", ""))  # every markup character escaped
    assert "<script" not in page and "\n# heading" not in page
    (vpn,) = [line for line in page.splitlines() if line.startswith("- `10.8.0.0/16`")]
    assert _unescape_md(vpn.removeprefix("- `10.8.0.0/16` (").removesuffix(")")) == DESCRIPTION
    assert md_text("a*b") == "a\\*b"


class _Tree(HTMLParser):
    """Checks that every element is closed in order (void elements aside) and collects each cell's text."""

    VOID = {"meta", "br", "hr", "img", "input", "link"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.cells: list[str] = []
        self.items: list[str] = []
        self.decl = ""

    def handle_decl(self, decl: str) -> None:
        self.decl = decl

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)
        if tag in ("td", "li"):
            (self.cells if tag == "td" else self.items).append("")

    def handle_endtag(self, tag) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])
        self.stack.pop()

    def handle_data(self, data) -> None:
        if "td" in self.stack:
            self.cells[-1] += data
        if "li" in self.stack:
            self.items[-1] += data


def test_html_is_one_well_formed_document_with_everything_escaped(hostile):
    plan, team = hostile
    page = render_onboarding_html(plan, team)
    tree = _Tree()
    tree.feed(page)
    tree.close()
    assert tree.decl == "DOCTYPE html" and tree.stack == []
    assert tree.tags[:2] == ["html", "head"] and "script" not in tree.tags and "a" not in tree.tags
    assert HOSTILE in tree.cells and "a\r\n# heading" in tree.cells
    assert any(DESCRIPTION in item for item in tree.items)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<h2>9. Whom to ask</h2>" in page


# --- the command ------------------------------------------------------------------------------------------------------
def test_the_command_prints_the_page_in_either_format_and_exits_1_for_an_unknown_team(capsys):
    spec = str(EXAMPLES / "enterprise.yaml")
    assert main(["onboard", spec, "speech"]) == 0
    assert capsys.readouterr().out == render_onboarding(ENTERPRISE, ENTERPRISE.team("speech"))
    assert main(["onboard", spec, "speech", "--format", "html"]) == 0
    assert capsys.readouterr().out == render_onboarding_html(ENTERPRISE, ENTERPRISE.team("speech"))
    assert main(["onboard", spec, "nope"]) == 1
    err = capsys.readouterr().err
    assert "TEAM: is not a team of the spec ('nope')" in err and "speech" in err


def test_an_unknown_team_names_the_teams():
    with pytest.raises(SpecError) as err:
        onboarding_team(ENTERPRISE, "nope")
    assert ("use one of: applied-research, foundation-models, inference-platform, recommendations, speech"
            in str(err.value))
