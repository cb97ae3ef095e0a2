"""Plain-data resources in one jsii call: a template fragment written in Python, included with ``CfnInclude``.

A construct that is one L1 resource under a scope of its own costs two jsii objects (the scope and the resource),
each a request to jsii's Node.js process and back; at 300 teams the alarms, dashboards and access entries were
about a quarter of a synth's requests. Where the properties are plain data, :class:`Fragment` collects the
resources as CloudFormation JSON, each under the logical id CDK would give it at the construct path it had
(:func:`logical_id`, CDK's ``makeUniqueId``), and :meth:`Fragment.include` adds them all with one
``CfnInclude``. The included resources are the L1 classes' own (``CfnInclude`` builds each type's L1 from its
properties), so the templates render as before, byte for byte; tags, cdk-nag and CDK's template check see them
like any other resource. What changes is the construct tree: the resources sit under the include, named by
their logical ids (``tree.json``, the assembly's metadata paths).

Deploy-time values go in as they are: a token's string (an ARN read from jsii) inside a property resolves when
the template is written, and a reference to a resource of the same fragment is ``{"Fn::GetAtt": [id, attr]}``
(:func:`get_att`), with :func:`join` for a string made of text and references.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Optional, Sequence

from aws_cdk import Fn, Stack, cloudformation_include as cfn_inc
from constructs import Construct

from ._nag import acknowledge

HIDDEN_ID = "Default"  # aws-cdk-lib core/lib/private/uniqueid.ts
HIDDEN_FROM_HUMAN_ID = "Resource"
MAX_HUMAN_LEN = 240
MAX_ID_LEN = 255
PATH_METADATA = "aws:cdk:path"
PATH_METADATA_CONTEXT = "aws:cdk:enable-path-metadata"
_NON_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


def logical_id(components: Sequence[str]) -> str:
    """The logical id CDK gives a resource at ``components`` (its construct path below its stack): aws-cdk-lib's
    ``makeUniqueId``: the path's ids without ``Default``; one id alone is that id's letters and digits, otherwise
    the ids without repeats (an id that ends the previous one) and without ``Resource``, then the first 8 hex
    digits of the MD5 of the path, upper case."""
    components = [c for c in components if c != HIDDEN_ID]
    if not components:
        raise ValueError("a logical id needs at least one construct id")
    if len(components) == 1:
        candidate = _NON_ALPHANUMERIC.sub("", components[0])
        if len(candidate) <= MAX_ID_LEN:
            return candidate
    digest = hashlib.md5("/".join(components).encode()).hexdigest()[:8].upper()
    kept: list[str] = []
    for c in components:
        if not kept or not kept[-1].endswith(c):
            kept.append(c)
    human = "".join(_NON_ALPHANUMERIC.sub("", c) for c in kept if c != HIDDEN_FROM_HUMAN_ID)
    return human[:MAX_HUMAN_LEN] + digest


# Tokens made by ``ref`` -> what they render as (in any stack): the predicted templates' tokens that need no jsii
# call (stacks/predicted.py).
REFS: dict[str, dict[str, str]] = {}


def ref(logical: str) -> str:
    """``Fn.ref(logical)``, remembered in ``REFS``."""
    token = Fn.ref(logical)
    REFS[token] = {"Ref": logical}
    return token


# While a synth predicts its templates (stacks/predicted.py): stack path -> the fragments included into that
# stack, in order, each {"text": the template file's JSON text, "parameters": its long texts}.
_included: Optional[dict[str, list[dict[str, Any]]]] = None


@contextmanager
def recording() -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Record each fragment included while the block runs, by stack path."""
    global _included
    _included = {}
    try:
        yield _included
    finally:
        _included = None


def get_att(logical: str, attribute: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [logical, attribute]}


def join(parts: Sequence[Any]) -> Any:
    """``parts`` (text and intrinsics) as CDK renders a string holding tokens: the text alone when there is no
    intrinsic, else ``Fn::Join`` with "" and adjacent texts merged."""
    merged: list[Any] = []
    for part in parts:
        if isinstance(part, str):
            if not part:
                continue
            if merged and isinstance(merged[-1], str):
                merged[-1] += part
                continue
        merged.append(part)
    if all(isinstance(p, str) for p in merged):
        return "".join(merged)
    return {"Fn::Join": ["", merged]}


class Fragment:
    """Resources collected for one ``CfnInclude`` below ``scope`` (whose path below its stack names them)."""

    def __init__(self, scope: Construct, *, stack: Optional[Stack] = None,
                 components: Optional[Sequence[str]] = None) -> None:
        """``stack`` and ``components`` (``scope``'s construct ids below it), when the caller knows them: then
        nothing is read from jsii but the stack's path, once per stack."""
        stack_path, self._path_metadata = _stack_facts(stack if stack is not None else Stack.of(scope))
        self._scope, self._stack_path = scope, stack_path
        if components is None:
            self.path: str = scope.node.path  # e.g. "acme-teams/ml-research/Monitoring"
            self.components: list[str] = _below(self.path, stack_path)
        else:
            self.components = list(components)
            self.path = "/".join([stack_path, *self.components])
        self.resources: dict[str, dict[str, Any]] = {}
        self.outputs: dict[str, dict[str, Any]] = {}

    def _logical_id(self, below: Sequence[str], taken: Mapping[str, Any], what: str) -> tuple[str, list[str]]:
        """The logical id at ``below`` (construct ids under the scope; a '/' in one is '--', as in ``constructs``)
        and those ids, unless ``taken`` has it."""
        ids = [c.replace("/", "--") for c in below]
        logical = logical_id([*self.components, *ids])
        if logical in taken:
            raise ValueError(f"{self.path}: two {what} at the logical id {logical}")
        return logical, ids

    def add(self, below: Sequence[str], type: str, properties: dict[str, Any], *,
            depends_on: Sequence[str] = (), delete: bool = False) -> str:
        """Add a resource of ``type`` at ``below`` (construct ids under the scope); returns its logical id.
        ``depends_on``: logical ids of this fragment's resources it comes after; ``delete``: the deletion and
        update-replace policies ``Delete`` (a ``CustomResource``'s default)."""
        logical, below = self._logical_id(below, self.resources, "resources")
        for dependency in depends_on:
            if dependency not in self.resources:
                raise ValueError(f"{self.path}: {logical} depends on {dependency}, which this fragment lacks")
        resource: dict[str, Any] = {"Type": type, "Properties": properties}
        if depends_on:
            resource["DependsOn"] = sorted(depends_on)
        if delete:
            resource["UpdateReplacePolicy"] = resource["DeletionPolicy"] = "Delete"
        if self._path_metadata:  # what the CDK CLI's synth (path metadata on) wrote at the resource's old path
            resource["Metadata"] = {PATH_METADATA: "/".join([self.path, *below])}
        self.resources[logical] = resource
        return logical

    def add_output(self, below: Sequence[str], value: Any, description: Optional[str] = None) -> str:
        """Add a stack output at ``below`` (a ``CfnOutput``'s construct path under the scope); its logical id."""
        logical, _ = self._logical_id(below, self.outputs, "outputs")
        self.outputs[logical] = {"Value": value, **({"Description": description} if description else {})}
        return logical

    def include(self, id: str) -> Optional[cfn_inc.CfnInclude]:
        """The resources and outputs in one ``CfnInclude`` named ``id`` under the scope (none: nothing is
        added)."""
        if not self.resources and not self.outputs:
            return None
        texts: dict[str, str] = {}
        resources = {k: _texts_out(r, texts) for k, r in self.resources.items()}
        template = {k: v for k, v in (("Parameters", {n: {"Type": "String"} for n in texts}),
                                      ("Resources", resources), ("Outputs", self.outputs)) if v}
        # dumps, not dump: json.dump streams through the pure-Python encoder (2.4 million calls at 300 teams)
        text = json.dumps(template, ensure_ascii=False, separators=(",", ":"))
        if texts and text.count(f'"{TEXT_PARAMETER}') != 2 * len(texts):  # a name of the fragment's own
            raise ValueError(f"{self.path}: the fragment uses the name {TEXT_PARAMETER}, kept for its long texts")
        if _included is not None:
            _included.setdefault(self._stack_path, []).append({"text": text, "parameters": texts})
        handle, name = tempfile.mkstemp(prefix="hyperpod-gov-fragment-", suffix=".json")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(text)
            # read while it is built
            return cfn_inc.CfnInclude(self._scope, id, template_file=name, parameters=texts or None)
        finally:
            os.unlink(name)


    def include_resources(self, id: str) -> cfn_inc.CfnInclude:
        """:meth:`include` for a fragment that holds something (a construct's own resources): the include."""
        include = self.include(id)
        if include is None:
            raise ValueError(f"{self.path}: nothing to include as {id}")
        return include


class Runs:
    """The plain resources of one scope in construct order. The resources added since the last construct that
    stays a construct (:meth:`flush`, called before making it) are one ``CfnInclude`` (``Plain``, ``Plain2``,
    ...), so that the template lists every resource where the constructs put it. A dependency on a resource of an
    earlier run is added once both are included (:meth:`depend`)."""

    def __init__(self, scope: Construct, *, stack: Stack, components: Sequence[str]) -> None:
        self._scope, self._stack, self._components = scope, stack, list(components)
        self._current: Optional[Fragment] = None
        self._runs: list[tuple[Optional[cfn_inc.CfnInclude], Fragment]] = []
        self._pending: list[tuple[str, str]] = []  # (logical id, the logical id of an earlier run it follows)
        self._acknowledged: dict[str, Sequence[tuple[str, str]]] = {}  # logical id -> findings

    @property
    def fragment(self) -> Fragment:
        """The run being collected."""
        if self._current is None:
            self._current = Fragment(self._scope, stack=self._stack, components=self._components)
        return self._current

    def depend(self, logical: str, on: str) -> None:
        """Have the resource just added at ``logical`` come after ``on``: its ``DependsOn`` within the run; for
        ``on`` in an earlier run, the dependency once this run is included."""
        if logical not in self.fragment.resources:
            raise ValueError(f"{logical} is not in the run being collected")
        if on in self.fragment.resources:
            resource = self.fragment.resources[logical]
            resource["DependsOn"] = sorted({*resource.get("DependsOn", ()), on})
            return
        self._holder(on)  # raises for an id no run has
        self._pending.append((logical, on))

    def acknowledge(self, logical: str, findings: Sequence[tuple[str, str]]) -> None:
        """Acknowledge ``(finding, reason)`` pairs for the resource at ``logical`` (``_nag.acknowledge``): on
        the ``CfnInclude`` that holds it, once per run and list of findings, when the run is included."""
        self._holder(logical)
        self._acknowledged[logical] = findings

    def flush(self) -> None:
        """Include the run being collected (if any)."""
        if self._current is None:
            return
        id = "Plain" if not self._runs else f"Plain{len(self._runs) + 1}"
        fragment, include = self._current, self._current.include(id)
        self._runs.append((include, fragment))
        self._current = None
        done: list[Sequence[tuple[str, str]]] = []
        for logical in list(self._acknowledged):
            if logical in fragment.resources:
                findings = self._acknowledged.pop(logical)
                if include is not None and not any(findings is d for d in done):
                    acknowledge(include, findings)
                    done.append(findings)
        for logical, on in [p for p in self._pending if self._included(p[0])]:
            self.resource(logical).add_resource_dependency(self.resource(on))
            self._pending.remove((logical, on))

    def resource(self, logical: str) -> Any:
        """The included resource at ``logical`` (``CfnResource``), read from jsii; its run must be flushed."""
        include = self._holder(logical)[0]
        if include is None:
            raise ValueError(f"{logical} is not included yet: flush its run first")
        return include.get_resource(logical)

    def _included(self, logical: str) -> bool:
        return any(logical in f.resources for _, f in self._runs)

    def _holder(self, logical: str) -> tuple[Optional[cfn_inc.CfnInclude], Fragment]:
        for run in self._runs:
            if logical in run[1].resources:
                return run
        if self._current is not None and logical in self._current.resources:
            return None, self._current
        raise ValueError(f"no run of {'/'.join(self._components)} has the resource {logical}")


def included(include: Optional[cfn_inc.CfnInclude], logical_ids: Mapping[str, str]) -> dict[str, Any]:
    """Key -> the resource ``include`` holds at ``logical_ids[key]`` (each read from jsii)."""
    if include is None:
        return {}
    return {key: include.get_resource(logical) for key, logical in logical_ids.items()}


# A property's text of at least LONG_TEXT characters (a manifest's JSON, a dashboard's body) goes to
# ``CfnInclude`` as the value of a template parameter of that name, which it puts where the fragment refers to it
# (``{"Ref": "HyperpodGovFragmentText0"}``) and leaves out of the template. ``cloudformation_include`` reads every
# template file through its YAML parser (30 to 80 ms for a 300 KB teams fragment, against about 1 ms for
# ``JSON.parse``); the parameters come through jsii's JSON channel.
TEXT_PARAMETER = "HyperpodGovFragmentText"
LONG_TEXT = 256
_INTRINSIC = re.compile(r"Ref$|Condition$|Fn::")


def _texts_out(resource: dict[str, Any], texts: dict[str, str]) -> dict[str, Any]:
    """``resource`` with each long text of its properties a reference to a parameter, added to ``texts``; texts
    inside an intrinsic function stay, but for the parts ``Fn::Join`` joins (the value a parameter takes is not
    parsed: ``Fn::Sub`` would not see the references in it)."""
    properties = resource.get("Properties")
    if not properties:
        return resource
    return {**resource, "Properties": _value_texts_out(properties, texts)}


def _value_texts_out(value: Any, texts: dict[str, str]) -> Any:
    kind = type(value)
    if kind is str:
        if len(value) < LONG_TEXT:
            return value
        name = f"{TEXT_PARAMETER}{len(texts)}"
        texts[name] = value
        return {"Ref": name}
    if kind is list:
        return [_value_texts_out(v, texts) for v in value]
    if kind is not dict:
        return value
    if len(value) == 1:
        (key, inner), = value.items()
        if key == "Fn::Join" and type(inner) is list and len(inner) == 2 and type(inner[1]) is list:
            return {key: [inner[0], [_value_texts_out(v, texts) for v in inner[1]]]}
        if _INTRINSIC.match(key):
            return value
    return {k: _value_texts_out(v, texts) for k, v in value.items()}


def _stack_facts(stack: Stack) -> tuple[str, bool]:
    """A stack's path and whether path metadata is on, read from jsii once per stack (kept on its proxy: Python
    holds one proxy a stack)."""
    facts = stack.__dict__.get("_hyperpod_gov_facts")
    if facts is None:
        facts = stack.__dict__["_hyperpod_gov_facts"] = (
            stack.node.path, bool(stack.node.try_get_context(PATH_METADATA_CONTEXT)))
    return facts


def stack_path(stack: Stack) -> str:
    """``stack``'s construct path (read from jsii once per stack)."""
    return _stack_facts(stack)[0]


def _below(path: str, stack_path: str) -> list[str]:
    if path == stack_path:
        return []
    if not path.startswith(stack_path + "/"):
        raise ValueError(f"{path} is not below its stack {stack_path}")
    return path[len(stack_path) + 1:].split("/")
