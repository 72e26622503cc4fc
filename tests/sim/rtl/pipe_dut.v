// Example DUT for `wirespeed rfc2544 --dut-rtl` (interface in docs/dut-rtl.md): a two-port
// bit-forwarding device that passes every GMII symbol from port a to port b and back after
// exactly DELAY clock cycles (a pipeline of registers), like a cut-through repeater. A design
// of three files: this one, pipe_line.v and include/pipe_dut.vh (--dut-rtl pipe_line.v
// --dut-rtl pipe_dut.v --dut-rtl-include include).
`include "pipe_dut.vh"

module pipe_dut #(parameter DELAY = `PIPE_DELAY) (
    input clk, input rst,
    input a_rx_dv, input a_rx_er, input [7:0] a_rxd,
    output a_tx_en, output a_tx_er, output [7:0] a_txd,
    input b_rx_dv, input b_rx_er, input [7:0] b_rxd,
    output b_tx_en, output b_tx_er, output [7:0] b_txd
);
    pipe_line #(.DELAY(DELAY)) ab (.clk(clk), .rst(rst), .in({a_rx_dv, a_rx_er, a_rxd}),
                                   .out({b_tx_en, b_tx_er, b_txd}));
    pipe_line #(.DELAY(DELAY)) ba (.clk(clk), .rst(rst), .in({b_rx_dv, b_rx_er, b_rxd}),
                                   .out({a_tx_en, a_tx_er, a_txd}));
endmodule
