"""Slurm governance as plain data and scripts: the desired state (``model``) and its rendering (``render``)."""

from .model import Account, ConfState, DataDir, Partition, PosixGroup, PosixUser, Qos, SlurmState, User, desired

__all__ = ["Account", "ConfState", "DataDir", "Partition", "PosixGroup", "PosixUser", "Qos", "SlurmState", "User", "desired"]
