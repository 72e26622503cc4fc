// Example DUT for `wirespeed rfc2544 --dut-rtl` (interface in docs/dut-rtl.md): a two-port
// bit-forwarding device that passes every GMII symbol from port a to port b and back after
// exactly DELAY clock cycles (a pipeline of registers), like a cut-through repeater.
module pipe_dut #(parameter DELAY = 12) (
    input clk, input rst,
    input a_rx_dv, input a_rx_er, input [7:0] a_rxd,
    output a_tx_en, output a_tx_er, output [7:0] a_txd,
    input b_rx_dv, input b_rx_er, input [7:0] b_rxd,
    output b_tx_en, output b_tx_er, output [7:0] b_txd
);
    reg [9:0] ab [0:DELAY-1];
    reg [9:0] ba [0:DELAY-1];
    integer i;
    always @(posedge clk) begin
        if (rst) begin
            for (i = 0; i < DELAY; i = i + 1) begin
                ab[i] <= 10'd0;
                ba[i] <= 10'd0;
            end
        end else begin
            ab[0] <= {a_rx_dv, a_rx_er, a_rxd};
            ba[0] <= {b_rx_dv, b_rx_er, b_rxd};
            for (i = 1; i < DELAY; i = i + 1) begin
                ab[i] <= ab[i-1];
                ba[i] <= ba[i-1];
            end
        end
    end
    assign {b_tx_en, b_tx_er, b_txd} = ab[DELAY-1];
    assign {a_tx_en, a_tx_er, a_txd} = ba[DELAY-1];
endmodule
