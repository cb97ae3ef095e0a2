"""import's commented contract placeholder: it lists every key the guidance records for a connection that the APIs
do not hold, isolation and network path included, and uncommented it is a contract the spec accepts."""

from __future__ import annotations

import re

import yaml

from hyperpod_gov.spec.contract import Contract

from .test_import import console_cluster, imported


def _contract_block(text: str) -> str:
    """The first team's commented ``contract:`` block, uncommented (without its header comment)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "# contract:")
    block = []
    for line in lines[start + 1:]:
        m = re.match(r"\s*#   (.*)$", line)
        if not m:
            break
        block.append("  " + m.group(1))
    return "contract:\n" + "\n".join(block)


def test_the_contract_placeholder_names_isolation_and_network_path(tmp_path, capsys):
    code, out, err = imported(console_cluster(), tmp_path, capsys)
    assert code == 0, err
    text = out.read_text()
    assert "#   isolation: shared  # shared (default) | dedicated-nodes | dedicated-cluster" in text
    assert "#   networkPath: console-only  # a cluster.apiAccess entry (CIDR, sg-..., pl-...) or console-only" in text


def test_the_contract_placeholder_uncommented_is_a_valid_contract(tmp_path, capsys):
    code, out, err = imported(console_cluster(), tmp_path, capsys)
    assert code == 0, err
    data = yaml.safe_load(_contract_block(out.read_text()))["contract"]
    contract = Contract.model_validate(data)
    assert (contract.isolation, contract.network_path) == ("shared", "console-only")
