"""A stand-in for ``sacctmgr`` that answers accounting.sh's read-backs from a JSON ``SlurmState`` (as real sacctmgr
22.05 prints them: memory with a unit suffix, lowercase preempt modes and organisations, 'cluster' for an unset
mode) and accepts every change without applying it, except that an added user gets its default account as
sacctmgr gives it. Lets the tests run accounting.sh without Slurm."""

from __future__ import annotations

import json
import os
import sys


def _tres(pairs) -> str:
    out = []
    for k, v in pairs:
        if k == "mem" and v % 1024 == 0:
            out.append(f"mem={v // 1024}G")
        else:
            out.append(f"{k}={v}")
    return ",".join(out)


def main(argv: list[str]) -> int:
    state = json.loads(open(os.environ["FAKE_SACCTMGR_STATE"]).read())
    if "show" not in argv:
        if argv[1:3] == ["add", "user"]:  # as sacctmgr does: a new user's default account is the first one added
            name = argv[3]
            account = next(a.split("=", 1)[1] for a in argv if a.startswith("Account="))
            default = next((u["default_account"] for u in state["users"] if u["name"] == name), account)
            state["users"].append({"name": name, "account": account, "default_account": default})
            open(os.environ["FAKE_SACCTMGR_STATE"], "w").write(json.dumps(state))
        return 0  # any other change: accepted, not applied
    args = argv[argv.index("show") + 1:]
    entity, where, fmt = args[0], {}, []
    for a in args[1:]:
        if a.startswith("format="):
            fmt = a.split("=", 1)[1].split(",")
        elif "=" in a:
            k, v = a.split("=", 1)
            where[k] = v
    rows: list[list[str]] = []
    if entity == "cluster":
        rows = [[state["cluster"]]] if where.get("name") in (None, state["cluster"]) else []
    elif entity == "qos":
        for q in state["qos"]:
            if "name" in where and where["name"] != q["name"]:
                continue
            row = {"name": q["name"], "description": q["description"], "priority": str(q["priority"]),
                   "grptres": _tres(q["grp_tres"]), "preempt": ",".join(q["preempt"]),
                   "preemptmode": (q["preempt_mode"] or "cluster").lower(), "flags": ",".join(q["flags"])}
            rows.append([row[f] for f in fmt])
    elif entity == "account":
        for a in state["accounts"]:
            if where.get("name", a["name"]) == a["name"]:
                row = {"account": a["name"], "description": a["description"], "organization": a["organization"].lower()}
                rows.append([row[f] for f in fmt])
    elif entity == "user":
        users = {u["name"]: u["default_account"] for u in state["users"]}
        for name, default in sorted(users.items()):
            if where.get("name", name) == name:
                rows.append([{"user": name, "defaultaccount": default}[f] for f in fmt])
    elif entity == "assoc":
        accounts = {a["name"]: a for a in state["accounts"]}
        for a in state["accounts"]:
            if "user" in where or where.get("account", a["name"]) != a["name"]:
                continue
            row = {"account": a["name"], "user": "", "parentname": a["parent"], "fairshare": str(a["fairshare"]),
                   "grptres": _tres(a["grp_tres"]), "grpjobs": "" if a["grp_jobs"] is None else str(a["grp_jobs"]),
                   "qos": ",".join(a["qos"]), "defaultqos": a["default_qos"] or ""}
            rows.append([row[f] for f in fmt])
        for u in state["users"]:
            if where.get("account", u["account"]) != u["account"] or where.get("user", u["name"]) != u["name"]:
                continue
            parent = accounts.get(u["account"], {})
            row = {"account": u["account"], "user": u["name"], "parentname": "", "fairshare": "1", "grptres": "",
                   "grpjobs": "", "qos": ",".join(parent.get("qos", ())), "defaultqos": parent.get("default_qos") or ""}
            rows.append([row[f] for f in fmt])
    sys.stdout.write("".join("|".join(r) + "\n" for r in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
