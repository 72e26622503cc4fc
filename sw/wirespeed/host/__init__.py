"""The tester seen from the host: connecting (:mod:`.tester`), registers, commands and trials,
over a transport (Etherbone over UDP, or over a serial line)."""
