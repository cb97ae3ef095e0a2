"""One declaration per governed field: emit, compare, describe and import from the same table.

Each governed object that reaches an emitter (a team's ComputeQuota, the cluster policy, an instance group, an
access entry, a Pod Identity association, an add-on) is a :class:`Table` of :class:`Field` rows. A row names the
API member (dotted, in the AWS API's member names, which CloudFormation shares for SageMaker), the plan accessor
that gives its value, the spec path it comes from, the value the service assumes when the member is absent, a
label in words, and how ``import`` maps a live value back onto the spec.

From these tables alone:

- :func:`emit` builds the API/CloudFormation property dict (the native resources, the custom resource and
  ``drift``'s expected state all use it, so deploy and drift cannot disagree); a row's ``deploy`` names the value
  the template holds where it is a deploy-time stand-in for the planned one (the EKS cluster's ARN as a reference);
- :func:`compare` lists the differences between a planned object and the live one (``drift``);
- :func:`imported` maps a live object back onto spec values (``import``);
- the label and spec path of a row name the change for ``drift``'s text; ``plan/views.py`` holds the governance
  view (``diff``, ``explain``) and a test checks that every spec path a row here reads is in a view.

Keep this module free of CDK: deploy-time values (an ARN known only at deploy) are passed to :func:`emit` as
``context``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional

__all__ = ["Field", "Table", "Difference", "emit", "compare", "imported", "member_value", "leaf_members"]

_ABSENT: Any = object()


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Field:
    """One governed member of an object.

    ``get(part)`` gives the planned value; ``None`` leaves the member out of the emitted properties. ``context``
    fields (``get`` is None) take their value from :func:`emit`'s ``context`` by ``member`` (deploy-time values).
    ``deploy(part, context)``, where set, gives what :func:`emit` writes instead of the planned value: a deploy-time
    reference that stands for it, or one that applies only to some parts (drift compares the planned value).
    """

    member: str  # dotted API member ("ComputeQuotaConfig.PreemptTeamTasks")
    label: str  # in words, for drift's text and the docs ("preemption of the team's own tasks")
    spec: str  # the spec path it comes from, relative to the object's own path ("preemptTeamTasks"); "" derived
    get: Optional[Callable[[Any], Any]] = None
    plan_fields: tuple[str, ...] = ()  # attributes of the plan part the accessor reads (completeness test)
    default: Any = None  # the service's value where the live member is absent (None: no default)
    keyed_by: Optional[str] = None  # a list of items matched by this member of each item (InstanceType, Name)
    strip_key: bool = True  # compare keyed items without their key member
    drift: Optional[str] = None  # None: compared with the live state; else why it is not (deploy-time, unread)
    live_member: Optional[Callable[[Mapping[str, Any]], tuple[str, Any]]] = None  # (member, value) on the live side
    when: Optional[Callable[[Any], bool]] = None  # compared only when this holds for the planned part
    after: Optional[str] = None  # skipped when the named member of the same table already differs
    to_spec: Optional[Callable[[Any], Any]] = None  # import: live value -> spec value (None: see ``imports``)
    imports: Optional[str] = None  # why import does not map it (None with to_spec: it does)
    same: Optional[Callable[[Any, Any, Mapping[str, Any]], bool]] = None  # equality given the context
    unit: str = ""  # after a value in words ("%")
    deploy: Optional[Callable[[Any, Mapping[str, Any]], Any]] = None  # emit: the written value, given the context

    def planned(self, part: Any, context: Mapping[str, Any]) -> Any:
        if self.get is None:
            return context.get(self.member)
        return self.get(part)

    def emitted(self, part: Any, context: Mapping[str, Any]) -> Any:
        """What :func:`emit` writes: ``deploy``'s value where the row has one, else the planned value."""
        if self.deploy is not None:
            return self.deploy(part, context)
        return self.planned(part, context)


@dataclass(frozen=True)
class Table:
    """The governed fields of one kind of object, in the order the API lists them."""

    kind: str  # the AWS resource type's short name, as drift reports it (LIVE.md)
    label: str  # in words ("compute quota")
    spec: str  # where one object comes from in the spec ("teams[]", "cluster.instanceGroups[]")
    fields: tuple[Field, ...]
    exempt: Mapping[str, str] = field(default_factory=dict)  # plan attributes not governed here, and why

    def row(self, member: str) -> Field:
        for f in self.fields:
            if f.member == member:
                return f
        raise KeyError(f"{self.kind} has no row {member!r}")


@dataclass(frozen=True)
class Difference:
    """One member that differs: ``field`` in the API's member names (``ComputeQuotaResources[ml.p5.48xlarge]``)."""

    field: str
    expected: Any
    actual: Any
    row: Field


def member_value(obj: Mapping[str, Any], member: str, default: Any = None) -> Any:
    """The value at a dotted member path, ``default`` where any step is absent."""
    current: Any = obj
    for step in member.split("."):
        if not isinstance(current, Mapping) or step not in current:
            return default
        current = current[step]
    return current


def _put(out: dict[str, Any], member: str, value: Any) -> None:
    steps = member.split(".")
    for step in steps[:-1]:
        out = out.setdefault(step, {})
    out[steps[-1]] = value


def emit(table: Table, part: Any, context: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The object's properties, in table order; members whose emitted value is None are left out."""
    out: dict[str, Any] = {}
    for f in table.fields:
        value = f.emitted(part, context or {})
        if value is not None:
            _put(out, f.member, value)
    return out


def leaf_members(props: Mapping[str, Any], prefix: str = "") -> Iterable[str]:
    """Every member path of a property dict down to scalars or lists (the completeness test walks them)."""
    for key, value in props.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            yield from leaf_members(value, path + ".")
        else:
            yield path


def _keyed(items: Any, key: str, strip: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        if not isinstance(item, Mapping) or key not in item:
            continue
        body = {k: v for k, v in sorted(item.items()) if v is not None and not (strip and k == key)}
        out[str(item[key])] = body if strip else dict(item)
    return out


def _compare_keyed(f: Field, member: str, expected: Any, actual: Any) -> list[Difference]:
    assert f.keyed_by is not None
    e_items, a_items = _keyed(expected, f.keyed_by, f.strip_key), _keyed(actual, f.keyed_by, f.strip_key)
    out = []
    for key in sorted(set(e_items) | set(a_items)):
        e, a = e_items.get(key), a_items.get(key)
        if e == a:
            continue
        base = f"{member}[{key}]"
        differing = [k for k in (e or {}) if e and a and e.get(k) != a.get(k)]
        if e and a and set(e) == set(a) and len(differing) == 1:
            out.append(Difference(f"{base}.{differing[0]}", e[differing[0]], a[differing[0]], f))
        else:
            out.append(Difference(base, e, a, f))
    return out


def compare(table: Table, part: Any, live: Mapping[str, Any],
            context: Optional[Mapping[str, Any]] = None) -> list[Difference]:
    """Every governed member where the live object differs from the planned one, in table order.

    A live member that is absent counts as the row's ``default`` (the value the service applies). A row with a
    ``drift`` reason is not compared; nor is a row whose ``when`` does not hold, nor one whose ``after`` member
    already differs (a changed sharing strategy is one change, not also a changed borrow limit).
    """
    out: list[Difference] = []
    differing: set[str] = set()
    for f in table.fields:
        if f.drift is not None or (f.when is not None and not f.when(part)):
            continue
        if f.after is not None and f.after in differing:
            continue
        expected = f.planned(part, context or {})
        if f.live_member is not None:
            member, actual = f.live_member(live)
        else:
            member, actual = f.member, member_value(live, f.member, _ABSENT)
        if actual is _ABSENT:
            actual = f.default
        if expected is None and f.default is not None:
            expected = f.default
        if f.keyed_by is not None:
            found = _compare_keyed(f, member, expected, actual)
        else:
            equal = f.same(expected, actual, context or {}) if f.same is not None else _same(expected, actual)
            found = [] if equal else [Difference(member, expected, actual, f)]
        if found:
            differing.add(f.member)
        out += found
    return out


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        return list(expected) == list(actual)
    if not expected and not actual and expected in (None, [], (), {}) and actual in (None, [], (), {}):
        return True
    return expected == actual


def imported(table: Table, live: Mapping[str, Any]) -> dict[str, Any]:
    """Spec values (spec path relative to the object -> value) that ``import`` reads off a live object."""
    out: dict[str, Any] = {}
    for f in table.fields:
        if f.to_spec is None:
            continue
        if f.live_member is not None:
            member, value = f.live_member(live)
            value = member_value(live, member, _ABSENT) if value is None else value
        else:
            value = member_value(live, f.member, _ABSENT)
        if value is _ABSENT:
            continue
        mapped = f.to_spec(value)
        if mapped is not None:
            out[f.spec] = mapped
    return out
