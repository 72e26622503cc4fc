// Test fixture for the simulation harness (NOT the tester): a module with the ports of
// wirespeed_sim_top (docs/architecture.md) that lets tests exercise the harness end to end.
//
// CSR word addresses:
//   0x000-0xEFF  plain 32-bit read/write storage (reset does not clear it)
//   0xF00 + 0x10*p  port p generator: write {count[15:0], len[15:0]} sends `count` frames
//                   (0 means 1) of `len` bytes after a 7x0x55+0xD5 preamble, byte i = i & 0xFF,
//                   12 idle cycles apart; read: cycle at which tx_en rose for the last frame
//   0xF01 + 0x10*p  read: generator busy
//   0xF02 + 0x10*p  read: frames received on port p (rx_dv rising edges)
//   0xF03 + 0x10*p  read: cycle at which rx_dv rose for the last received frame
//   0xF04 + 0x10*p  read: sum of rxd over all cycles with rx_dv
//   0xF05 + 0x10*p  read: cycles with rx_er
//   0xF20           read: cycle counter (cycles since reset was released)
// csr_r_data is registered at the edge that samples csr_r_stb (the harness reads it
// READ_LATENCY edges later, as the tester's protocol allows), held until the next read.
module fixture_port (
    input             clk,
    input             rst,
    input             start,
    input      [15:0] start_len,
    input      [15:0] start_count,
    input      [31:0] cycle,
    output reg        tx_en,
    output reg [7:0]  txd,
    input             rx_dv,
    input             rx_er,
    input      [7:0]  rxd,
    output reg [31:0] tx_start_cycle,
    output            busy,
    output reg [31:0] rx_frames,
    output reg [31:0] rx_start_cycle,
    output reg [31:0] rx_sum,
    output reg [31:0] rx_er_cycles
);
    reg [15:0] len, frames_left, pos;
    reg [4:0]  gap;
    reg        prev_dv;
    assign busy = frames_left != 0;

    always @(posedge clk) begin
        if (rst) begin
            frames_left <= 0; pos <= 0; gap <= 0; tx_en <= 0; txd <= 0;
            tx_start_cycle <= 0;
            rx_frames <= 0; rx_start_cycle <= 0; rx_sum <= 0; rx_er_cycles <= 0; prev_dv <= 0;
        end else begin
            if (start && frames_left == 0) begin
                len <= start_len;
                frames_left <= (start_count == 0) ? 16'd1 : start_count;
                pos <= 0;
                gap <= 0;
            end else if (frames_left != 0) begin
                if (gap != 0) begin
                    gap <= gap - 1'b1;
                    tx_en <= 0;
                    txd <= 0;
                end else if (pos < len + 16'd8) begin
                    if (pos == 0) tx_start_cycle <= cycle;
                    tx_en <= 1;
                    txd <= (pos < 7) ? 8'h55 : (pos == 7) ? 8'hD5 : pos[7:0] - 8'd8;
                    pos <= pos + 1'b1;
                end else begin
                    tx_en <= 0;
                    txd <= 0;
                    pos <= 0;
                    gap <= 5'd11;  // this idle cycle + 11 more = 12 idle cycles
                    frames_left <= frames_left - 1'b1;
                end
            end
            prev_dv <= rx_dv;
            if (rx_dv && !prev_dv) begin
                rx_frames <= rx_frames + 1;
                rx_start_cycle <= cycle;
            end
            if (rx_dv) rx_sum <= rx_sum + rxd;
            if (rx_er) rx_er_cycles <= rx_er_cycles + 1;
        end
    end
endmodule

module wirespeed_sim_top (
    input             clk,
    input             rst,
    output            p0_gmii_tx_en,
    output            p0_gmii_tx_er,
    output     [7:0]  p0_gmii_txd,
    input             p0_gmii_rx_dv,
    input             p0_gmii_rx_er,
    input      [7:0]  p0_gmii_rxd,
    output            p1_gmii_tx_en,
    output            p1_gmii_tx_er,
    output     [7:0]  p1_gmii_txd,
    input             p1_gmii_rx_dv,
    input             p1_gmii_rx_er,
    input      [7:0]  p1_gmii_rxd,
    input      [15:0] csr_addr,
    input             csr_r_stb,
    output reg [31:0] csr_r_data,
    input             csr_w_stb,
    input      [31:0] csr_w_data
);
    reg [31:0] mem [0:3839];
    reg [31:0] cycle;

    wire        start0 = csr_w_stb && csr_addr == 12'hF00;
    wire        start1 = csr_w_stb && csr_addr == 12'hF10;
    wire [31:0] tx_start0, tx_start1, rx_frames0, rx_frames1, rx_start0, rx_start1;
    wire [31:0] rx_sum0, rx_sum1, rx_er0, rx_er1;
    wire        busy0, busy1;

    assign p0_gmii_tx_er = 1'b0;
    assign p1_gmii_tx_er = 1'b0;

    fixture_port port0 (
        .clk(clk), .rst(rst), .start(start0), .start_len(csr_w_data[15:0]),
        .start_count(csr_w_data[31:16]), .cycle(cycle),
        .tx_en(p0_gmii_tx_en), .txd(p0_gmii_txd),
        .rx_dv(p0_gmii_rx_dv), .rx_er(p0_gmii_rx_er), .rxd(p0_gmii_rxd),
        .tx_start_cycle(tx_start0), .busy(busy0), .rx_frames(rx_frames0),
        .rx_start_cycle(rx_start0), .rx_sum(rx_sum0), .rx_er_cycles(rx_er0));
    fixture_port port1 (
        .clk(clk), .rst(rst), .start(start1), .start_len(csr_w_data[15:0]),
        .start_count(csr_w_data[31:16]), .cycle(cycle),
        .tx_en(p1_gmii_tx_en), .txd(p1_gmii_txd),
        .rx_dv(p1_gmii_rx_dv), .rx_er(p1_gmii_rx_er), .rxd(p1_gmii_rxd),
        .tx_start_cycle(tx_start1), .busy(busy1), .rx_frames(rx_frames1),
        .rx_start_cycle(rx_start1), .rx_sum(rx_sum1), .rx_er_cycles(rx_er1));

    always @(posedge clk) begin
        cycle <= rst ? 32'd0 : cycle + 1;
        if (csr_w_stb && csr_addr < 12'hF00) mem[csr_addr] <= csr_w_data;
        if (csr_r_stb) begin
            case (csr_addr)
                12'hF00: csr_r_data <= tx_start0;
                12'hF01: csr_r_data <= {31'd0, busy0};
                12'hF02: csr_r_data <= rx_frames0;
                12'hF03: csr_r_data <= rx_start0;
                12'hF04: csr_r_data <= rx_sum0;
                12'hF05: csr_r_data <= rx_er0;
                12'hF10: csr_r_data <= tx_start1;
                12'hF11: csr_r_data <= {31'd0, busy1};
                12'hF12: csr_r_data <= rx_frames1;
                12'hF13: csr_r_data <= rx_start1;
                12'hF14: csr_r_data <= rx_sum1;
                12'hF15: csr_r_data <= rx_er1;
                12'hF20: csr_r_data <= cycle;
                default: csr_r_data <= (csr_addr < 12'hF00) ? mem[csr_addr] : 32'd0;
            endcase
        end
    end
endmodule
