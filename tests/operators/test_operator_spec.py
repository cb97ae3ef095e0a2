"""cluster.operators in the spec and the plan: defaults, refusals (path, value, fix), what each installs."""

from __future__ import annotations

import copy
import json

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.operators import HYPERPOD_PYTORCH_JOB_FRAMEWORK
from hyperpod_gov.spec import SpecError, parse_spec, read_yaml
from tests.conftest import BASE, EXAMPLES, TODAY

ARN = "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh"


def _spec(**cluster):
    data = copy.deepcopy(BASE)
    data["cluster"].update(cluster)
    return data


def _messages(data) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    return [str(i) for i in info.value.issues]


def _existing(**cluster):
    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["cluster"]["existing"]["hyperPodClusterArn"] = ARN
    data["cluster"].update(cluster)
    return data


def test_the_default_is_the_training_operator_only():
    plan = build_plan(parse_spec(_spec(), today=TODAY))
    assert plan.cluster.operators == ("training",)
    assert [a.name for a in plan.operator_addons] == ["cert-manager", "amazon-sagemaker-hyperpod-training-operator"]
    assert plan.addon_versions["amazon-sagemaker-hyperpod-training-operator"] == "v1.0.1-eksbuild.1"
    assert plan.addon_versions["cert-manager"] == "v1.18.2-eksbuild.2"
    assert "amazon-sagemaker-spaces" not in plan.addon_versions


def test_spaces_brings_the_ebs_csi_driver_and_cert_manager_once():
    plan = build_plan(parse_spec(_spec(operators=["spaces", "training"]), today=TODAY))
    assert plan.cluster.operators == ("spaces", "training")
    assert [a.key for a in plan.operator_addons] == ["CertManager", "TrainingOperator", "EbsCsiDriver", "Spaces"]
    spaces = plan.operator_addons[-1]
    assert spaces.after == ("CertManager", "EbsCsiDriver")
    assert [(r.service_account, r.managed_policy) for r in spaces.roles] == [
        ("jupyter-k8s-controller-manager", "AmazonSageMakerSpacesControllerPolicy")]
    assert plan.addon_versions["amazon-sagemaker-spaces"] == "v0.2.1-eksbuild.1"
    assert plan.addon_versions["aws-ebs-csi-driver"] == "v1.48.0-eksbuild.2"  # pinned by default (docs/addons.md)


def test_inference_brings_its_csi_drivers_metrics_server_and_cert_manager_first():
    plan = build_plan(parse_spec(_spec(operators=["inference"]), today=TODAY))
    assert [a.key for a in plan.operator_addons] == [
        "CertManager", "MountpointS3CsiDriver", "FsxCsiDriver", "MetricsServer", "InferenceOperator"]
    inference = plan.operator_addons[-1]
    assert inference.after == ("CertManager", "MountpointS3CsiDriver", "FsxCsiDriver", "MetricsServer")
    assert [(r.namespace, r.service_account, r.via) for r in inference.roles] == [
        ("hyperpod-inference-system", "hyperpod-inference-controller-manager", "executionRoleArn"),
        ("hyperpod-inference-system", "aws-load-balancer-controller", "alb"),
        ("hyperpod-inference-system", "keda-operator", "keda")]
    assert {k: plan.addon_versions[k] for k in (
        "amazon-sagemaker-hyperpod-inference", "aws-mountpoint-s3-csi-driver", "aws-fsx-csi-driver",
        "metrics-server")} == {"amazon-sagemaker-hyperpod-inference": "v1.0.0-eksbuild.1",
                               "aws-mountpoint-s3-csi-driver": "v1.14.1-eksbuild.1",
                               "aws-fsx-csi-driver": "v1.6.0-eksbuild.1", "metrics-server": "v0.7.2-eksbuild.4"}
    assert "hyperpod-inference-system" in plan.strict_mode_namespaces


def test_no_operators_installs_no_operator_addon():
    plan = build_plan(parse_spec(_spec(operators=[]), today=TODAY))
    assert plan.operator_addons == ()
    assert "cert-manager" not in plan.addon_versions


@pytest.mark.parametrize("mode, queued", [("kueue", True), ("task-governance", True)])
def test_kueue_queues_hyperpod_pytorch_jobs_with_the_training_operator(mode, queued):
    data = _spec()
    data["scheduler"]["mode"] = mode
    config = json.loads(build_plan(parse_spec(data, today=TODAY)).kueue_config)
    assert config["integrations"]["externalFrameworks"] == [HYPERPOD_PYTORCH_JOB_FRAMEWORK]
    data["cluster"]["operators"] = []
    config = json.loads(build_plan(parse_spec(data, today=TODAY)).kueue_config)
    assert "externalFrameworks" not in config["integrations"]


def test_existing_cluster_installs_no_operator_unless_listed():
    assert build_plan(parse_spec(_existing(), today=TODAY)).operator_addons == ()
    plan = build_plan(parse_spec(_existing(operators=["training"]), today=TODAY))
    assert [a.name for a in plan.operator_addons] == ["cert-manager", "amazon-sagemaker-hyperpod-training-operator"]
    assert {"cert-manager", "amazon-sagemaker-hyperpod-training-operator"} <= set(plan.addon_versions)


REFUSALS = [
    ("duplicate", _spec(operators=["training", "training"]),
     ["HPG-D005", "cluster.operators[1]", "'training'", "names an operator twice", "list each operator once"]),
    ("inference_on_existing", _existing(operators=["training", "inference"]),
     ["HPG-D005", "cluster.operators[1]", "'inference'", "existing cluster", "IAM OIDC provider",
      "aws-mountpoint-s3-csi-driver", "subnets", "remove inference from cluster.operators"]),
    ("old_inference", _spec(operators=["inference"], addonVersions={"inferenceOperator": "v0.9.0-eksbuild.1"}),
     ["cluster.addonVersions.inferenceOperator", "'v0.9.0-eksbuild.1'", "older than v1.0.0-eksbuild.1",
      "use v1.0.0-eksbuild.1 or later"]),
    ("old_metrics_server", _spec(addonVersions={"metricsServer": "v0.7.1-eksbuild.1"}),
     ["cluster.addonVersions.metricsServer", "older than v0.7.2-eksbuild.4", "use v0.7.2-eksbuild.4 or later"]),
    ("unknown", _spec(operators=["notebooks"]), ["cluster.operators[0]", "'notebooks'", "training", "spaces"]),
    ("old_task_governance", _spec(addonVersions={"taskGovernance": "v1.2.0-eksbuild.1"}),
     ["HPG-D005", "cluster.addonVersions.taskGovernance", "'v1.2.0-eksbuild.1'", "older than v1.3.0-eksbuild.1",
      "use v1.3.0-eksbuild.1 or later"]),
    ("old_cert_manager", _spec(addonVersions={"certManager": "v1.17.0-eksbuild.1"}),
     ["cluster.addonVersions.certManager", "older than v1.18.2", "use v1.18.2-eksbuild.2 or later"]),
    ("old_ebs_csi", _spec(addonVersions={"ebsCsiDriver": "v1.40.0-eksbuild.1"}),
     ["cluster.addonVersions.ebsCsiDriver", "older than v1.47.0", "use v1.47.0 or later"]),
    ("existing_pin_without_operators", _existing(addonVersions={"trainingOperator": "v1.0.1-eksbuild.1"}),
     ["HPG-D005", "cluster.addonVersions.trainingOperator", "no operator is installed unless cluster.operators",
      "list the operators to install in cluster.operators"]),
]


@pytest.mark.parametrize("data, expected", [c[1:] for c in REFUSALS], ids=[c[0] for c in REFUSALS])
def test_refused_operator_settings_name_path_value_and_fix(data, expected):
    found = [m for m in _messages(data) if all(e in m for e in expected)]
    assert found, _messages(data)


def test_kueue_mode_with_the_training_operator_is_accepted():
    data = _spec()
    data["scheduler"]["mode"] = "kueue"  # the operator does not need task governance (Kueue is optional)
    assert parse_spec(data, today=TODAY).cluster.operators == ("training",)


def _platform_policies(data) -> dict[str, dict]:
    from hyperpod_gov.charts import render

    objs = render(build_plan(parse_spec(data, today=TODAY))).cluster
    return {o["metadata"]["namespace"]: o for o in objs if o["kind"] == "NetworkPolicy"}


def test_strict_mode_leaves_the_platform_namespaces_their_traffic():
    policies = _platform_policies(_spec(operators=["training", "spaces"]))
    assert sorted(policies) == ["amazon-cloudwatch", "aws-hyperpod", "cert-manager", "jupyter-k8s-system",
                                "kube-system", "kueue-system"]
    assert policies["kube-system"]["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"],
                                               "ingress": [{}], "egress": [{}]}
    assert sorted(_platform_policies(_spec(operators=[]))) == ["amazon-cloudwatch", "kube-system", "kueue-system"]


def test_no_platform_policy_on_an_existing_cluster_whose_cni_is_not_ours():
    assert _platform_policies(_existing(operators=["training"])) == {}


def test_the_docs_example_is_a_valid_cluster_block():
    import yaml

    from tests.conftest import ROOT

    page = (ROOT / "docs" / "operators.md").read_text()
    block = yaml.safe_load(page.split("```yaml\n", 1)[1].split("```", 1)[0])["cluster"]
    spec = parse_spec(_spec(**block), today=TODAY)
    assert spec.cluster.operators == ("training", "inference", "spaces")
    assert spec.cluster.addon_versions.spaces == "v0.2.1-eksbuild.1"
    assert spec.cluster.addon_versions.metrics_server == "v0.7.2-eksbuild.4"


def test_a_kubernetes_version_aws_does_not_list_for_the_training_operator_is_a_warning():
    from hyperpod_gov.spec.rules import check_spec

    spec = parse_spec(_spec(kubernetesVersion="1.34"), today=TODAY)  # a warning: accepted without --strict
    (issue,) = [i for i in check_spec(spec, today=TODAY) if i.rule == "HPG-D006"]
    text = str(issue)
    assert all(e in text for e in ("cluster.kubernetesVersion", "'1.34'", "(1.28", "describe-addon-versions",
                                   "use 1.33"))
    with pytest.raises(SpecError):
        parse_spec(_spec(kubernetesVersion="1.34"), today=TODAY, strict=True)
    assert not [i for i in check_spec(parse_spec(_spec(kubernetesVersion="1.34", operators=[]), today=TODAY),
                                      today=TODAY) if i.rule == "HPG-D006"]


def test_explain_lists_the_operators_and_their_pinned_addons():
    from hyperpod_gov.explain import explain

    text = " ".join(explain(build_plan(parse_spec(_spec(operators=["spaces"]), today=TODAY))).split())  # wrapped at 100
    assert ("Operators: spaces (add-ons: cert-manager v1.18.2-eksbuild.2, aws-ebs-csi-driver v1.48.0-eksbuild.2, "
            "amazon-sagemaker-spaces v0.2.1-eksbuild.1)") in text
    assert "Operators: none installed by hyperpod-gov" in explain(build_plan(parse_spec(_spec(operators=[]),
                                                                                        today=TODAY)))
