"""RFC 2544 on a tester: plans (:mod:`.plan`), runs (:mod:`.run`) and their events
(:mod:`.events`), the registry of tests (:mod:`.registry`, one module per test in
:mod:`.suite`) and the searches they use (:mod:`.search`)."""
