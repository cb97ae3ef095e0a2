"""The MultiKueue worker credential's Lambda functions (docs/fleet.md, "The worker credential").

``mint``, in each worker's account: a bounded TokenRequest token for the worker's MultiKueue service account, the
kubeconfig around it, written as the new version of the worker's Secrets Manager secret. ``copy``, in the
manager's account: each worker's published kubeconfig applied on the manager as ``kueue-system/<worker>-kubeconfig``.

Both run on an EventBridge Scheduler schedule (every 8 hours; an error fails the invocation, so it shows in the
function's Errors metric) and once at deploy as a CloudFormation custom resource (the event has a
``RequestType``; the answer goes to its ``ResponseURL``). At deploy, the copy reports a worker secret that does not
exist or cannot be read yet and leaves it to the schedule: the worker's stack may deploy after the manager's.

The steps are ``kube_credential`` (hyperpod_gov/live/kube_credential.py, copied beside this file when the asset is
built): the standard library and boto3, nothing else. Settings come from the environment the stack sets.
"""

from __future__ import annotations

import json
import logging
import os
import urllib.request
from typing import Any, Callable, Optional

import boto3
from botocore.exceptions import BotoCoreError, ClientError

import kube_credential as steps

LOG = logging.getLogger(__name__)
LOG.setLevel(logging.INFO)
# GetSecretValue of a worker secret not there yet: no secret, or no version (ResourceNotFoundException); another
# account's secret that does not exist yet, or whose resource policy is not deployed yet (AccessDeniedException).
NOT_YET = ("ResourceNotFoundException", "AccessDeniedException")

Clients = Callable[..., Any]  # (service, region=None) -> a boto3 client
Connect = Callable[[dict, Any], steps.Request]  # (DescribeCluster's cluster, sts client) -> a request


def _clients(service: str, region: Optional[str] = None) -> Any:
    return boto3.client(service, region_name=region) if region else boto3.client(service)


def connect_eks(cluster: dict, sts: Any) -> steps.Request:
    """The EKS API at the cluster's endpoint, trusting its CA, with a token of this function's role."""
    return steps.HttpKube(cluster.get("endpoint") or "", steps.eks_token(sts, cluster["name"]),
                          (cluster.get("certificateAuthority") or {}).get("data") or "")


# What the entry points reach AWS and the cluster with (a test replaces them).
CLIENTS: Clients = _clients
CONNECT: Connect = connect_eks


def _cluster(clients: Optional[Clients], name: str, connect: Optional[Connect]) -> tuple[dict, steps.Request]:
    clients, connect = clients or CLIENTS, connect or CONNECT
    described = clients("eks").describe_cluster(name=name)["cluster"]
    return described, connect(described, clients("sts"))


def run_mint(env: dict[str, str], clients: Optional[Clients] = None,
             connect: Optional[Connect] = None) -> dict[str, Any]:
    """Mint the worker's token and publish its kubeconfig. Raises on any failure."""
    described, request = _cluster(clients, env["EKS_CLUSTER"], connect)
    clients = clients or CLIENTS
    minted = steps.mint(request, env["WORKER"], described, namespace=env["NAMESPACE"],
                        service_account=env["SERVICE_ACCOUNT"],
                        seconds=int(env.get("TOKEN_SECONDS") or steps.TOKEN_SECONDS))
    version = steps.publish(clients("secretsmanager"), env["SECRET_ID"], minted)
    LOG.info("worker %s: published version %s, token expires %s", minted.worker, version, minted.expires)
    return {"worker": minted.worker, "versionId": version, "expires": minted.expires}


def run_copy(env: dict[str, str], clients: Optional[Clients] = None, connect: Optional[Connect] = None, *,
             tolerate_missing: bool = False) -> dict[str, Any]:
    """Copy every worker's published kubeconfig onto the manager. Each worker is tried; then a failure raises,
    except, with ``tolerate_missing``, a secret not there yet (reported under ``waiting``)."""
    _, request = _cluster(clients, env["EKS_CLUSTER"], connect)
    clients = clients or CLIENTS
    installed, waiting, failed = [], [], []
    for w in json.loads(env["WORKERS"]):
        try:
            text = steps.published(clients("secretsmanager", w["region"]), w["secretArn"])
            steps.apply_secret(request, steps.secret_manifest(w["kubeconfigSecret"], env["KUBECONFIG_KEY"], text,
                                                              env["NAMESPACE"]))
            installed.append(w["worker"])
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            what = f"worker {w['worker']}: {w['secretArn']}: {code} ({exc})"
            (waiting if tolerate_missing and code in NOT_YET else failed).append(what)
        except (BotoCoreError, steps.KubeRequestError, ValueError) as exc:
            failed.append(f"worker {w['worker']}: {exc}")
    for line in waiting:
        LOG.warning("not published yet, left to the schedule: %s", line)
    if failed:
        raise RuntimeError("; ".join(failed))
    LOG.info("installed the kubeconfig of %s", ", ".join(installed) or "no worker")
    return {"installed": installed, "waiting": waiting}


def respond(event: dict[str, Any], status: str, reason: str, data: Optional[dict[str, Any]] = None) -> None:
    """The custom resource's answer to CloudFormation (a PUT of the response object to the presigned URL)."""
    body = json.dumps({"Status": status, "Reason": reason[:3000],
                       "PhysicalResourceId": event.get("PhysicalResourceId") or event["LogicalResourceId"],
                       "StackId": event["StackId"], "RequestId": event["RequestId"],
                       "LogicalResourceId": event["LogicalResourceId"], "Data": data or {}}).encode()
    put = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                 headers={"Content-Type": "", "Content-Length": str(len(body))})
    with urllib.request.urlopen(put, timeout=steps.REQUEST_TIMEOUT) as answer:  # noqa: S310 (CloudFormation's URL)
        answer.read()


def _handle(event: dict[str, Any], run: Callable[[bool], dict[str, Any]]) -> dict[str, Any]:
    if "RequestType" not in event:  # the schedule
        return run(False)
    if event["RequestType"] == "Delete":  # nothing to undo: the secret and the Secret outlive the function
        respond(event, "SUCCESS", "nothing to delete")
        return {}
    try:
        result = run(True)
    except Exception as exc:  # every failure answers CloudFormation, or the stack would wait for an hour
        LOG.exception("deploy-time run failed")
        respond(event, "FAILED", f"{type(exc).__name__}: {exc}")
        return {}
    data = {k: ", ".join(v) if isinstance(v, list) else v for k, v in result.items()}
    respond(event, "SUCCESS", "; ".join(result.get("waiting") or ()) or "done", data)
    return result


def mint(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """The minter's entry point (worker account)."""
    return _handle(event, lambda _deploy: run_mint(dict(os.environ)))


def copy(event: dict[str, Any], context: Any = None) -> dict[str, Any]:
    """The copier's entry point (manager account)."""
    return _handle(event, lambda deploy: run_copy(dict(os.environ), tolerate_missing=deploy))
