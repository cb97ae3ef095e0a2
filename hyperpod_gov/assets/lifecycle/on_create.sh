#!/bin/bash
# HyperPod (EKS) lifecycle script, run once on every instance when it is created.
# Shipped by hyperpod-gov and uploaded to the cluster's sagemaker-* bucket.
set -euxo pipefail

LOG_FILE="/var/log/provision/provisioning.log"
mkdir -p "$(dirname "$LOG_FILE")"
exec > >(tee -a "$LOG_FILE") 2>&1

echo "hyperpod-gov on_create: $(date -u +%FT%TZ) on $(hostname)"

# Put containerd and kubelet data on the instance store (or the secondary EBS
# volume) when HyperPod mounted one, so images and scratch data do not fill the
# root volume.
for dir in /opt/dlami/nvme /opt/sagemaker; do
  if mountpoint -q "$dir"; then
    mkdir -p "$dir/containerd" "$dir/kubelet"
    if [ -f /etc/containerd/config.toml ]; then
      sed -i "s|^root = .*|root = \"$dir/containerd\"|" /etc/containerd/config.toml
    fi
    echo "data root: $dir"
    break
  fi
done

echo "hyperpod-gov on_create: done"
