// The delay of pipe_dut, in clock cycles: a header in an include folder, so that the example
// is a design of several files (docs/dut-rtl.md).
`define PIPE_DELAY 12
