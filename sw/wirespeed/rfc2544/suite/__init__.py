"""The RFC 2544 tests, one module each; every module here registers its test
(:mod:`wirespeed.rfc2544.registry`) when imported, and the registry imports them all."""
