#!/usr/bin/env python3
"""Summarizes `ncu --csv --page raw --metrics gpu__time_duration.sum` over one decode step's
graph (PAGODA_PROFILE_REPLAY, ncu --graph-profiling node): each kernel timed alone, in launch
order, then grouped by kernel. The sum is the step with every kernel serialized: set beside the
step's measured time it says how much the kernels overlap (programmatic dependent launch) or
leave gaps. Usage: ncu_step.py ncu.csv"""
import csv
import re
import sys
from collections import OrderedDict


def short(name):
    name = name.replace("(anonymous namespace)::", "").replace("pagoda::cuda::", "")
    name = re.sub(r"\(.*", "", name)  # drop the argument list
    name = re.sub(r"^void ", "", name)
    return name[:90]


def main(path):
    lines = [l for l in open(path, errors="replace") if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    kernels = []
    for r in rows:
        if not r.get("ID", "").isdigit():
            continue  # the units row
        value = float(r["gpu__time_duration.sum"].replace(",", ""))
        kernels.append((short(r["Kernel Name"]), value / 1000.0))  # ns -> us
    if not kernels:
        print("no kernels in", path)
        return
    groups = OrderedDict()
    for name, us in kernels:
        count, total = groups.get(name, (0, 0.0))
        groups[name] = (count + 1, total + us)
    print(f"{len(kernels)} kernels, {sum(us for _, us in kernels):.1f} us serialized")
    for name, (count, total) in sorted(groups.items(), key=lambda kv: -kv[1][1]):
        print(f"{total:9.1f} us  {count:4d} x {total / count:7.2f} us  {name}")
    print("first 16 in launch order:")
    for name, us in kernels[:16]:
        print(f"  {us:7.2f} us  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
