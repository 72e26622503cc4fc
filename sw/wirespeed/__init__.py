"""wirespeed: FPGA gigabit Ethernet RFC 2544 tester, host software."""

__version__ = "0.1.0"
