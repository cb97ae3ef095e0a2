"""The live Slurm accounting as ``SlurmState``: ``sacctmgr dump CLUSTER`` for accounts and user associations, and
``sacctmgr -P show qos`` for the QOS (dump files hold QOS lines only in releases after 25.05; 22.05's has none).

What to run on the controller (the commands ``hyperpod-gov drift --slurm-dump`` asks for)::

    sacctmgr dump CLUSTER file=accounting.cfg
    sacctmgr -P show qos format=name,description,priority,grptres,preempt,preemptmode,flags > qos.txt

``parse_dump(text)`` and ``parse_qos(text)`` read them; ``live_state`` combines both; ``governed(state, org)`` keeps
the part hyperpod-gov manages (the organisation's account tree and the QOS it describes as its own), the part
``model.desired`` describes. Bad input raises ``DumpError`` with the line, what is wrong and what to run instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Optional

from ..plan.slurm import ROOT_ACCOUNT, Tres
from .model import Account, Qos, SlurmState, User

QOS_FORMAT = "name,description,priority,grptres,preempt,preemptmode,flags"
DUMP_COMMAND = "sacctmgr dump CLUSTER file=FILE"
QOS_COMMAND = f"sacctmgr -P show qos format={QOS_FORMAT}"
_LINE = re.compile(r"^(?P<kind>Cluster|Parent|Account|User|QOS)\s+-\s+(?P<rest>.*)$")
# TRES amounts sacctmgr prints with a unit (mem=64G); Slurm counts memory in megabytes.
_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 ** 2, "P": 1024 ** 3}


class DumpError(ValueError):
    """A dump or QOS listing this parser cannot read: where, what, and the command that writes a readable one."""

    def __init__(self, source: str, line: int, problem: str, fix: str):
        self.source, self.line, self.problem, self.fix = source, line, problem, fix
        super().__init__(f"{source}:{line}: {problem}; {fix}")


@dataclass(frozen=True)
class _Entry:
    kind: str
    name: str
    options: dict[str, str]  # key (lowercase) -> value, quotes removed


def _split_options(text: str, source: str, number: int) -> tuple[str, dict[str, str]]:
    """``'name':Key=value:Key='quoted: value'`` -> name and options; ':' inside quotes belongs to the value."""
    fields: list[str] = []
    current, quoted = [], False
    for ch in text:
        if ch == "'":
            quoted = not quoted
        elif ch == ":" and not quoted:
            fields.append("".join(current))
            current = []
            continue
        current.append(ch)
    if quoted:
        raise DumpError(source, number, f"unbalanced quote in {text!r}", f"write the file again with {DUMP_COMMAND}")
    fields.append("".join(current))
    name = _unquote(fields[0].strip())
    options = {}
    for field in fields[1:]:
        key, sep, value = field.partition("=")
        if not sep:
            raise DumpError(source, number, f"option {field!r} has no '='", f"write the file again with {DUMP_COMMAND}")
        options[key.strip().lower()] = _unquote(value.strip())
    return name, options


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    return value


def tres(text: str) -> Tres:
    """``node=2,mem=64G,gres/gpu=8`` -> ``(("gres/gpu", 8), ("mem", 65536), ("node", 2))``; ``-1`` entries (no
    limit) are dropped, memory is in megabytes."""
    out = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        key, _, value = item.partition("=")
        unit = value[-1:].upper()
        if unit in _UNITS:
            amount = int(float(value[:-1]) * _UNITS[unit])
        else:
            amount = int(value)
        if amount != -1:
            out[key.lower()] = amount
    return tuple(sorted(out.items()))


def _csv(text: Optional[str]) -> tuple[str, ...]:
    return tuple(sorted({v.strip().lower() for v in (text or "").split(",") if v.strip()}))


def _int(options: dict[str, str], key: str, source: str, number: int) -> Optional[int]:
    if key not in options or options[key] == "":
        return None
    try:
        return int(options[key])
    except ValueError:
        raise DumpError(source, number, f"{key}={options[key]!r} is not a number",
                        f"write the file again with {DUMP_COMMAND}") from None


def _qos_of(name: str, options: dict[str, str], source: str, number: int) -> Qos:
    mode = (options.get("preemptmode") or "").upper()
    return Qos(
        name=name.lower(),
        description=options.get("description", ""),
        priority=_int(options, "priority", source, number) or 0,
        grp_tres=tres(options.get("grptres", "")),
        preempt=_csv(options.get("preempt")),
        preempt_mode=None if mode in ("", "CLUSTER", "OFF") else mode,
        flags=tuple(sorted({f.strip() for f in options.get("flags", "").split(",") if f.strip()})),
    )


def parse_dump(text: str, source: str = "dump") -> SlurmState:
    """Accounts, user associations (and QOS lines, where the release writes them) of one ``sacctmgr dump``."""
    cluster: Optional[str] = None
    parent: Optional[str] = None
    accounts: dict[str, Account] = {}
    users: dict[tuple[str, str], User] = {}
    qos: dict[str, Qos] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            raise DumpError(source, number, f"{line[:60]!r} is not a line of a sacctmgr dump",
                            f"give the file {DUMP_COMMAND} writes")
        kind = m["kind"]
        name, options = _split_options(m["rest"], source, number)
        if kind == "Cluster":
            if cluster is not None:
                raise DumpError(source, number, f"a second cluster ({name!r} after {cluster!r})",
                                "dump one cluster per file")
            cluster = name.lower()
        elif kind == "Parent":
            parent = name.lower()
        elif kind == "QOS":
            qos[name.lower()] = _qos_of(name, options, source, number)
        elif parent is None:
            raise DumpError(source, number, f"{kind} {name!r} comes before any 'Parent - ' line",
                            f"give the whole file {DUMP_COMMAND} writes")
        elif kind == "Account":
            accounts[name.lower()] = Account(
                name=name.lower(), parent=parent, description=options.get("description", ""),
                organization=options.get("organization", ""),
                fairshare=_int(options, "fairshare", source, number) or 1,
                grp_tres=tres(options.get("grptres", "")), grp_jobs=_int(options, "grpjobs", source, number),
                qos=_csv(options.get("qos")), default_qos=(options.get("defaultqos") or None))
        else:
            users[(name, parent)] = User(name, parent, (options.get("defaultaccount") or "").lower())
    if cluster is None:
        raise DumpError(source, 1, "no 'Cluster - ' line", f"give the file {DUMP_COMMAND} writes")
    return SlurmState(accounts=_ordered(accounts.values()), qos=tuple(sorted(qos.values())),
                      users=tuple(sorted(users.values())), cluster=cluster)


def parse_qos(text: str, source: str = "qos") -> tuple[Qos, ...]:
    """``sacctmgr -P show qos`` (with its header line, any columns including name) or ``-nP`` with exactly
    ``format=name,description,priority,grptres,preempt,preemptmode,flags``."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        return ()
    first = [c.strip().lower() for c in lines[0][1].split("|")]
    if "name" in first and not any(c and c[0].isdigit() for c in first if c != "name"):
        columns, rows = first, lines[1:]
    else:
        columns, rows = QOS_FORMAT.split(","), lines
    aliases = {"preempt mode": "preemptmode", "descr": "description"}
    columns = [aliases.get(c, c) for c in columns]
    out = {}
    for number, line in rows:
        cells = line.split("|")
        if cells and cells[-1] == "" and len(cells) == len(columns) + 1:
            cells = cells[:-1]  # -P ends each line with '|' in some releases
        if len(cells) != len(columns):
            raise DumpError(source, number, f"{len(cells)} columns, expected {len(columns)} ({','.join(columns)})",
                            f"list the QOS with: {QOS_COMMAND}")
        row = dict(zip(columns, cells))
        out[row["name"].lower()] = _qos_of(row["name"], row, source, number)
    return tuple(sorted(out.values()))


def live_state(dump_text: str, qos_text: Optional[str] = None, *, dump_source: str = "dump",
               qos_source: str = "qos") -> SlurmState:
    """The dump's accounts and users with the QOS of ``qos_text`` (or the dump's own QOS lines when not given)."""
    state = parse_dump(dump_text, dump_source)
    if qos_text is not None:
        state = replace(state, qos=parse_qos(qos_text, qos_source))
    return state


def _ordered(accounts: Iterable[Account]) -> tuple[Account, ...]:
    """Parents before children, then by name (``SlurmState.accounts``' order)."""
    by_name = {a.name: a for a in accounts}

    def depth(a: Account) -> int:
        d, at = 0, a
        while at.parent in by_name and d <= len(by_name):
            at, d = by_name[at.parent], d + 1
        return d

    return tuple(sorted(by_name.values(), key=lambda a: (depth(a), a.name)))


def governed(state: SlurmState, org: str) -> SlurmState:
    """The part of ``state`` hyperpod-gov manages for organisation ``org``: the accounts under ``root`` from
    ``org`` down, their users, and the QOS whose description starts with ``'<org>: '`` (how accounting.sh marks
    its own)."""
    by_name = {a.name: a for a in state.accounts}
    org = org.lower()

    def under(name: str) -> bool:
        hops = 0
        while name in by_name and hops <= len(by_name):
            if name == org:
                return True
            name, hops = by_name[name].parent, hops + 1
        return False

    if org not in by_name or by_name[org].parent != ROOT_ACCOUNT:
        return replace(state, accounts=(), users=(), qos=())
    accounts = tuple(a for a in state.accounts if under(a.name))
    names = {a.name for a in accounts}
    return replace(state, accounts=accounts, users=tuple(u for u in state.users if u.account in names),
                   qos=tuple(q for q in state.qos if q.description.startswith(f"{org}: ")))
