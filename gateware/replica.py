"""Register replicas: copies of one register that synthesis keeps apart.

A register with many loads across the part (a port's CLEAR, which resets a thousand
flip-flops in five blocks) is slow because of its routing, not its logic: the cure is one
copy per block, each placed beside its loads. Synthesis undoes plain copies: yosys merges
flip-flops with the same inputs into one (``opt_merge``), and nextpnr does not replicate.

:func:`replica` makes a signal whose register synthesis keeps: it carries the attribute
:data:`REPLICA_ATTR`, and the board build runs :data:`YOSYS_KEEP_REPLICAS` after reading the
design, which sets ``keep`` on the flip-flop cell that drives such a signal (yosys does not
merge two cells that both have ``keep``). Simulation is unaffected: a replica is an ordinary
register.
"""

from amaranth import Signal

__all__ = ["REPLICA_ATTR", "YOSYS_KEEP_REPLICAS", "replica", "replicas"]

#: attribute of a signal whose register is a replica (carried into the RTLIL as is)
REPLICA_ATTR = "ws_replica"
#: yosys commands, after ``read_rtlil``: ``keep`` on every flip-flop whose Q drives a replica
YOSYS_KEEP_REPLICAS = f"setattr -set keep 1 a:{REPLICA_ATTR} %ci1:+[Q] t:$dff t:$adff %u %i"


def replica(shape=1, *, name, init=0):
    """A signal to be assigned in a sync domain; its flip-flops are never merged with an equal
    register's."""
    return Signal(shape, name=name, init=init, attrs={REPLICA_ATTR: 1})


def replicas(m, domain, value, names, *, prefix):
    """One registered copy of ``value`` in ``domain`` for each of ``names`` (a block each):
    ``{name: Signal}``, all one clock after ``value``."""
    copies = {}
    for name in names:
        copies[name] = sig = replica(len(value), name=f"{prefix}_{name}")
        m.d[domain] += sig.eq(value)
    return copies
