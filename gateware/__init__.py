"""wirespeed gateware: Amaranth components of the tester, its register declaration and the
build-time export of the LiteEth MAC. See docs/architecture.md."""
