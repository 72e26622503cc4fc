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
