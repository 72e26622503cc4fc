"""Byte-stream layouts between the tester's blocks and the MAC (one byte per clock).

Amaranth 0.5 streams carry no packet boundaries, so ``first``/``last`` travel in the payload.
"""

from amaranth.lib import data, stream

__all__ = ["TxByte", "RxByte", "TxStream", "RxStream"]

#: A byte towards the MAC transmitter (frame without FCS: the MAC appends it).
TxByte = data.StructLayout({"data": 8, "first": 1, "last": 1})
#: A byte from the MAC receiver (FCS stripped); ``error`` on the last byte flags a bad FCS.
RxByte = data.StructLayout({"data": 8, "first": 1, "last": 1, "error": 1})

TxStream = stream.Signature(TxByte)
RxStream = stream.Signature(RxByte, always_ready=True)
