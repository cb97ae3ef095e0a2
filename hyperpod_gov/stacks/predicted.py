"""Templates predicted while the app is built, so that the template check takes them on the core the build leaves idle.

A synth is Python and jsii's Node.js taking turns, so while the app is built one core is mostly idle; the template
check (``hyperpod_gov.template_checks``) can only take a template once CDK has written it, at the end, and at 300
teams it was still checking for 3 to 4 s after the synth, alone. A teams or access stack whose resources and
outputs are all plain-data fragments (``hyperpod_gov.constructs.plain``) is, as a template, those fragments as
CDK renders them, the stack's description, tags and the synthesizer's bootstrap check. :class:`Predictions` sends
each such stack, once it is built, to the check, which renders the template (``assets/template_checks/predict.js``)
and checks it; when CDK writes the same bytes, those findings answer the watch. A stack with anything else in it
is not sent; a template that comes out otherwise is checked as it is written, as before.

What Python gives the renderer that only jsii knows: each token in the fragments, as the stack will render it. A
token made by ``plain.ref`` renders as its ``Ref``. A reference to another stack's resource (the cluster's name,
the kubectl provider, the alarm topics' key) renders as CDK's ``Fn::ImportValue`` of the export it adds to that
stack (``export_name``: ``resolveExportedValue`` and ``generateExportName`` in aws-cdk-lib ``core/lib/stack.ts``);
a few jsii calls per token and app. ``tests/stacks/test_predicted_templates.py`` compares every rendered template
with the one CDK writes, byte for byte.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

import aws_cdk as cdk

from hyperpod_gov.constructs import plain
from hyperpod_gov.plan import Plan
from hyperpod_gov.template_checks import TemplateChecks, environment

from .base import SPEC_TAG, SpecStack

TOKEN = re.compile(r"\$\{Token\[[^\]]+\]\}")
DEFAULT_QUALIFIER = "hnb659fds"  # aws-cdk-lib DefaultStackSynthesizer.DEFAULT_QUALIFIER
QUALIFIER_CONTEXT = "@aws-cdk/core:bootstrapQualifier"
MIN_BOOTSTRAP_STACK_VERSION = 6  # DefaultStackSynthesizer's, for a stack without assets
MAX_EXPORT_NAME = 255


def bootstrap_check(qualifier: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameter and rule ``DefaultStackSynthesizer`` adds to each stack's template (``addBootstrapVersionRule``
    in aws-cdk-lib ``core/lib/stack-synthesizers/_shared.ts``)."""
    parameters = {"BootstrapVersion": {
        "Type": "AWS::SSM::Parameter::Value<String>",
        "Default": f"/cdk-bootstrap/{qualifier}/version",
        "Description": "Version of the CDK Bootstrap resources in this environment, automatically retrieved from SSM "
                       "Parameter Store. [cdk:skip]"}}
    old = [str(v) for v in range(1, MIN_BOOTSTRAP_STACK_VERSION)]
    rules = {"CheckBootstrapVersion": {"Assertions": [{
        "Assert": {"Fn::Not": [{"Fn::Contains": [old, {"Ref": "BootstrapVersion"}]}]},
        "AssertDescription": f"CDK bootstrap stack version {MIN_BOOTSTRAP_STACK_VERSION} required. Please run 'cdk "
                             "bootstrap' with a recent version of the CDK CLI."}]}}
    return parameters, rules


def export_name(producer: str, resolved: Any) -> str:
    """The name CDK gives the export of ``resolved`` (a ``Ref`` or ``Fn::GetAtt``) from the top-level stack named
    ``producer``: ``<stack>:`` and the unique id of ``Exports/Output<the JSON of it>``, at most 255 characters."""
    prefix = f"{producer}:"
    local = plain.logical_id(["Exports", "Output" + json.dumps(resolved, separators=(",", ":"))])
    return prefix + local[max(0, len(local) - MAX_EXPORT_NAME + len(prefix)):]


class Predictions:
    """Sends each stack offered (``offer``), once built, to ``checks`` as a predicted template; the fragments are
    recorded while it is open (a context manager, around the app's build)."""

    def __init__(self, checks: TemplateChecks, plan: Plan) -> None:
        self._checks = checks
        self._tags = [{"Key": SPEC_TAG, "Value": plan.name}, *({"Key": k, "Value": v} for k, v in plan.tags)]
        self._references: dict[str, tuple[str, Any]] = {}  # token -> (producing stack's name, its rendering there)
        self._bootstrap: Optional[tuple[dict[str, Any], dict[str, Any]]] = None
        self._recording = plain.recording()
        self._included: dict[str, list[dict[str, Any]]] = {}
        self.sent = 0

    def __enter__(self) -> "Predictions":
        self._included = self._recording.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._recording.__exit__(*exc)

    def offer(self, stack: SpecStack) -> bool:
        """Send ``stack`` (built) if it holds nothing but its fragments; whether it was."""
        fragments = self._included.pop(plain.stack_path(stack), [])
        if not fragments or len(stack.node.children) != len(fragments):  # a construct besides the includes
            return False
        tokens = self._tokens(stack, fragments)
        if tokens is None:
            return False
        if self._bootstrap is None:
            self._bootstrap = bootstrap_check(stack.node.try_get_context(QUALIFIER_CONTEXT) or DEFAULT_QUALIFIER)
        parameters, rules = self._bootstrap
        self._checks.predict({"description": stack.spec_description, "fragments": fragments, "tokens": tokens,
                              "tags": self._tags, "parameters": parameters, "rules": rules},
                             *environment(stack.environment))
        self.sent += 1
        return True

    def _tokens(self, stack: cdk.Stack, fragments: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
        """Each token in ``fragments`` -> its rendering in ``stack``; ``None`` if one is not a plain reference."""
        found: set[str] = set()
        for fragment in fragments:
            found.update(TOKEN.findall(fragment["text"]))
            for text in fragment["parameters"].values():
                found.update(TOKEN.findall(text))
        out: dict[str, Any] = {}
        name: Optional[str] = None  # the stack's, read from jsii once a reference needs it
        for token in found:
            if token in plain.REFS:
                out[token] = plain.REFS[token]
                continue
            reference = self._references.get(token) or self._reference(token)
            if reference is None:
                return None
            producer, resolved = reference
            name = name or stack.stack_name
            out[token] = resolved if producer == name else {"Fn::ImportValue": export_name(producer, resolved)}
        return out

    def _reference(self, token: str) -> Optional[tuple[str, Any]]:
        """The stack that ``token`` (a string that is one token) refers into and its rendering there, when it is
        a reference to a resource of a top-level stack; else ``None``."""
        fragments = cdk.Tokenization.reverse_string(token)
        first = fragments.first_token if fragments.length == 1 else None
        if not isinstance(first, cdk.Reference):
            return None
        producer = cdk.Stack.of(first.target)
        if producer.nested_stack_parent is not None:
            return None
        reference = (producer.stack_name, producer.resolve(first))
        self._references[token] = reference
        return reference
