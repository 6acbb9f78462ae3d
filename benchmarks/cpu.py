"""CPU time from `/proc`: a server's (its process group), the load generator's, and the whole machine's.

A server's CPU time per call is the figure `make bench` judges by: a load generator on the same two
cores, or another busy process, slows the calls down but does not make each one cost more CPU.
"""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(group: int) -> float:
    """User + system CPU seconds of every live process of process group `group` (a server and its workers)."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # exited meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
        if int(fields[2]) == group:  # field 5 of stat(5): pgrp
            total += int(fields[11]) + int(fields[12])  # fields 14 and 15: utime, stime
    return total / TICK


def machine_busy_seconds() -> float:
    """CPU seconds every core spent on anything but idle and iowait since boot (`/proc/stat`)."""
    values = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / TICK


def own_and_children_seconds() -> float:
    """CPU seconds of this process and of its children that have been waited for (wrk, once it exits)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


@dataclass(frozen=True)
class Reading:
    """The three clocks at one instant."""

    server: float
    generator: float
    machine: float

    @classmethod
    def now(cls, group: int) -> Reading:
        return cls(group_cpu_seconds(group), own_and_children_seconds(), machine_busy_seconds())


@dataclass(frozen=True)
class Spent:
    """CPU seconds spent between two readings: by the server, by the load generator, by everything else."""

    server: float
    generator: float
    others: float

    @classmethod
    def between(cls, before: Reading, after: Reading) -> Spent:
        server, generator = after.server - before.server, after.generator - before.generator
        return cls(server, generator, max(0.0, after.machine - before.machine - server - generator))
