"""The host package has no import cycle (import-linter, run by CI, checks the layers)."""

import grimp

OUTSIDE = ("wirespeed.gateware", "wirespeed.sim", "wirespeed.hw")


def test_no_import_cycle():
    graph = grimp.build_graph("wirespeed", exclude_type_checking_imports=True)
    host = sorted(m for m in graph.modules if not m.startswith(OUTSIDE))
    cycles = []
    for module in host:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported in host and (chain := graph.find_shortest_chain(importer=imported, imported=module)):
                cycles.append(" -> ".join((module, *chain)))
    assert not cycles, "\n".join(cycles)
