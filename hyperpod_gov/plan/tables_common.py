"""What several tables share (``tables.py``): the reasons members are not compared, and the ARN comparison."""

from __future__ import annotations

import re
from typing import Any, Mapping, Optional

_TAGS = ("the generated tags (hyperpod-gov:*, and the contract's on a quota), on every resource; describe calls do "
         "not return them")
_CLUSTER_NAME = "the cluster the object belongs to; the live object is read from it"
_DEPLOY_TIME = "a deploy-time reference to this cluster; the live object is read from it"
_GENERATED = "generated text that says which tool made it"


def same_arn(planned: Optional[str], live: Optional[str], context: Mapping[str, Any]) -> bool:
    """ARNs equal once the plan's partition (or its ``${partition}`` placeholder) is the live one
    (``context["partition"]``)."""
    if planned is None or live is None:
        return planned == live
    partition = context.get("partition", "aws")
    return re.sub(r"^arn:[^:]+:", f"arn:{partition}:", planned.replace("${partition}", partition)) == live
