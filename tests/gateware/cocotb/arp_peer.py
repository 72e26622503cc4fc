"""An ARP peer on a tester port's GMII pins (cocotbext-eth, scapy), shared by the tester's
and the board builds' cocotb tests."""

from cocotb.triggers import Timer
from cocotbext.eth import GmiiFrame, GmiiSink, GmiiSource
from scapy.layers.l2 import ARP, Ether

PEER_MAC, PEER_IP = "02:aa:bb:cc:dd:ee", "254"


async def check_arp_reply(dut, bus, port, mac, ipv4):
    """Give port ``port`` the addresses ``mac`` ("02:..") and ``ipv4`` (dotted) and answering
    of ARP; a request for another address of its /24 gets nothing, one for ``ipv4`` an RFC 826
    reply on the port's own transmit pins; the port counts (live) one request and one reply."""
    p = f"p{port}"
    src = GmiiSource(getattr(dut, f"{p}_gmii_rxd"), getattr(dut, f"{p}_gmii_rx_er"),
                     getattr(dut, f"{p}_gmii_rx_dv"), dut.clk, dut.rst)
    sink = GmiiSink(getattr(dut, f"{p}_gmii_txd"), getattr(dut, f"{p}_gmii_tx_er"),
                    getattr(dut, f"{p}_gmii_tx_en"), dut.clk, dut.rst)
    await bus.write(f"{p}.arp.mac", int(mac.replace(":", ""), 16))
    await bus.write(f"{p}.arp.ipv4", int.from_bytes(bytes(int(x) for x in ipv4.split(".")), "big"))
    await bus.write(f"{p}.arp.enable", 1)
    net = ipv4.rsplit(".", 1)[0]
    peer_ip = f"{net}.{PEER_IP}"
    for target in (f"{net}.99", ipv4):
        req = Ether(dst="ff:ff:ff:ff:ff:ff", src=PEER_MAC) / ARP(op=1, hwsrc=PEER_MAC, psrc=peer_ip, pdst=target)
        await src.send(GmiiFrame.from_payload(bytes(req).ljust(60, b"\0")))
    reply = await sink.recv()
    assert reply.check_fcs()
    pkt = Ether(bytes(reply.get_payload()))
    assert pkt.dst == PEER_MAC and pkt.src == mac
    assert (pkt[ARP].op, pkt[ARP].hwsrc, pkt[ARP].psrc, pkt[ARP].hwdst, pkt[ARP].pdst) == \
        (2, mac, ipv4, PEER_MAC, peer_ip)
    await Timer(2000, unit="ns")
    assert sink.empty(), "a reply to a request for another address"
    assert await bus.read(f"{p}.arp.arp_requests") == 1 and await bus.read(f"{p}.arp.arp_replies") == 1
