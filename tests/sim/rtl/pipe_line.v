// One direction of pipe_dut: a GMII symbol (dv/en, er, 8 data bits) through DELAY registers.
module pipe_line #(parameter DELAY = 1) (
    input clk, input rst,
    input [9:0] in,
    output [9:0] out
);
    reg [9:0] stage [0:DELAY-1];
    integer i;
    always @(posedge clk) begin
        if (rst) begin
            for (i = 0; i < DELAY; i = i + 1)
                stage[i] <= 10'd0;
        end else begin
            stage[0] <= in;
            for (i = 1; i < DELAY; i = i + 1)
                stage[i] <= stage[i-1];
        end
    end
    assign out = stage[DELAY-1];
endmodule
