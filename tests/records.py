"""Reading a results.json (format 2) in tests: each test's entry by name."""


def names(record):
    """The run's tests, in order."""
    return [entry["name"] for entry in record["tests"]]


def entry(record, test):
    return next(e for e in record["tests"] if e["name"] == test)


def parameters(record, test):
    return entry(record, test)["parameters"]


def results(record, test):
    """The test's results (one per frame size; the reset test: one); [] when it did not run."""
    return next((e["results"] for e in record["tests"] if e["name"] == test), [])


def snmp(record, group):
    """One group of the Linux DUT's /proc/net/snmp in ``dut_state`` (a line of names, then a
    line of values): name -> value."""
    text = record["dut_state"]["snmp"]
    names, values = [line.split()[1:] for line in text.splitlines() if line.startswith(f"{group}:")][:2]
    return dict(zip(names, map(int, values), strict=True))
