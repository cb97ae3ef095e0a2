"""The fleet example as data, for the fleet tests to change one thing at a time."""

from __future__ import annotations

import copy

import pytest
import yaml

from tests.conftest import EXAMPLES

FLEET = yaml.safe_load((EXAMPLES / "fleet.yaml").read_text())


@pytest.fixture
def fleet_data():
    """A fresh copy of examples/fleet.yaml's data."""
    return copy.deepcopy(FLEET)


def cluster_index(data, name):
    return next(i for i, c in enumerate(data["clusters"]) if c["name"] == name)
