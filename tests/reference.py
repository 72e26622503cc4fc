"""The command line's run that the Python API's and the web page's runs are compared with:
docs/api.md's example plan."""

DUT = "router:rate=400k,queue=256,latency=20us"
SIZES = "64,1518"
ARGS = ("rfc2544", "--tests", "throughput", "--sizes", SIZES, "--dut", DUT)
